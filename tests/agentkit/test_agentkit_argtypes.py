"""Text tool-call arguments converted to the tool schema's types, laxly, as native calls are."""

from hypothesis import given
from hypothesis import strategies as st
from zagent.agentkit.argtypes import coerce

SCHEMA = {"type": "object", "properties": {
    "n": {"type": "integer"}, "x": {"type": "number"}, "ok": {"type": "boolean"}, "s": {"type": "string"},
    "tags": {"type": "array", "items": {"type": "integer"}}, "opts": {"type": "object"}}}


def test_text_values_become_the_schema_types():
    """"42" for an integer, "2.5" for a number, "true" for a boolean, 7 for a string, JSON text for array/object."""
    out = coerce({"n": "42", "x": "2.5", "ok": "true", "s": 7, "tags": '["1", 2]', "opts": '{"a": 1}'}, SCHEMA)
    assert out == {"n": 42, "x": 2.5, "ok": True, "s": "7", "tags": [1, 2], "opts": {"a": 1}}


def test_values_that_do_not_convert_are_kept():
    """"3.5" for an integer and "maybe" for a boolean stay as sent: validation tells the model, nothing is guessed."""
    assert coerce({"n": "3.5", "ok": "maybe", "extra": "1"}, SCHEMA) == {"n": "3.5", "ok": "maybe", "extra": "1"}


@given(args=st.dictionaries(st.sampled_from(["n", "x", "ok", "s", "tags", "opts", "other"]),
                            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
                            | st.lists(st.text(max_size=3), max_size=3)))
def test_coerce_never_raises_and_keeps_every_key(args):
    """Any arguments: no exception, the same keys come back."""
    assert set(coerce(args, SCHEMA)) == set(args)
