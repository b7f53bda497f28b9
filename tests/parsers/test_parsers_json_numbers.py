"""json mode: numbers too large for a float are reported as out of range for their field, not as 'no JSON'."""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from parsers_strategies import NAMES
from zagent import ParseError

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
BIG = st.builds(lambda sign, m, e: f"{sign}{m}e{e}", st.sampled_from(["", "-"]),
                st.sampled_from(["1", "9.99", "2.5"]), st.integers(309, 10**6))


def test_out_of_range_number_names_the_field(kernel):
    """{"n": 1e400} is a ParseError saying field n holds a number out of range, with invalid={'n': ...}."""
    with pytest.raises(ParseError, match=r"n: the number 1e400 is out of range") as info:
        kernel.parser("json").parse('{"n": 1e400}', [{"name": "n", "type": "number"}])
    assert list(info.value.invalid) == ["n"]
    assert "no JSON object" not in str(info.value)


@SETTINGS
@given(name=st.sampled_from(NAMES), literal=BIG, kind=st.sampled_from(["number", "integer", "array", "object"]))
def test_any_too_large_number_is_reported_for_its_field(kernel, name, literal, kind):
    """A number with no finite float value, at any depth of a non-string field, is reported for that field."""
    assert math.isinf(float(literal))
    value = {"array": f"[1, {literal}]", "object": f'{{"a": {literal}}}'}.get(kind, literal)
    text = f'Here you go:\n{{"{name}": {value}, "other": 1}}'
    with pytest.raises(ParseError, match="out of range") as info:
        kernel.parser("json").parse(text, [{"name": name, "type": kind}])
    assert list(info.value.invalid) == [name]


@SETTINGS
@given(literal=BIG)
def test_a_string_field_keeps_a_too_large_number_as_text(kernel, literal):
    """A string field given 1e400 gets the text '1e400', as any other number is written as its text."""
    assert kernel.parser("json").parse(f'{{"s": {literal}}}', ["s"]) == {"s": literal}


def test_too_large_number_in_an_undeclared_key_is_ignored(kernel):
    """Extra keys are ignored even when they hold a number out of range."""
    got = kernel.parser("json").parse('{"a": 1, "extra": 1e400}', [{"name": "a", "type": "int"}])
    assert got == {"a": 1}


def test_a_too_small_number_is_zero(kernel):
    """1e-400 underflows to 0.0, as in any JSON decoder; it is not an error."""
    assert kernel.parser("json").parse('{"n": 1e-400}', [{"name": "n", "type": "number"}]) == {"n": 0.0}
