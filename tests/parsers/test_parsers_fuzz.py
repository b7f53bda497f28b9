"""Fuzzing: no input makes a parser raise anything but ParseError, or a tool-call reader raise at all."""

import pytest
from hypothesis import HealthCheck, given, settings
from parsers_strategies import MESSY, field_specs
from zagent import ParseError
from zagent.plugins.parsers.toolcalls import Extraction

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
FIELDS = [
    {"name": "answer", "type": "string"},
    {"name": "count", "type": "integer", "required": False},
    {"name": "ok", "type": "boolean", "required": False},
    {"name": "tags", "type": "array", "items": {"name": "t", "type": "integer"}, "required": False},
    {"name": "meta", "type": "object", "fields": [{"name": "a", "type": "string"}], "required": False},
]


def _custom(text, fields):
    import json

    return json.loads(text)


@pytest.mark.parametrize("mode", ["title", "json", "xml", "str", "custom"])
@FUZZ
@given(text=MESSY)
def test_parse_raises_only_parse_error(kernel, mode, text):
    """parse(text) returns a dict or raises ParseError, never anything else, whatever the text."""
    fields = FIELDS[:1] if mode == "str" else FIELDS
    opts = {"parse_func": _custom} if mode == "custom" else {}
    try:
        assert isinstance(kernel.parser(mode).parse(text, fields, **opts), dict)
    except ParseError as exc:
        assert exc.raw == text


@FUZZ
@given(text=MESSY, fields=field_specs())
def test_json_parse_raises_only_parse_error_for_any_spec(kernel, text, fields):
    """json: for any field spec, messy text gives a dict or a ParseError."""
    try:
        kernel.parser("json").parse(text, fields)
    except ParseError:
        pass


@FUZZ
@given(text=MESSY)
def test_tool_call_extract_never_raises(kernel, text):
    """extract(text) always returns (calls, errors, text); malformed calls are errors, not exceptions."""
    result = kernel.parser("tool_call").extract(text)
    assert isinstance(result, Extraction) and isinstance(result.text, str)
    assert all(c.id and c.name for c in result.calls)
