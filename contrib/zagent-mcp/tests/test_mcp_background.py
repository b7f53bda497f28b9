"""Servers connect in the background (Kernel() does not wait), junk on stdout is named, embedded text
resources reach the model, and tools/list_changed re-registers a server's tools (issue 17, items 21-24)."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys

from zagent_mcp.plugin import runtime_of

from mcp_helpers import demo_stdio

SERVERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "servers")


def late_stdio(delay: float, **extra):
    return {"command": sys.executable, "args": [os.path.join(SERVERS, "late_server.py"), str(delay)], **extra}


def test_kernel_returns_before_a_slow_server_is_ready(make_kernel):
    """Kernel() returns while a slow server is still starting; the first use of its tool waits for it."""
    k = make_kernel({"demo": late_stdio(3, connect_timeout=30)})
    [row] = runtime_of(k).status(wait=False)
    assert row["state"] in ("configured", "connecting")
    assert "demo.echo" not in k.registries["tools"]
    assert k.tool("demo.echo").name == "demo.echo"
    assert k.run_tool({"name": "demo.echo", "arguments": {"text": "hi"}}).content in ("hi", "{\"result\":\"hi\"}")


def test_first_call_of_an_unknown_name_waits_in_the_tool_path(make_kernel):
    """An agent's tool call naming a server still connecting waits for it (async path) and runs."""
    k = make_kernel({"demo": late_stdio(2, connect_timeout=30)})
    result = asyncio.run(k.arun_tool({"name": "demo.echo", "arguments": {"text": "later"}}))
    assert result.state == "success" and "later" in result.content


def test_listing_all_tools_waits_for_every_server(make_kernel):
    """k.tools() lists the tools of servers that were still connecting when it was called."""
    k = make_kernel({"demo": late_stdio(2, connect_timeout=30)})
    assert "demo.echo" in [t.name for t in k.tools()]


def test_junk_on_stdout_is_reported_as_not_an_mcp_server(make_kernel):
    """A program printing plain text fails as 'not an MCP server' with what it wrote, not as a timeout."""
    junk = {"command": sys.executable, "args": [os.path.join(SERVERS, "junk_server.py")], "connect_timeout": 60}
    k = make_kernel({"junk": junk})
    [row] = runtime_of(k).status()
    assert row["state"] == "failed"
    assert "not an MCP server" in row["error"] and "Hello! This is a plain" in row["error"]
    assert "connect_timeout" not in row["error"]


def test_a_timed_out_connect_leaves_no_unretrieved_future(make_kernel, caplog):
    """A server missing its connect timeout does not make asyncio log 'Future exception was never retrieved'."""
    caplog.set_level(logging.ERROR, logger="asyncio")
    k = make_kernel({"slow": late_stdio(30, connect_timeout=0.5)})
    [row] = runtime_of(k).status()
    assert row["state"] == "failed" and "connect_timeout" in row["error"]
    k.close()
    gc.collect()
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]


def test_embedded_text_resource_reaches_the_model(make_kernel):
    """A text resource embedded in a tool result is passed as text, not as a '[resource ... N chars]' stub."""
    k = make_kernel({"demo": demo_stdio()})
    result = k.run_tool({"name": "demo.readme", "arguments": {}})
    assert result.state == "success"
    assert "Demo README: the answer is 42." in result.content
    assert "file:///demo/README.txt" in result.content


def test_tools_list_changed_registers_the_new_list(make_kernel):
    """After the server sends tools/list_changed, its new tool is registered and the removed one is gone."""
    k = make_kernel({"demo": demo_stdio()})
    assert "grown" in k.run_tool({"name": "demo.grow", "arguments": {}}).content
    from zagent.testing import wait_until

    wait_until(lambda: "demo.shout" in k.registries["tools"], "demo.shout registered after list_changed")
    assert "HI" in k.run_tool({"name": "demo.shout", "arguments": {"text": "hi"}}).content
    assert "demo.pixel" not in k.registries["tools"]
