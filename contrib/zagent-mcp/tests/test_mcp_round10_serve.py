"""Round ten, a hostile MCP *client* of ``zagent mcp serve`` (``McpServe``): the SDK's own client over streamable
HTTP against a real uvicorn server on 127.0.0.1, in this process so the spy sees what ran.

Each test names the attack and the defence expected; all of these held on the code they were written against.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

pytest.importorskip("zagent_mcp")

from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from zagent import Kernel  # noqa: E402
from zagent_mcp.serve import McpServe  # noqa: E402

from mcp_helpers import UvicornApp, free_port  # noqa: E402

SECRET = "sk-r10-served-SECRET-0123456789abcdef"
PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.rails"]



def _kernel(ran, *, plugins=PLUGINS, config=None):
    k = Kernel(plugins=plugins, entry_points=False, strict=True, config=config)

    def word_count(text: str) -> int:
        """Count the words of a text."""
        ran.append("word_count")
        return len(text.split())

    def steal(path: str) -> str:
        """Read a secret file (registered, never served)."""
        ran.append("steal")
        return "the secret"

    def wipe(path: str) -> str:
        """Delete everything under a path."""
        ran.append("wipe")
        return "wiped"

    def fail(text: str) -> str:
        """Fail, quoting the server's key in the error."""
        raise RuntimeError(f"upstream refused key {SECRET} for {text}")

    k.add_tool(word_count)
    k.add_tool(steal)
    k.add_tool(wipe, sensitive=True)
    k.add_tool(fail)
    return k


async def _talk(url, script):
    async with streamable_http_client(url) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            return await script(session)


def _run(serve, script):
    with UvicornApp(serve.http_app()) as url:
        return asyncio.run(_talk(url, script))


def _text(result):
    return "".join(c.text for c in result.content if c.type == "text")


def test_unserved_tool_by_look_alike_names_is_refused(monkeypatch):
    """Attack: call the registered-but-unserved ``steal`` and the served ``word_count`` under look-alike names
    (case, zero-width, fullwidth, path-like, toolset-like). Defence: tool scope; each is an isError "not offered"
    result, and nothing but the served tool ever runs."""
    ran = []
    serve = McpServe(_kernel(ran), tools=["word_count"])
    names = ["steal", "STEAL", "Word_Count", "word_count\u200b", "\uff57ord_count", "../steal", "toolset:steal",
             "word_count ", "mytools:steal"]

    async def script(session):
        listed = await session.list_tools()
        return listed, [await session.call_tool(n, {"text": "a b", "path": "/"}) for n in names]

    listed, results = _run(serve, script)
    assert [t.name for t in listed.tools] == ["word_count"]
    for name, result in zip(names, results):
        assert result.is_error and "not offered" in _text(result), (name, _text(result))
    assert ran == []


def test_sensitive_served_tool_never_runs_unasked():
    """Attack: the app serves its sensitive ``wipe`` and a client calls it. Defence: with the rails plugin and no
    approver the call is an isError naming the missing approver; without the rails plugin the kernel blocks it."""
    for plugins in (PLUGINS, PLUGINS[:-1]):
        ran = []
        serve = McpServe(_kernel(ran, plugins=plugins), tools=["wipe"])
        result = _run(serve, lambda s: s.call_tool("wipe", {"path": "/"}))
        assert result.is_error and ("approv" in _text(result) or "sensitive" in _text(result)), _text(result)
        assert ran == []


def test_resources_and_prompts_outside_what_is_served_are_refused():
    """Attack: ask for resources, a resource by ``file://`` URI, templates and prompts (none are served).
    Defence: the SDK answers each with an MCP error (method not found); no file content comes back."""
    serve = McpServe(_kernel([]), tools=["word_count"])

    async def script(session):
        outcomes = []
        for call in (session.list_resources, session.list_prompts, session.list_resource_templates,
                     lambda: session.read_resource("file:///etc/passwd"),
                     lambda: session.get_prompt("system", {"x": "y"})):
            try:
                outcomes.append(repr(await call()))
            except Exception as exc:  # the MCP error the server answered
                outcomes.append(f"error: {exc}")
        outcomes.append(_text(await session.call_tool("word_count", {"text": "still up"})))
        return outcomes

    outcomes = _run(serve, script)
    assert all(o.startswith("error") for o in outcomes[:5]), outcomes
    assert "root:" not in " ".join(outcomes)
    assert outcomes[5] == "2"


def test_huge_and_deeply_nested_arguments_are_an_error_and_the_server_stays_up():
    """Attack: arguments nested 100,000 deep, a 5 MB string to an int-returning tool, 20,000 extra keys, and an
    argument named like the kernel's context. Defence: each is an error result (or the SDK's parse error), the
    served tool never sees them, and the next honest call is answered."""
    ran = []
    serve = McpServe(_kernel(ran), tools=["word_count"])
    deep: dict = {}
    node = deep
    for _ in range(100_000):
        node["x"] = {}
        node = node["x"]

    async def script(session):
        out = []
        for args in ({"text": deep}, {"text": "w " * 2_500_000}, {"text": "a", **{f"k{i}": i for i in range(20_000)}},
                     {"text": "a", "ctx": {"kernel": "x"}}):
            try:
                out.append(await session.call_tool("word_count", args))
            except Exception as exc:
                out.append(exc)
        out.append(await session.call_tool("word_count", {"text": "one two three"}))
        return out

    *hostile, honest = _run(serve, script)
    assert not isinstance(hostile[0], type(honest)) or hostile[0].is_error
    assert _text(honest) == "3" and not honest.is_error
    for result in (hostile[2], hostile[3]):
        assert isinstance(result, Exception) or result.is_error, _text(result)


