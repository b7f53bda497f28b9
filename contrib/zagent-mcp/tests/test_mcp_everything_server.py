"""End to end against `@modelcontextprotocol/server-everything` (npm); skipped when node is not installed."""

import pytest

from zagent.plugins.actions import CustomizeAgent

from mcp_helpers import AGENT_PLUGINS, everything_command

pytestmark = pytest.mark.skipif(everything_command() is None, reason="node/npx not available")

ECHO_AGENT = {"name": "Echoer", "prompt": "Echo {text} with the tool.", "parse_mode": "str",
              "inputs": [{"name": "text", "type": "string"}], "outputs": [{"name": "answer", "type": "string"}],
              "tools": ["everything.echo"]}


def test_an_agent_uses_the_everything_servers_echo_tool(make_kernel):
    """A declared agent calls `everything.echo` on the real npm server; the echo reaches the model."""
    k = make_kernel({"everything": everything_command()}, *AGENT_PLUGINS)
    llm = k.llm("scripted:m", replies=[
        {"tool_calls": [{"name": "everything.echo", "arguments": {"message": "ping"}}]}, "done"])
    agent = CustomizeAgent.from_dict(ECHO_AGENT, k)
    agent.llm = llm
    assert agent(text="ping").answer == "done"
    assert llm.requests[1].messages[-1].content == "Echo: ping"


def test_image_content_of_a_reference_server_becomes_a_reference(make_kernel):
    """`get-tiny-image` returns text and a PNG: the text is kept, the image becomes `[image image/png N bytes]`."""
    k = make_kernel({"everything": everything_command()})
    result = k.run_tool({"name": "everything.get-tiny-image", "arguments": {}})
    assert result.state == "success"
    assert "[image image/png " in result.content and "bytes]" in result.content
    assert "base64" not in result.content and len(result.content) < 500


def test_structured_content_of_a_reference_server_is_the_value(make_kernel):
    """`get-structured-content` answers with structuredContent, which becomes the value."""
    k = make_kernel({"everything": everything_command()})
    result = k.run_tool({"name": "everything.get-structured-content", "arguments": {"location": "Chicago"}})
    assert result.state == "success"
    assert isinstance(result.value, dict) and result.value
