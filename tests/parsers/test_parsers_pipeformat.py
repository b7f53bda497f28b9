"""tiny-agent's ``TOOL:name|k=v`` protocol as the built-in ``pipe`` tool-call format."""

import pytest
from hypothesis import given, settings, strategies as st

from zagent import Kernel, ToolCall, ToolSpec

SEED = ('Seed 003 (tiny-agent Agent.run): "解析response提取工具调用指令格式TOOL:search|query=xxx" / '
        '"tool_name, tool_input = response[5:].split("|", 1)" / "params = dict(pair.split("=") for pair in '
        'tool_input.split("&"))"')


def test_the_seed_call_is_read(kernel):
    """Seed 003 (tiny-agent): "提取工具调用指令格式TOOL:search|query=xxx" (a tool call is the line
    TOOL:search|query=xxx). The ``pipe`` format reads it as a call of ``search`` with ``query``, several
    ``&``-joined pairs as several arguments, and keeps the rest of the reply as text."""
    fmt = kernel.parser("pipe")
    calls, errors, text = fmt.extract("Let me look.\nTOOL:search|query=tide pools&limit=3")
    assert [(c.name, c.arguments) for c in calls] == [("search", {"query": "tide pools", "limit": "3"})]
    assert errors == [] and text == "Let me look."
    assert [c.name for c in fmt.parse_tool_calls("TOOL:now")] == ["now"]


@pytest.mark.parametrize("line, problem", [("TOOL:search|query", "key=value"), ("TOOL:9bad|q=1", "tool name"),
                                           ("TOOL:search|q=1&q=2", "twice")])
def test_a_malformed_line_is_an_error_with_feedback(kernel, line, problem):
    """Seed 003 (tiny-agent): "用|分隔参数" (arguments after |, as key=value pairs). A TOOL: line that
    breaks that shape is a malformed call whose feedback names the problem and shows the syntax."""
    fmt = kernel.parser("pipe")
    calls, errors, _ = fmt.extract(line)
    assert calls == [] and problem in errors[0].message
    assert "TOOL:<tool name>|" in fmt.feedback(errors)


KEYS = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
VALUES = st.text(st.characters(blacklist_characters="&=\n\r[{", blacklist_categories=("Cs",)), max_size=12).map(
    str.strip)


@given(name=st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True), args=st.dictionaries(KEYS, VALUES, max_size=4))
@settings(max_examples=80, deadline=None)
def test_calls_round_trip_through_the_format(name, args):
    """Seed 003 (tiny-agent): "TOOL:search|query=xxx" (the call line): what the format writes for a call
    (``render_calls``) it reads back as the same call."""
    fmt = Kernel(plugins=["zagent.plugins.parsers"], entry_points=False).parser("pipe")
    written = fmt.render_calls([ToolCall(id="c1", name=name, arguments=args)])
    [call] = fmt.parse_tool_calls(written)
    assert (call.name, call.arguments) == (name, args)


def test_a_react_agent_calls_tools_in_the_pipe_format():
    """Seed 003 (tiny-agent): "它用字符串前缀TOOL:代替JSON解析" (the TOOL: prefix instead of JSON). A ReAct
    agent with ``tool_format: pipe`` and a model without native tools is shown the TOOL: syntax, and its
    ``TOOL:add|a=2&b=3`` line runs the tool (text values converted to the tool's integers)."""
    k = Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions",
                        "zagent.plugins.react"], entry_points=False)

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    k.add_tool(add)
    agent = k.agent({"type": "react", "name": "tiny", "tools": ["add"], "tool_format": "pipe"})
    agent.llm = k.llm("scripted:tiny", replies=["TOOL:add|a=2&b=3", "It is 5."], profile={"native_tools": False})
    reply = agent.chat("What is 2+3?", use_react=True)
    assert reply.tool_used == "add" and reply.tool_result == "5" and reply.content == "It is 5."
    assert "TOOL:<tool name>|" in agent.llm.requests[0].messages[0].content
    k.close()


def test_render_tools_describes_the_tools(kernel):
    """Seed 003 (tiny-agent): "register_tool(...)即可启用" (a registered tool is enabled): the prompt section
    names each tool with its arguments and description."""
    text = kernel.parser("pipe").render_tools([ToolSpec(name="search", description="Search the web.", parameters={
        "type": "object", "properties": {"query": {"type": "string"}}})])
    assert "search(query: string): Search the web." in text


def test_a_call_whose_arguments_are_raw_text_renders_with_none(kernel):
    """A call kept with unparsed argument text (``arguments="oops"``, not an object) renders as ``TOOL:name``,
    as ``pycall`` renders it, instead of crashing the history rendering."""
    fmt = kernel.parser("pipe")
    assert fmt.render_calls([ToolCall(id="c", name="search", arguments="oops")]).strip() == "TOOL:search"
    assert fmt.render_calls([ToolCall(id="c", name="search", arguments={"q": "x"})]).strip() == "TOOL:search|q=x"
