"""Tool-call formats: prompt sections per style, ids, feedback for malformed calls, registration."""

import pytest
from zagent import ToolCall, ToolSpec

TOOLS = [ToolSpec(name="search", description="Search the web.",
                  parameters={"type": "object", "properties": {"q": {"type": "string"}}})]


@pytest.mark.parametrize("mode,marker", [("tool_call", "<tool_call>"), ("hermes", "<tools>"),
                                         ("mistral", "[AVAILABLE_TOOLS]"), ("llama3", '"parameters"'),
                                         ("fenced", "```tool_call")])
def test_render_tools_uses_the_format_style(kernel, mode, marker):
    """Each format's tools section describes the tools and shows its own call syntax."""
    text = kernel.parser(mode).render_tools(TOOLS)
    assert marker in text and "Search the web." in text


def test_render_tools_is_cached(kernel):
    """The same tool list renders once: the same string object comes back."""
    fmt = kernel.parser("tool_call")
    assert fmt.render_tools(TOOLS) is fmt.render_tools(list(TOOLS))


def test_render_tools_accepts_dicts(kernel):
    """Tools may be given as OpenAI-style dicts."""
    text = kernel.parser("hermes").render_tools([{"type": "function", "function": {"name": "f", "description": "d"}}])
    assert '"name":"f"' in text


def test_calls_without_id_get_unique_ids(kernel):
    """Calls with no id each get a fresh, distinct call_ id."""
    reply = '<tool_call>{"name": "a", "arguments": {}}</tool_call>' * 3
    ids = [c.id for c in kernel.parser("tool_call").parse_tool_calls(reply)]
    assert len(set(ids)) == 3 and all(i.startswith("call_") for i in ids)


def test_given_ids_are_kept_and_duplicates_replaced(kernel):
    """A model-given id is kept; a repeated one is replaced so ids stay unique."""
    reply = ('<tool_call>{"id": "x", "name": "a", "arguments": {}}</tool_call>'
             '<tool_call>{"id": "x", "name": "b", "arguments": {}}</tool_call>')
    calls = kernel.parser("tool_call").parse_tool_calls(reply)
    assert calls[0].id == "x" and calls[1].id not in ("x", "")


def test_non_object_arguments_are_kept_raw_for_the_tool_runner(kernel):
    """Arguments that are not a JSON object stay as raw text, so the runner can tell the model."""
    calls = kernel.parser("tool_call").parse_tool_calls('<tool_call>{"name": "a", "arguments": "q=1"}</tool_call>')
    assert calls[0].arguments == "q=1"


def test_feedback_names_the_problem_and_the_syntax(kernel):
    """feedback(errors) quotes each malformed call and shows the format's call syntax."""
    fmt = kernel.parser("mistral")
    _calls, errors, _text = fmt.extract('[TOOL_CALLS][{"name": "a", "arguments": {]')
    text = fmt.feedback(errors)
    assert '{"name": "a"' in text and "[TOOL_CALLS][" in text.splitlines()[-1]


def test_error_keeps_the_tool_name_when_readable(kernel):
    """A malformed call whose name is readable carries it in ToolCallError.name."""
    _c, errors, _t = kernel.parser("tool_call").extract('<tool_call>{"name": "search", "arguments": {</tool_call>')
    assert errors[0].name == "search" and "not valid JSON" in errors[0].message


@pytest.mark.parametrize("mode", ["tool_call", "hermes", "mistral", "llama3", "fenced"])
def test_every_format_reads_every_style(kernel, mode):
    """Whatever format was asked for, a call in another style is still read (models drift)."""
    reply = '[TOOL_CALLS][{"name": "a", "arguments": {"x": 1}}]'
    assert [(c.name, c.arguments) for c in kernel.parser(mode).parse_tool_calls(reply)] == [("a", {"x": 1})]


def test_render_calls_after_text(kernel):
    """render_calls(calls, text) writes the text, then the calls; extract gives the text back."""
    fmt = kernel.parser("tool_call")
    reply = fmt.render_calls([ToolCall(id="c1", name="a", arguments={"x": 1})], text="Checking.")
    calls, errors, text = fmt.extract(reply)
    assert (calls[0].id, errors, text) == ("c1", [], "Checking.")


def test_all_modes_and_formats_are_registered(kernel):
    """The plugin registers the five modes, the tool-call formats and the templates namespace."""
    assert set(kernel.registries["parsers"]) == {"title", "json", "xml", "str", "custom", "tool_call", "hermes",
                                                 "mistral", "llama3", "fenced", "pipe", "pycall", "templates"}
