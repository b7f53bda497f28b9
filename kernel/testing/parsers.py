"""Conformance suites for output parsers (``ParserConformance``: set ``mode`` and ``plugins``, or override
``make_parser``; ``fields``/``values``/``options`` for a mode with other needs) and text tool-call formats
(``ToolCallFormatConformance``). They check that ``instructions`` gives text, ``render`` then ``parse`` gives the
typed values back, and ``parse`` raises only ``ParseError`` (naming a missing field, keeping the raw text). Only
pytest and zagent are imported, never a plugin.
"""

from __future__ import annotations

from typing import Any, ClassVar, Iterator, Optional

import pytest
from .. import Kernel, ParseError, ToolCall, ToolSpec
from ..contracts import OutputParser, TextToolFormat

GARBAGE = [
    "", " ", "\n\n", "null", "[]", "{}", "{", "}", "{{{{", "]]]]", '{"a":', "```", "```json\n{", "<", "</a>",
    "<![CDATA[", "## ", "#", "\x00\x01\x02", "\ud7ff" * 3, "42", "true", "é" * 50, "<answer>", "<answer/>",
    '{"answer": {"answer": [', "'" * 20, '"' * 20, "\\" * 20, "## answer", "[TOOL_CALLS]", "<tool_call>",
    "a" * 5000, "{" * 2000, "[" * 2000 + "]" * 2000, "[" * 100000 + "]" * 100000, "{" * 100000,
    "<answer>" + "<![CDATA[" * 2000, "<answer>" * 2000, '{"answer": 1e999}', '{"count": 99999999999999999999999}',
]


class ParserConformance:
    """Base class of a parser test suite; subclasses set ``mode`` and ``plugins`` (or override ``make_parser``)."""

    mode: ClassVar[str] = ""
    plugins: ClassVar[list[Any]] = []
    options: ClassVar[dict[str, Any]] = {}
    fields: ClassVar[list[dict[str, Any]]] = [
        {"name": "answer", "type": "string", "description": "the answer"},
        {"name": "count", "type": "integer", "required": False, "default": 0},
        {"name": "ok", "type": "boolean", "required": False},
    ]
    values: ClassVar[dict[str, Any]] = {"answer": "Paris is the capital.", "count": 3, "ok": True}
    garbage: ClassVar[list[str]] = GARBAGE
    #: a reply this mode cannot use (``None`` skips that test, e.g. for a mode that accepts any text)
    unusable_reply: ClassVar[Optional[str]] = "I cannot answer that."

    @pytest.fixture
    def parser(self) -> Iterator[OutputParser]:
        kernel = Kernel(plugins=list(self.plugins), entry_points=False, strict=True)
        try:
            yield self.make_parser(kernel)
        finally:
            kernel.close()

    def make_parser(self, kernel: Kernel) -> OutputParser:
        """The parser under test (default: ``kernel.parser(self.mode)``)."""
        return kernel.parser(self.mode)

    def test_instructions_are_text(self, parser: OutputParser) -> None:
        """instructions(fields) returns non-empty prompt text."""
        text = parser.instructions(self.fields, **self.options)
        assert isinstance(text, str) and text.strip()

    def test_render_then_parse_gives_the_values_back(self, parser: OutputParser) -> None:
        """parse(render(values)) == values, converted to the declared types."""
        text = parser.render(self.values, self.fields, **self.options)
        assert parser.parse(text, self.fields, **self.options) == {**self._defaults(), **self.values}

    def test_parse_returns_a_plain_dict(self, parser: OutputParser) -> None:
        """parse returns a dict (not a Struct); parse_typed returns an object with the fields as attributes."""
        text = parser.render(self.values, self.fields, **self.options)
        assert type(parser.parse(text, self.fields, **self.options)) is dict
        typed = parser.parse_typed(text, self.fields, **self.options)
        first = self.fields[0]["name"]
        assert getattr(typed, first) == self.values[first]

    def test_missing_required_field_is_named(self, parser: OutputParser) -> None:
        """A reply without a required field raises ParseError naming it in .missing."""
        required = self.fields[0]["name"]
        partial = {k: v for k, v in self.values.items() if k != required}
        text = parser.render(partial, self.fields, **self.options)
        with pytest.raises(ParseError) as info:
            parser.parse(text, self.fields, **self.options)
        assert required in info.value.missing

    def test_parse_error_keeps_the_raw_reply(self, parser: OutputParser) -> None:
        """The ParseError for an unusable reply holds the raw text."""
        text = self.unusable_reply
        if text is None:
            pytest.skip("this mode accepts any text")
        with pytest.raises(ParseError) as info:
            parser.parse(text, self.fields, **self.options)
        assert info.value.raw == text

    @pytest.mark.parametrize("index", range(len(GARBAGE)))
    def test_garbage_raises_only_parse_error(self, parser: OutputParser, index: int) -> None:
        """No input makes parse raise anything but ParseError."""
        text = self.garbage[index] if index < len(self.garbage) else ""
        try:
            parser.parse(text, self.fields, **self.options)
        except ParseError:
            pass

    def _defaults(self) -> dict[str, Any]:
        out = {}
        for f in self.fields:
            if not f.get("required", True) or f.get("default") is not None:
                out[f["name"]] = f.get("default")
        return out


