"""Attack: a model names an MCP server's tool its agent was not offered. The kernel blocks it; the server never
sees the call. A Deny-everything rail blocks MCP calls too."""

from zagent import Deny

from mcp_helpers import demo_stdio

AGENTS = ("zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react")


def test_an_agent_cannot_call_an_mcp_tool_it_was_not_offered(make_kernel):
    """A ReAct agent offered demo.echo asks for demo.pid: blocked with 'was not offered', never run."""
    k = make_kernel({"demo": demo_stdio()}, *AGENTS)
    agent = k.agent({"type": "react", "name": "r", "tools": ["demo.echo"]})
    agent.llm = k.llm("scripted:mcp-scope", replies=[
        {"tool_calls": [{"name": "demo.pid", "arguments": {}}]}, "done"])
    response = agent.chat("which process?", use_react=True)
    [step] = [s for s in response.steps if s.tool]
    assert step.is_blocked and "was not offered" in step.reason and step.result.startswith("Error:")


def test_a_declared_agent_offered_an_mcp_tool_can_call_it(make_kernel):
    """The offered MCP tool runs (the scope is not a blanket block)."""
    k = make_kernel({"demo": demo_stdio()}, *AGENTS)
    agent = k.agent({"name": "e", "prompt": "{q}", "inputs": [{"name": "q"}], "outputs": [{"name": "a"}],
                     "parse_mode": "str", "tools": ["demo.echo"]})
    agent.llm = k.llm("scripted:mcp-ok", replies=[
        {"tool_calls": [{"name": "demo.echo", "arguments": {"text": "hello"}}]}, "done"])
    assert agent(q="x").tool_results[0].state == "success"


def test_deny_everything_rail_blocks_mcp_calls(make_kernel):
    """A rail denying everything blocks a direct MCP tool call."""

    class DenyAll:
        def zagent_before_tool_call(self, call, ctx):
            return Deny("no")

    k = make_kernel({"demo": demo_stdio()})
    k.add_plugin(DenyAll(), name="deny-all")
    assert k.run_tool({"name": "demo.echo", "arguments": {"text": "x"}}).state == "blocked"
