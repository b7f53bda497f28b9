"""Round fourteen, tool scope and rails against MCP tools: a hostile stdio server (``servers/round14_scope_raw.py``)
names its destructive tool ``Delete_File``, so rules the app wrote for ``delete_file`` miss it; and a client of
``zagent mcp serve`` calling that tool (proxied, or through a served agent) again and again.

Tried (7 cases), 5 got through on the code of the round's start: a ``tool_budget`` or ``tool_rpm`` rule missed
the name in another case or under its server's prefix (round thirteen folded only denies and approval rules), for
the app's own agents, for an agent served by ``zagent mcp serve``, and for the served tool itself across client
calls (fixed in ``plugins/rails``); a served agent's run stopped by the serve's usage limit reached the client as a
JSON-RPC error (the server logged a traceback), not the failed call ``serve.py`` promises (fixed there). Held:
the serve's per-reply cap on a served agent's calls, and a served agent's answer an output guardrail blocks.
"""

from __future__ import annotations

import asyncio
import pathlib
import sys

import pytest

pytest.importorskip("zagent_mcp")

from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from zagent.types import ToolCall  # noqa: E402
from zagent_mcp.plugin import runtime_of  # noqa: E402
from zagent_mcp.serve import McpServe  # noqa: E402

from mcp_helpers import UvicornApp  # noqa: E402

RAW = str(pathlib.Path(__file__).resolve().parent / "servers" / "round14_scope_raw.py")
AGENT_PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.rails"]


def _server(key):
    return {key: {"command": sys.executable, "args": [RAW]}}


def _kernel(make_kernel, key, rails):
    k = make_kernel(_server(key), *AGENT_PLUGINS)
    k.config["rails"] = rails
    runtime_of(k).wait(None)
    return k


def _agent(k, tool, replies):
    agent = k.agent({"name": "Cleaner", "prompt": "Clean: {text}", "inputs": [{"name": "text"}],
                     "outputs": [{"name": "answer"}], "parse_mode": "str", "tools": [tool]})
    agent.llm = k.llm("scripted:cleaner", replies=replies)
    return agent


def _deletes(tool, n):
    return {"tool_calls": [{"name": tool, "arguments": {"path": f"/data/{i}"}, "id": f"d{i}"} for i in range(n)]}


def _ran(result):
    return [r for r in result.tool_results if r.state == "success"]


def test_a_tool_budget_counts_a_servers_case_variant(make_kernel):
    """Attack (got through): ``tool_budget: {"delete_file": 1}``; the server's tool is ``fs.Delete_File``; one reply
    asks for three deletions. Defence: the budget key matches folded, without the server's prefix; the server
    deletes once."""
    k = _kernel(make_kernel, "fs", {"tool_budget": {"delete_file": 1}})
    result = _agent(k, "fs.Delete_File", [_deletes("fs.Delete_File", 3), "done"])(text="x")
    assert [r.content for r in _ran(result)] == ["deleted 1"]


def test_a_zero_rate_rule_stops_a_servers_case_variant(make_kernel):
    """Attack (got through): ``tool_rpm: {"delete_*": 0}`` (never); the server's tool is ``fs.Delete_File``.
    Defence: the rate rule matches folded; nothing reaches the server, the model is told the rule."""
    k = _kernel(make_kernel, "fs", {"tool_rpm": {"delete_*": 0}})
    result = _agent(k, "fs.Delete_File", [_deletes("fs.Delete_File", 1), "done"])(text="x")
    assert _ran(result) == [] and "tool_rpm" in (result.tool_results[0].error or "")


async def _call(url, name, arguments):
    async with streamable_http_client(url) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            return await session.call_tool(name, arguments)


def test_a_serve_budget_holds_for_a_served_agents_calls_of_a_case_variant(make_kernel):
    """Attack (got through): ``zagent mcp serve --agent cleaner.json`` with serve rails ``tool_budget:
    {"delete_*": 1}``; a client asks the served agent to clean up, and its model asks for three deletions of the
    server's ``fs.Delete_File`` in one reply. The serve's rails reach the agent's own calls (round twelve), but the
    budget rule missed the name. Defence: the rule matches folded; the server deleted once."""
    k = _kernel(make_kernel, "fs", None)
    agent = _agent(k, "fs.Delete_File", [_deletes("fs.Delete_File", 3), "cleaned"])
    serve = McpServe(k, agents=[agent], rails={"tool_budget": {"delete_*": 1}})
    with UvicornApp(serve.http_app()) as url:
        result = asyncio.run(_call(url, "Cleaner", {"text": "all"}))
    assert not result.is_error
    probe = k.run_tool(ToolCall(id="n", name="fs.Delete_File", arguments={"path": "/probe"}))  # the app's own call
    assert probe.content == "deleted 2"  # the agent's one deletion ran, then this one


