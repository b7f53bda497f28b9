"""Property tests: render -> parse gives the values back, in every mode, for arbitrary field specs."""

import msgspec
import pytest
from hypothesis import HealthCheck, assume, given, settings
from parsers_strategies import (
    ANY_TEXT,
    TITLE_TEXT,
    expected,
    specs_and_values,
    title_line_clash,
)

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(case=specs_and_values(text=ANY_TEXT))
def test_json_round_trip(kernel, case):
    """json: parse(render(values)) == values for any field spec and any text."""
    fields, values = case
    p = kernel.parser("json")
    assert p.parse(p.render(values, fields), fields) == expected(fields, values)


@SETTINGS
@given(case=specs_and_values(text=ANY_TEXT))
def test_json_fenced_round_trip(kernel, case):
    """json: a fenced rendering parses back the same."""
    fields, values = case
    p = kernel.parser("json")
    assert p.parse(p.render(values, fields, fence=True), fields) == expected(fields, values)


@SETTINGS
@given(case=specs_and_values(text=ANY_TEXT))
def test_xml_round_trip(kernel, case):
    """xml: markup, ampersands, CDATA terminators and edge whitespace in values survive the round trip."""
    fields, values = case
    p = kernel.parser("xml")
    assert p.parse(p.render(values, fields), fields) == expected(fields, values)


@SETTINGS
@given(case=specs_and_values(text=TITLE_TEXT))
def test_title_round_trip(kernel, case):
    """title: section values come back whole (values are stripped text without title-like lines)."""
    fields, values = case
    assume(not any(isinstance(v, str) and title_line_clash(v, [f["name"] for f in fields]) for v in values.values()))
    p = kernel.parser("title")
    assert p.parse(p.render(values, fields), fields) == expected(fields, values)


@SETTINGS
@given(case=specs_and_values(text=TITLE_TEXT))
def test_title_round_trip_custom_format(kernel, case):
    """title: a configured title_format round-trips too."""
    fields, values = case
    assume(not any(isinstance(v, str) and title_line_clash(v, [f["name"] for f in fields]) for v in values.values()))
    p = kernel.parser("title")
    text = p.render(values, fields, title_format="[{title}]")
    assert p.parse(text, fields, title_format="[{title}]") == expected(fields, values)


@SETTINGS
@given(case=specs_and_values(text=ANY_TEXT.map(str.strip).filter(bool), max_fields=1))
def test_str_round_trip(kernel, case):
    """str: the whole (stripped) reply is the single field's value, converted to its type."""
    fields, values = case
    fields[0]["required"] = True
    name = fields[0]["name"]
    assume(name in values)
    p = kernel.parser("str")
    assert p.parse(p.render(values, fields), fields) == expected(fields, values)


def _parse(text, fields):
    return msgspec.json.decode(text.split("=>", 1)[1])


def _render(values, fields):
    return "RESULT=>" + msgspec.json.encode({k: v for k, v in values.items() if v is not None}).decode()


@SETTINGS
@given(case=specs_and_values(text=ANY_TEXT))
def test_custom_round_trip(kernel, case):
    """custom: the user's parse_func/render_func pair round-trips, with values converted by the spec."""
    fields, values = case
    p = kernel.parser("custom")
    opts = {"parse_func": _parse, "render_func": _render}
    assert p.parse(p.render(values, fields, **opts), fields, **opts) == expected(fields, values)


@pytest.mark.parametrize("mode", ["json", "xml", "title"])
def test_optional_default_is_filled(kernel, mode):
    """An absent optional field gets its declared default, in every mode."""
    fields = [{"name": "answer"}, {"name": "count", "type": "integer", "required": False, "default": 5}]
    p = kernel.parser(mode)
    assert p.parse(p.render({"answer": "x"}, fields), fields) == {"answer": "x", "count": 5}
