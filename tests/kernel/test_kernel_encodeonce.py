"""zagent.encodeonce.encoded_once: a spec's wire form is built once per spec object, in a bounded cache."""

import json

from zagent.providerkit import encoded_once
from zagent.types import ToolSpec


def test_one_build_per_spec_object_and_equal_specs_are_distinct():
    """The same spec object is built once; another object (even an equal one) gets its own build."""
    built = []

    def build(spec):
        built.append(spec.name)
        return {"name": spec.name}

    encode = encoded_once(build)
    a, b = ToolSpec(name="a", description="", parameters={}), ToolSpec(name="a", description="", parameters={})
    assert encode(a) is encode(a)
    assert json.loads(bytes(encode(b))) == {"name": "a"}
    assert built == ["a", "a"]


def test_the_cache_is_bounded():
    """Past ``limit`` entries the cache starts over, so specs made per request cannot grow it forever."""
    built = []
    encode = encoded_once(lambda s: built.append(s) or {}, limit=2)
    specs = [ToolSpec(name=f"t{i}", description="", parameters={}) for i in range(3)]
    for s in specs:
        encode(s)
    encode(specs[0])  # evicted when the third spec arrived
    assert len(built) == 4