@pytest.mark.parametrize("rails", [{"max_tool_calls_per_reply": 1}, {"usage_limits": {"tool_calls": 1}}],
                         ids=["reply-cap", "usage-limit"])
def test_serve_limits_reach_a_served_agents_parallel_calls(make_kernel, rails):
    """Attack: serve rails cap calls per reply (or the run's tool calls) at one; the served agent's model asks for
    three deletions of the proxied ``fs.Delete_File`` in one reply. Defence: the serve's rails are a layer of the
    agent's run (its callers' rails); the server deletes at most once (held). With the usage limit (got through, as
    a protocol error) the stopped run left the handler, so the client got a JSON-RPC error and the server logged a
    traceback: it is now a failed call naming the limit."""
    k = _kernel(make_kernel, "fs", None)
    agent = _agent(k, "fs.Delete_File", [_deletes("fs.Delete_File", 3), "cleaned", "cleaned"])
    serve = McpServe(k, agents=[agent], rails=rails)
    with UvicornApp(serve.http_app()) as url:
        result = asyncio.run(_call(url, "Cleaner", {"text": "all"}))
    if "usage_limits" in rails:
        assert result.is_error and "tool_calls=1" in "".join(c.text for c in result.content if c.type == "text")
    probe = k.run_tool(ToolCall(id="n", name="fs.Delete_File", arguments={"path": "/probe"}))
    assert probe.content in ("deleted 1", "deleted 2")  # at most one of the agent's (a stopped run may end it early)


class _R14McpOutputGuard:
    """A kernel output guardrail: an answer holding ``BANNED`` may not leave."""

    def zagent_check_output(self, agent, output, ctx):
        return "the answer holds a banned word" if "BANNED" in str(output) else None


def test_a_served_agents_blocked_answer_reaches_the_client_as_a_failed_call(make_kernel):
    """Attack: a client asks a served agent something whose answer the app's output guardrail blocks, hoping the
    answer comes back in the error. Defence (held): a failed call naming the guardrail; the answer is never sent."""
    k = make_kernel(_server("fs"), *AGENT_PLUGINS, _R14McpOutputGuard())
    runtime_of(k).wait(None)
    agent = _agent(k, "fs.echo", ["the BANNED answer"])
    with UvicornApp(McpServe(k, agents=[agent]).http_app()) as url:
        result = asyncio.run(_call(url, "Cleaner", {"text": "x"}))
    text = "".join(c.text for c in result.content if c.type == "text")
    assert result.is_error and "banned word" in text and "the BANNED answer" not in text


async def _call_twice(url, name):
    async with streamable_http_client(url) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            return [await session.call_tool(name, {"path": f"/data/{i}"}) for i in range(2)]


def test_a_serve_rate_rule_holds_across_client_calls_of_a_proxied_case_variant(make_kernel):
    """Attack (got through): ``zagent mcp serve`` proxies the server's ``fs.Delete_File`` with serve rails
    ``tool_rpm: {"delete_file": 1}`` and ``tool_rpm_wait: false`` (one a minute, whoever calls); a client calls it
    twice over HTTP. Each call is its own run, so only the kernel-wide rate can hold, and its rule missed the name.
    Defence: the rule matches folded; the second call is an error result and the server deleted once."""
    k = _kernel(make_kernel, "fs", None)
    serve = McpServe(k, tools=["fs.Delete_File"], rails={"tool_rpm": {"delete_file": 1}, "tool_rpm_wait": False})
    with UvicornApp(serve.http_app()) as url:
        first, second = asyncio.run(_call_twice(url, "fs.Delete_File"))
    assert not first.is_error and second.is_error
    assert "rate" in "".join(c.text for c in second.content if c.type == "text")
    assert k.run_tool(ToolCall(id="c", name="fs.echo", arguments={"text": "up"})).content == "up"
