"""End to end against `mcp-server-time` from PyPI: a declared agent file uses its tool by name."""

import pathlib

from zagent.plugins.actions import CustomizeAgent

from mcp_helpers import AGENT_PLUGINS, PACKAGE, time_stdio
from zagent_mcp.plugin import runtime_of

AGENT_FILE = PACKAGE / "examples" / "time_agent.json"
CALL = {"tool_calls": [{"name": "time.get_current_time", "arguments": {"timezone": "UTC"}}]}


def test_declared_agent_file_runs_end_to_end_against_the_time_server(make_kernel):
    """Acceptance: an agent file listing `time.get_current_time` calls the real server; the result reaches the model."""
    k = make_kernel({"time": time_stdio()}, *AGENT_PLUGINS)
    llm = k.llm("scripted:m", replies=[CALL, "done"])
    agent = CustomizeAgent.load(AGENT_FILE, k)
    agent.llm = llm
    result = agent(timezone="UTC")
    assert result.answer == "done"
    assert [r.state for r in result.tool_results] == ["success"]
    assert result.tool_results[0].value["timezone"] == "UTC"
    tool_message = llm.requests[1].messages[-1]
    assert tool_message.role == "tool"
    assert '"timezone":"UTC"' in tool_message.content and '"datetime":' in tool_message.content
    assert [t.name for t in llm.requests[0].tools] == ["time.get_current_time"]


def test_the_model_is_offered_the_servers_schema(make_kernel):
    """The model sees the time tool with the server's own description and JSON schema."""
    k = make_kernel({"time": time_stdio()})
    spec = k.tool("time.get_current_time").spec
    assert spec.description == "Get current time in a specific timezone"
    assert spec.parameters["required"] == ["timezone"]


def test_a_tool_error_of_the_time_server_goes_back_as_an_error_result(make_kernel):
    """An unknown time zone is the server's `isError` answer, turned into an error result with its message."""
    k = make_kernel({"time": time_stdio()})
    result = k.run_tool({"name": "time.get_current_time", "arguments": {"timezone": "Mars/Olympus"}})
    assert result.state == "error"
    assert "Mars/Olympus" in result.content


def test_a_protocol_error_becomes_a_tool_error(make_kernel):
    """A JSON-RPC error answer (here: calling a tool the server does not have) raises McpToolError with its message."""
    k = make_kernel({"time": time_stdio()})
    runtime = runtime_of(k)
    future = runtime.submit(runtime.connections["time"].call("no_such_tool", {}, False))
    try:
        future.result(30)
    except Exception as exc:
        assert type(exc).__name__ == "McpToolError"
        assert "no_such_tool" in str(exc)
    else:
        raise AssertionError("calling an unknown tool must fail")


def test_the_example_configuration_file_is_read(make_kernel, monkeypatch):
    """examples/mcp.json (the README's configuration) starts the time server through ZAGENT_MCP_CONFIG."""
    monkeypatch.setenv("ZAGENT_MCP_CONFIG", str(PACKAGE / "examples" / "mcp.json"))
    monkeypatch.setenv("PATH", str(pathlib.Path(__import__("sys").executable).parent), prepend=":")
    k = make_kernel({})
    assert {t.name for t in k.tools(toolset="time")} == {"time.get_current_time", "time.convert_time"}