def test_a_tool_error_quoting_a_key_reaches_the_client_masked(monkeypatch):
    """Attack: make a served tool fail with the server's API key in its message, to read it from the isError
    text. Defence: tool errors are masked with the environment's secrets before they leave the kernel."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    serve = McpServe(_kernel([]), tools=["fail"])
    result = _run(serve, lambda s: s.call_tool("fail", {"text": "x"}))
    assert result.is_error and SECRET not in _text(result), _text(result)


def test_rpm_in_serve_rails_bounds_a_flood_across_calls():
    """Attack: flood a served tool with 12 calls (each MCP call is its own run, so a per-run ``tool_budget`` does
    not bound them). Defence: ``tool_rpm`` with ``tool_rpm_wait: false`` in the serve's rails counts across
    calls: 3 run, the rest are refused."""
    ran = []
    rails = {"tool_rpm": {"word_count": 3}, "tool_rpm_wait": False}
    serve = McpServe(_kernel(ran), tools=["word_count"], rails=rails)

    async def script(session):
        return await asyncio.gather(*(session.call_tool("word_count", {"text": "a"}) for _ in range(12)))

    results = _run(serve, script)
    assert sum(not r.is_error for r in results) == 3 and ran == ["word_count"] * 3


def test_a_cancelled_call_stops_its_tool_and_the_server_goes_on():
    """Attack: start a call of a slow served tool and cancel it (``notifications/cancelled``), then call again,
    hoping for a stuck server or a tool that runs on unseen. Defence: the kernel cancels the tool's task; the
    next call is answered."""
    import anyio

    ran = []
    k = _kernel(ran)
    started, seen = threading.Event(), []

    async def slow(text: str) -> str:
        """Wait for ever."""
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return "finished"

    k.add_tool(slow)
    serve = McpServe(k, tools=["slow", "word_count"])

    async def script(session):
        with anyio.move_on_after(60) as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.call_tool, "slow", {"text": "x"})
                await anyio.to_thread.run_sync(started.wait, 30)
                tg.cancel_scope.cancel()
        assert not scope.cancelled_caught
        return await session.call_tool("word_count", {"text": "after the cancel"})

    result = _run(serve, script)
    assert _text(result) == "3" and not result.is_error
    for _ in range(200):
        if seen:
            break
        threading.Event().wait(0.05)
    assert seen == ["cancelled"]


def test_a_served_agents_listing_and_errors_hold_no_key(tmp_path):
    """Attack: list the tools of a served agent whose spec carries its own ``api_key`` and make it fail, to read
    the key from the listing or the error text. Defence: the listing is the agent's name, description and input
    schema; errors are masked."""
    from zagent.plugins.actions import CustomizeAgent

    k = Kernel(plugins=[*PLUGINS, "zagent.plugins.openai"], entry_points=False, strict=True)
    spec = {"name": "Answerer", "description": "Answers.", "prompt": "Answer: {question}",
            "inputs": [{"name": "question"}], "outputs": [{"name": "answer"}], "parse_mode": "str",
            "llm_config": {"model": "openai:gpt-x", "base_url": f"http://127.0.0.1:{free_port()}/v1",
                           "api_key": SECRET, "max_retries": 0}}
    serve = McpServe(k, agents=[CustomizeAgent.from_dict(spec, k)])

    async def script(session):
        return await session.list_tools(), await session.call_tool("Answerer", {"question": "hi"})

    listed, result = _run(serve, script)
    assert SECRET not in listed.model_dump_json() and result.is_error
    assert SECRET not in _text(result), _text(result)


def test_a_web_page_rebinding_its_name_to_loopback_cannot_call_tools():
    """Attack: a web page whose host name was rebound to 127.0.0.1 posts ``initialize`` and ``tools/call`` to the
    served ``/mcp`` (its ``Host`` and ``Origin`` are the page's). Defence: serving on loopback turns the SDK's
    host and origin checks on: each request is refused and nothing runs."""
    import httpx

    ran = []
    serve = McpServe(_kernel(ran), tools=["word_count"])
    headers = {"Host": "attacker.example:80", "Origin": "http://attacker.example",
               "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    body = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "page", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "word_count",
                                                                        "arguments": {"text": "a"}}}]
    with UvicornApp(serve.http_app()) as url:
        statuses = [httpx.post(url, json=message, headers=headers, timeout=30).status_code for message in body]
    assert all(status in (400, 403, 421) for status in statuses), statuses
    assert ran == []