class ToolCallFormatConformance:
    """Base class of a tool-call format test suite; subclasses set ``mode`` and ``plugins``."""

    mode: ClassVar[str] = ""
    plugins: ClassVar[list[Any]] = []
    tools: ClassVar[list[ToolSpec]] = [
        ToolSpec(name="search", description="Search the web.",
                 parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
    ]
    calls: ClassVar[list[ToolCall]] = [
        ToolCall(id="call_1", name="search", arguments={"query": "zagent"}),
        ToolCall(id="call_2", name="search", arguments={"query": "pluggy", "limit": 3}),
    ]

    @pytest.fixture
    def fmt(self) -> Iterator[TextToolFormat]:
        kernel = Kernel(plugins=list(self.plugins), entry_points=False, strict=True)
        try:
            yield self.make_format(kernel)
        finally:
            kernel.close()

    def make_format(self, kernel: Kernel) -> TextToolFormat:
        return kernel.tool_format(self.mode)

    def test_render_tools_names_every_tool(self, fmt: TextToolFormat) -> None:
        """render_tools(tools) is prompt text that names each tool."""
        text = fmt.render_tools(self.tools)
        assert all(t.name in text for t in self.tools)

    def test_rendered_calls_are_read_back(self, fmt: TextToolFormat) -> None:
        """parse_tool_calls(render_calls(calls)) gives the same names and arguments, in order."""
        got = fmt.parse_tool_calls(fmt.render_calls(self.calls))
        assert [(c.name, c.arguments) for c in got] == [(c.name, c.arguments) for c in self.calls]

    def test_every_call_has_a_unique_id(self, fmt: TextToolFormat) -> None:
        """Every extracted call has a non-empty id, unique within the reply."""
        got = fmt.parse_tool_calls(fmt.render_calls(self.calls))
        ids = [c.id for c in got]
        assert all(ids) and len(set(ids)) == len(ids)

    def test_plain_text_has_no_calls(self, fmt: TextToolFormat) -> None:
        """A reply without calls gives no calls, no errors, and the text back."""
        calls, errors, text = fmt.extract("The answer is 42.")
        assert (calls, errors, text) == ([], [], "The answer is 42.")

    @pytest.mark.parametrize("index", range(len(GARBAGE)))
    def test_garbage_never_raises(self, fmt: TextToolFormat, index: int) -> None:
        """extract never raises, whatever the text."""
        calls, errors, text = fmt.extract(GARBAGE[index])
        assert isinstance(calls, list) and isinstance(errors, list) and isinstance(text, str)
