"""The built-in modes and tool-call formats pass the conformance suites third parties use."""

import json

from zagent.testing.parsers import ParserConformance, ToolCallFormatConformance

PLUGINS = ["zagent.plugins.parsers"]


class TestTitleConformance(ParserConformance):
    mode = "title"
    plugins = PLUGINS


class TestTitleCustomFormatConformance(ParserConformance):
    mode = "title"
    plugins = PLUGINS
    options = {"title_format": "### {title}:"}


class TestJsonConformance(ParserConformance):
    mode = "json"
    plugins = PLUGINS


class TestXmlConformance(ParserConformance):
    mode = "xml"
    plugins = PLUGINS


class TestStrConformance(ParserConformance):
    mode = "str"
    plugins = PLUGINS
    fields = [{"name": "answer", "type": "integer"}]
    values = {"answer": 42}


def _parse_lines(text, fields):
    """A user's parser: ``name = value`` lines."""
    out = {}
    for line in text.splitlines():
        if " = " in line:
            key, _, value = line.partition(" = ")
            out[key.strip()] = json.loads(value)
    return out


def _render_lines(values, fields):
    return "\n".join(f"{k} = {json.dumps(v)}" for k, v in values.items() if v is not None)


class TestCustomConformance(ParserConformance):
    mode = "custom"
    plugins = PLUGINS
    options = {"parse_func": _parse_lines, "render_func": _render_lines}


class TestToolCallConformance(ToolCallFormatConformance):
    mode = "tool_call"
    plugins = PLUGINS


class TestHermesConformance(ToolCallFormatConformance):
    mode = "hermes"
    plugins = PLUGINS


class TestMistralConformance(ToolCallFormatConformance):
    mode = "mistral"
    plugins = PLUGINS


class TestLlama3Conformance(ToolCallFormatConformance):
    mode = "llama3"
    plugins = PLUGINS


class TestFencedConformance(ToolCallFormatConformance):
    mode = "fenced"
    plugins = PLUGINS
