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


def test_messages_once_encodes_each_message_once_and_again_when_a_field_is_replaced():
    """A message resent on every step is built once; giving it new content or tool calls builds it again."""
    from zagent import Message, ToolCall
    from zagent.providerkit import messages_once

    built = []

    def build(m):
        built.append(m)
        return {"role": m.role, "content": m.content, "calls": [c.name for c in m.tool_calls]}

    encode = messages_once(build)
    m = Message(role="user", content="hi")
    assert bytes(encode(m)) == b'{"role":"user","content":"hi","calls":[]}'
    assert bytes(encode(m)) == b'{"role":"user","content":"hi","calls":[]}'
    assert len(built) == 1
    m.content = "changed"
    assert bytes(encode(m)) == b'{"role":"user","content":"changed","calls":[]}'
    m.tool_calls = [ToolCall(id="c", name="add", arguments={})]
    assert bytes(encode(m)) == b'{"role":"user","content":"changed","calls":["add"]}'
    assert len(built) == 3


def test_messages_once_encodes_again_when_any_other_field_is_replaced():
    """A message given a new name, tool_call_id or role is built again, not sent with its old bytes."""
    from zagent import Message
    from zagent.providerkit import messages_once

    encode = messages_once(lambda m: {"role": m.role, "name": m.name, "id": m.tool_call_id})
    m = Message(role="tool", content="5", tool_call_id="a", name="add")
    assert bytes(encode(m)) == b'{"role":"tool","name":"add","id":"a"}'
    m.tool_call_id = "b"
    assert bytes(encode(m)) == b'{"role":"tool","name":"add","id":"b"}'
    m.name = "plus"
    assert bytes(encode(m)) == b'{"role":"tool","name":"plus","id":"b"}'
    m.role = "user"
    assert bytes(encode(m)) == b'{"role":"user","name":"plus","id":"b"}'


def test_messages_once_cache_is_bounded():
    """Past ``limit`` messages the cache starts over, so it keeps at most that many alive."""
    from zagent import Message
    from zagent.providerkit import messages_once

    encode = messages_once(lambda m: {"content": m.content}, limit=3)
    kept = [Message(role="user", content=str(i)) for i in range(10)]
    for m in kept:
        encode(m)
    cache = next(c.cell_contents for c in encode.__closure__ if isinstance(c.cell_contents, dict))
    assert len(cache) <= 3
