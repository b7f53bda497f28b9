"""Tools of a stdio MCP server (the demo server) become zagent tools that run through the kernel."""

import asyncio

from zagent import Deny, run_sync

from mcp_helpers import demo_stdio
from zagent_mcp.plugin import runtime_of


def test_tools_are_registered_as_server_dot_tool_in_a_toolset_named_after_the_server(make_kernel):
    """Each MCP tool is registered as `server.tool`, in toolset `server`."""
    k = make_kernel({"demo": demo_stdio()})
    names = {t.name for t in k.tools(toolset="demo")}
    assert {"demo.echo", "demo.add", "demo.fail", "demo.pixel", "demo.pid"} <= names


def test_tool_parameters_are_the_servers_json_schema(make_kernel):
    """The tool's parameters are the server's input schema; zagent does not re-validate (args_type=None)."""
    k = make_kernel({"demo": demo_stdio()})
    tool = k.tool("demo.add")
    assert tool.parameters["properties"]["a"]["type"] == "integer"
    assert tool.parameters["required"] == ["a", "b"]
    assert tool.args_type is None and tool.is_async
    assert tool.description == "Add two integers; the result is structured."


def test_text_content_reaches_the_caller(make_kernel):
    """The text of a result reaches the caller (this SDK also sends it as structured `{"result": ...}`)."""
    k = make_kernel({"demo": demo_stdio()})
    result = k.run_tool({"name": "demo.echo", "arguments": {"text": "hello"}})
    assert result.state == "success"
    assert "hello" in result.content


def test_structured_content_is_kept_as_the_value(make_kernel):
    """structuredContent becomes the result's value; the model reads it as JSON."""
    k = make_kernel({"demo": demo_stdio()})
    result = k.run_tool({"name": "demo.add", "arguments": {"a": 2, "b": 3}})
    assert result.value == {"sum": 5}
    assert result.content == '{"sum":5}'


def test_images_become_short_references(make_kernel):
    """An image is described as `[image <mime> <n> bytes]`, never sent as base64."""
    k = make_kernel({"demo": demo_stdio()})
    result = k.run_tool({"name": "demo.pixel", "arguments": {}})
    assert result.state == "success"
    assert result.content == "[image image/png 70 bytes]"


def test_is_error_result_becomes_a_tool_error_with_the_servers_message(make_kernel):
    """An `isError` result is an error ToolResult carrying the server's message."""
    k = make_kernel({"demo": demo_stdio()})
    result = k.run_tool({"name": "demo.fail", "arguments": {"message": "disk is full"}})
    assert result.state == "error"
    assert "disk is full" in result.content


def test_arguments_are_validated_by_the_server(make_kernel):
    """Arguments the server rejects come back as an error result the model can act on."""
    k = make_kernel({"demo": demo_stdio()})
    result = k.run_tool({"name": "demo.add", "arguments": {"a": "two", "b": 3}})
    assert result.state == "error"
    assert "a" in result.content and "integer" in result.content


def test_one_session_is_reused_across_calls(make_kernel):
    """Calls share one session: the server process stays the same and it connected once."""
    k = make_kernel({"demo": demo_stdio()})
    pids = {k.run_tool({"name": "demo.pid", "arguments": {}}).value["result"] for _ in range(3)}
    assert len(pids) == 1
    assert runtime_of(k).connections["demo"].connects == 1


def test_calls_work_from_any_event_loop(make_kernel):
    """The session lives on the plugin's own loop, so callers on other loops (and sync code) can use it."""
    k = make_kernel({"demo": demo_stdio()})

    async def call(text):
        return (await k.arun_tool({"name": "demo.echo", "arguments": {"text": text}})).value["result"]

    assert asyncio.run(call("one")) == "one"
    assert asyncio.run(call("two")) == "two"
    assert k.run_tool({"name": "demo.echo", "arguments": {"text": "three"}}).value == {"result": "three"}


def test_concurrent_calls_share_the_session(make_kernel):
    """Several calls in flight at once all get their own answers."""
    k = make_kernel({"demo": demo_stdio()})
    calls = [{"name": "demo.echo", "arguments": {"text": str(i)}} for i in range(8)]
    results = run_sync(k.arun_tools(calls))
    assert [r.value["result"] for r in results] == [str(i) for i in range(8)]


def test_a_deny_rail_blocks_an_mcp_tool(make_kernel):
    """Rails apply to MCP tools: a Deny blocks the call before it reaches the server."""
    seen = []

    class NoEcho:
        def zagent_before_tool_call(self, call):
            seen.append(call.name)
            return Deny("echo is not allowed here") if call.name == "demo.echo" else None

    k = make_kernel({"demo": demo_stdio()})
    k.add_plugin(NoEcho())
    result = k.run_tool({"name": "demo.echo", "arguments": {"text": "hi"}})
    assert result.state == "blocked"
    assert "not allowed" in result.content
    assert seen == ["demo.echo"]


def test_the_tool_timeout_applies(make_kernel):
    """A call slower than the server's `timeout` becomes a `timeout` result; the session stays usable."""
    k = make_kernel({"demo": demo_stdio(timeout=0.5)})
    result = k.run_tool({"name": "demo.slow", "arguments": {"seconds": 30}})
    assert result.state == "timeout"
    assert k.run_tool({"name": "demo.echo", "arguments": {"text": "still here"}}).state == "success"


def test_tools_allow_list_limits_what_is_registered(make_kernel):
    """`tools: [...]` in a server's entry registers only those tools."""
    k = make_kernel({"demo": demo_stdio(tools=["echo"])})
    assert [t.name for t in k.tools(toolset="demo")] == ["demo.echo"]


def test_name_separator_is_configurable(make_kernel):
    """`name_separator` changes `server.tool` into e.g. `server__tool` for providers that refuse dots."""
    k = make_kernel({"demo": demo_stdio(tools=["echo"])}, name_separator="__")
    assert [t.name for t in k.tools(toolset="demo")] == ["demo__echo"]
