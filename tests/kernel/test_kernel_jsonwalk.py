"""``JsonWalk`` (``zagent.agentkit.partialjson``): the scan of JSON structure outside strings, behind ``json_depth``
and streaming's ``partial_object``."""

import msgspec
from hypothesis import given, settings, strategies as st

from zagent._trust.limits import json_depth
from zagent.agentkit.partialjson import JsonWalk

tricky_text = st.text(alphabet='ab"\\[]{},:', max_size=12)
values = st.recursive(
    st.none() | st.integers(-5, 5) | tricky_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(tricky_text, inner, max_size=3),
    max_leaves=15)


def _depth(value):
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


@settings(max_examples=200, deadline=None)
@given(values)
def test_json_depth_is_the_nesting_of_the_value_whatever_its_strings_hold(value):
    """Brackets, quotes and backslashes inside strings never count: the depth is the value's nesting."""
    assert json_depth(msgspec.json.encode(value).decode()) == _depth(value)


@settings(max_examples=200, deadline=None)
@given(values)
def test_the_walk_yields_only_structure_outside_strings(value):
    """Removing every string from the encoded value leaves exactly the characters the walk yields."""
    text = msgspec.json.encode(value).decode()
    yielded = "".join(ch for _i, ch in JsonWalk(text))
    stripped = msgspec.json.encode(_without_strings(value)).decode()
    assert yielded == "".join(ch for ch in stripped if ch in "[]{},")


def _without_strings(value):
    if isinstance(value, list):
        return [_without_strings(v) for v in value]
    if isinstance(value, dict):
        return {str(i): _without_strings(v) for i, v in enumerate(value.values())}
    return 0


def test_a_walk_cut_inside_a_string_says_so_and_after_a_backslash_too():
    """A text that stops inside a string, or right after a backslash in one, is reported as such."""
    walk = JsonWalk('{"a": "x')
    assert list(walk) == [(0, "{")] and walk.in_string and not walk.escaped
    walk = JsonWalk('{"a": "x\\')
    list(walk)
    assert walk.in_string and walk.escaped
    walk = JsonWalk('{"a": "x\\""}')
    assert [ch for _i, ch in walk] == ["{", "}"] and not walk.in_string


def test_json_depth_stops_counting_at_stop():
    """A text nested far deeper than ``stop`` is counted only up to ``stop``."""
    assert json_depth("[" * 10_000, stop=7) == 7
