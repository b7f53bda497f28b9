"""title and xml modes: an untyped array or object field holding a whole number no 64-bit type holds is a
ParseError for that field, as in json mode (it used to pass, and failed later where the value was encoded)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from zagent import ParseError

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
HUGE = st.one_of(st.integers(2**64, 10**40), st.integers(-10**40, -2**63 - 1))
FITS = st.integers(-2**63, 2**64 - 1)


def _reply(mode, name, body):
    return f"## {name}\n{body}\n" if mode == "title" else f"<{name}>{body}</{name}>"


def _body(kind, number):
    return f"[1, [2, {number}]]" if kind == "array" else f'{{"a": {{"b": [{number}]}}}}'


@SETTINGS
@given(mode=st.sampled_from(["title", "xml"]), kind=st.sampled_from(["array", "object"]), number=HUGE)
def test_a_huge_whole_number_in_an_untyped_field_is_reported_for_it(kernel, mode, kind, number):
    """A whole number outside -2**63..2**64-1 at any depth of an untyped array/object field: ParseError whose
    invalid names that field and says the number is out of range."""
    with pytest.raises(ParseError, match="out of range") as info:
        kernel.parser(mode).parse(_reply(mode, "data", _body(kind, number)), [{"name": "data", "type": kind}])
    assert list(info.value.invalid) == ["data"]


@SETTINGS
@given(mode=st.sampled_from(["title", "xml"]), kind=st.sampled_from(["array", "object"]), number=FITS)
def test_a_whole_number_a_64_bit_type_holds_is_kept(kernel, mode, kind, number):
    """The same field holding a number inside the range parses to the decoded value, number unchanged."""
    got = kernel.parser(mode).parse(_reply(mode, "data", _body(kind, number)), [{"name": "data", "type": kind}])
    assert got == {"data": [1, [2, number]] if kind == "array" else {"a": {"b": [number]}}}
