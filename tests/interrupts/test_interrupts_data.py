"""Questions and answers are JSON data: any JSON value passes through unchanged, anything else is refused."""

import pytest
from hypothesis import given, strategies as st

from zagent.agentkit.interrupts import Asking, as_data
from zagent.errors import ConfigError, Interrupted

JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.text(),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                    max_leaves=20)


@given(JSON)
def test_any_json_value_is_kept_as_it_is(value):
    """as_data returns a JSON value unchanged (text with lone surrogates aside, which check_data refuses)."""
    try:
        assert as_data(value) == value
    except ConfigError as exc:
        assert "surrogate" in str(exc)


@pytest.mark.parametrize("value", [object(), {1, 2}, lambda: 1, {"k": b"bytes"}])
def test_what_is_not_json_data_is_refused(value):
    """An object, a set, a function or bytes is a ConfigError saying an answer must be JSON data."""
    with pytest.raises(ConfigError, match="must be JSON data"):
        as_data(value)


def test_answers_are_matched_to_interrupts_by_position():
    """A scope returns its answers in order, then raises Interrupted for the first question left."""
    scope = Asking(["a", "b"], node="n")
    assert [scope.ask("1?"), scope.ask("2?")] == ["a", "b"]
    with pytest.raises(Interrupted) as err:
        scope.ask("3?")
    assert (err.value.interrupt.question, err.value.interrupt.index, err.value.interrupt.node) == ("3?", 2, "n")
    assert scope.asked is err.value.interrupt
