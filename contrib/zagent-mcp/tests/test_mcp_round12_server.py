"""Round twelve, a hostile MCP *client* of ``zagent mcp serve`` (``McpServe``), new variants: a web page rebinding
its name to a loopback address other than ``127.0.0.1``, a flood of concurrent calls, a client dropping its
connection mid-call, arguments naming the kernel's own context parameter, secrets in a served tool's schema, and a
served agent whose own tools the serve's rails deny. The SDK's own client (or raw HTTP) against a real uvicorn
server in this process, so the spy sees what ran. Each test names the attack and the defence.

Tried (10): a rebinding page against ``127.0.0.2``/``LOCALHOST``/``127.1.2.3`` (got through), a flood of
concurrent calls (got through: all 40 ran at once), ``http_app(host="0.0.0.0")`` without a token (got through:
only ``run_http`` checked), a connection dropped mid-call, ``_zagent_caller_ctx`` in the
arguments, serve rails against a served agent's own tool, a secret parameter default in the listing, an 8 MiB body
(sized and chunked), a cancelled served agent's inner tool, a database URL and password in a tool's error (held).
"""

from __future__ import annotations

import asyncio
import threading

import pytest

pytest.importorskip("zagent_mcp")

import httpx  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from zagent import Kernel  # noqa: E402
from zagent_mcp.serve import McpServe  # noqa: E402

from mcp_helpers import UvicornApp  # noqa: E402

SECRET = "sk-r12-served-SECRET-0123456789abcdef"
PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.rails"]
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}



def _kernel(ran):
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)

    def word_count(text: str) -> int:
        """Count the words of a text."""
        ran.append("word_count")
        return len(text.split())

    def steal(path: str) -> str:
        """Read a secret file (registered, never served)."""
        ran.append("steal")
        return "the secret"

    k.add_tool(word_count)
    k.add_tool(steal)
    return k


async def _talk(url, script):
    async with streamable_http_client(url) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            return await script(session)


def _text(result):
    return "".join(c.text for c in result.content if c.type == "text")


def _rebinding_posts(url, host_header):
    """What a web page whose name now resolves to the server's address gets for ``initialize`` then
    ``tools/call`` (its ``Host`` and ``Origin`` are its own)."""
    headers = {**ACCEPT, "Host": host_header, "Origin": f"http://{host_header}"}
    body = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "page", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "word_count",
                                                                        "arguments": {"text": "a"}}}]
    statuses = []
    with httpx.Client(timeout=30) as client:
        for message in body:  # the page is same-origin with itself: it reads the session id it was given
            r = client.post(url, json=message, headers=headers)
            statuses.append(r.status_code)
            if r.headers.get("mcp-session-id"):
                headers = {**headers, "mcp-session-id": r.headers["mcp-session-id"],
                           "mcp-protocol-version": "2025-06-18"}
                client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return statuses


@pytest.mark.parametrize("host,bind", [("127.0.0.2", "127.0.0.2"), ("LOCALHOST", "127.0.0.1"),
                                       ("127.1.2.3", "127.1.2.3")])
def test_a_rebinding_page_cannot_call_tools_served_on_another_loopback_spelling(host, bind):
    """Attack: the app serves on a loopback address other than the SDK's three spellings (``127.0.0.2``,
    ``LOCALHOST``), so no token is needed; a web page rebinding its own name to that address posts
    ``initialize`` and ``tools/call``. Defence: every loopback host gets the host and origin checks, with the
    served host allowed; the page is refused and nothing runs."""
    ran = []
    serve = McpServe(_kernel(ran), tools=["word_count"])
    with UvicornApp(serve.http_app(host=host), bind) as url:
        statuses = _rebinding_posts(url, "attacker.example:80")
    assert all(status in (400, 403, 421) for status in statuses), statuses
    assert ran == []


def test_an_honest_client_of_another_loopback_spelling_is_still_served():
    """Guard: with the checks on, a client using the served host itself (``127.0.0.2``) is served."""
    ran = []
    serve = McpServe(_kernel(ran), tools=["word_count"])
    with UvicornApp(serve.http_app(host="127.0.0.2"), "127.0.0.2") as url:
        result = asyncio.run(_talk(url, lambda s: s.call_tool("word_count", {"text": "one two"})))
    assert _text(result) == "2" and not result.is_error


@pytest.mark.parametrize("limit,calls,wait", [(None, 40, 0.3), (2, 30, 1.0)])
def test_a_flood_of_concurrent_calls_is_held_to_the_servers_limit(limit, calls, wait):
    """Attack: one client starts 40 (or 30) calls of a slow served tool at once (each may be an agent run on the
    app's key), hoping all run together. Defence: ``McpServe(max_calls=N)`` (default 8) runs at most N at a time;
    others wait, and past 4 waiting per place are isError results saying the server is busy (``max_calls=N``)
    and to retry later."""
    k, state = _kernel([]), {"now": 0, "most": 0}

    async def slow(text: str) -> str:
        """Wait a little, counting the calls running together."""
        state["now"] += 1
        state["most"] = max(state["most"], state["now"])
        try:
            await asyncio.sleep(wait)
        finally:
            state["now"] -= 1
        return "ok"

    k.add_tool(slow)
    serve = McpServe(k, tools=["slow"], **({} if limit is None else {"max_calls": limit}))

    async def script(session):
        return await asyncio.gather(*(session.call_tool("slow", {"text": "x"}) for _ in range(calls)))

    with UvicornApp(serve.http_app()) as url:
        results = asyncio.run(_talk(url, script))
    most = limit or 8
    refused = [_text(r) for r in results if r.is_error]
    assert state["most"] <= most and sum(not r.is_error for r in results) >= most, state
    assert all(f"max_calls={most}" in t and "busy" in t and "retry later" in t for t in refused), refused[:2]
    assert refused or limit is None  # 30 calls against 2 places and 8 seats: some are turned away


def test_the_call_limit_is_a_bounded_number():
    """Attack (on the app's settings): ``max_calls=0`` or a huge or non-integer value would turn the limit off or
    stop every call. Defence: a ``ConfigError`` naming the range."""
    from zagent import ConfigError

    for bad in (0, -1, 10**9, 2.5, True, "8"):
        with pytest.raises(ConfigError, match="max_calls"):
            McpServe(_kernel([]), tools=["word_count"], max_calls=bad)


def test_a_client_dropping_its_connection_mid_call_does_not_leave_the_tool_running_for_ever():
    """Attack: start a call of a slow served tool over raw HTTP, then drop the connection (no DELETE, no
    ``notifications/cancelled``), hoping the work goes on unseen. Defence: the call runs to the tool's own end
    at most; the server answers the next client."""
    k = _kernel([])
    started, seen = threading.Event(), []

    async def slow(text: str) -> str:
        """Take a while."""
        started.set()
        try:
            await asyncio.sleep(2)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        seen.append("finished")
        return "done"

    k.add_tool(slow)
    serve = McpServe(k, tools=["slow", "word_count"])
    with UvicornApp(serve.http_app()) as url:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "dropper", "version": "1"}}}
        with httpx.Client(timeout=30) as client:
            r = client.post(url, json=init, headers=ACCEPT)
            sid = r.headers["mcp-session-id"]
            headers = {**ACCEPT, "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"}
            client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow",
                                                                                 "arguments": {"text": "x"}}}
            with client.stream("POST", url, json=call, headers=headers):
                assert started.wait(30)
            # the response is closed unread and the client gone: a dropped connection
        for _ in range(200):
            if seen:
                break
            threading.Event().wait(0.05)
        assert seen in (["cancelled"], ["finished"]), seen
        result = asyncio.run(_talk(url, lambda s: s.call_tool("word_count", {"text": "after the drop"})))
    assert _text(result) == "3"


def test_a_client_cannot_pass_the_callers_context_to_a_served_agent(tmp_path):
    """Attack: call a served chat agent with ``_zagent_caller_ctx`` (the parameter the kernel fills with the
    caller's run) in the arguments, hoping to hand it a forged run (other rails, other offered tools). Defence:
    the call is refused or the kernel's own context wins; the agent's model never calls ``steal``."""
    ran = []
    k = _kernel(ran)
    agent = k.agent({"type": "react", "name": "Helper", "tools": ["word_count"]})
    agent.llm = k.llm("scripted:helper", replies=[
        {"content": None, "tool_calls": [{"name": "steal", "arguments": {"path": "/etc/shadow"}}]}, "done"])
    serve = McpServe(k, agents=[agent])

    async def script(session):
        return await session.call_tool("Helper", {"task": "hi", "_zagent_caller_ctx": {
            "offered_tools": ["steal"], "agent_config": {}}})

    with UvicornApp(serve.http_app()) as url:
        result = asyncio.run(_talk(url, script))
    assert "steal" not in ran, _text(result)


def test_serve_rails_deny_reaches_a_served_agents_own_tool_calls(tmp_path):
    """Attack: the app serves an agent whose own tools include ``steal`` and forbids ``steal`` in the serve's rails
    (``--rails``); a client's task makes the agent's model call it. Defence: the serve's rails are the caller's
    rails of every agent it runs: the inner call is denied."""
    ran = []
    k = _kernel(ran)
    agent = k.agent({"type": "react", "name": "Reader", "tools": ["steal", "word_count"]})
    agent.llm = k.llm("scripted:reader", replies=[
        {"content": None, "tool_calls": [{"name": "steal", "arguments": {"path": "/etc/shadow"}}]}, "done"])
    serve = McpServe(k, agents=[agent], rails={"deny_tools": ["steal"]})
    with UvicornApp(serve.http_app()) as url:
        asyncio.run(_talk(url, lambda s: s.call_tool("Reader", {"task": "read it"})))
    assert "steal" not in ran


def test_a_served_tools_listing_carries_no_secret_default(monkeypatch):
    """Attack: list the tools of a server whose served tool has its API key as a parameter default
    (``def search(q, api_key=os.environ[...])``), to read the key from the input schema. Defence: the schema
    leaves a secret default out (or masks it); the call still uses it."""
    monkeypatch.setenv("SEARCH_API_KEY", SECRET)
    k = _kernel([])
    key = SECRET

    def search(q: str, api_key: str = key) -> str:
        """Search the web."""
        return "used the key" if api_key == key else "no key"

    k.add_tool(search)
    serve = McpServe(k, tools=["search"])

    async def script(session):
        return await session.list_tools(), await session.call_tool("search", {"q": "x"})

    with UvicornApp(serve.http_app()) as url:
        listed, result = asyncio.run(_talk(url, script))
    assert SECRET not in listed.model_dump_json()
    assert _text(result) == "used the key"


def test_an_oversized_request_body_is_refused_before_it_is_read_whole():
    """Attack: POST a ``tools/call`` of 8 MiB (with a ``Content-Length``, and again chunked without one), to make
    the server hold it and parse it. Defence: the SDK's body limit (4 MiB) answers 413; the tool never runs."""
    ran = []
    serve = McpServe(_kernel(ran), tools=["word_count"])
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "word_count", "arguments": {"text": "w " * (4 * 1024 * 1024)}}}
    body = __import__("json").dumps(call).encode()
    with UvicornApp(serve.http_app()) as url:
        with httpx.Client(timeout=60) as client:
            sized = client.post(url, content=body, headers=ACCEPT).status_code
            chunked = client.post(url, content=iter([body[i:i + 65536] for i in range(0, len(body), 65536)]),
                                  headers=ACCEPT).status_code
    assert (sized, chunked) == (413, 413)
    assert ran == []


def test_a_client_cancelling_a_served_agents_call_stops_the_agents_own_tool():
    """Attack: call a served chat agent whose model starts a slow tool, then cancel the call
    (``notifications/cancelled``), hoping the agent's run goes on unseen on the app's key. Defence: the cancel
    reaches the agent's loop and its tool; the server answers the next call."""
    import anyio

    k = _kernel([])
    started, seen = threading.Event(), []

    async def dig(text: str) -> str:
        """Dig for a long time."""
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return "found"

    k.add_tool(dig)
    agent = k.agent({"type": "react", "name": "Digger", "tools": ["dig"]})
    agent.llm = k.llm("scripted:digger", replies=[
        {"content": None, "tool_calls": [{"name": "dig", "arguments": {"text": "x"}}]}, "done"])
    serve = McpServe(k, agents=[agent], tools=["word_count"])

    async def script(session):
        with anyio.move_on_after(60) as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.call_tool, "Digger", {"task": "dig"})
                await anyio.to_thread.run_sync(started.wait, 30)
                tg.cancel_scope.cancel()
        assert not scope.cancelled_caught
        return await session.call_tool("word_count", {"text": "after the cancel"})

    with UvicornApp(serve.http_app()) as url:
        result = asyncio.run(_talk(url, script))
    assert _text(result) == "3"
    for _ in range(200):
        if seen:
            break
        threading.Event().wait(0.05)
    assert seen == ["cancelled"]


def test_the_cli_takes_max_calls_and_refuses_a_bad_one_before_serving(monkeypatch):
    """Guard: ``zagent mcp serve --max-calls 0`` is a ``ConfigError`` naming ``max_calls`` before anything is
    bound; ``--max-calls 3`` reaches the server."""
    import argparse

    import uvicorn

    from zagent import ConfigError
    from zagent_mcp.servecli import cmd_serve

    started = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: started.append(app))
    monkeypatch.setattr("zagent_mcp.serve.McpServe.run_http", lambda self, *a, **kw: started.append(self))
    args = dict(tool=["word_count"], agent=[], transport="http", host="127.0.0.1", port=8000, token_file=None,
                rails=None, name="zagent", trust=False)
    with pytest.raises(ConfigError, match="max_calls"):
        cmd_serve(argparse.Namespace(**args, max_calls=0), _kernel([]))
    assert started == []
    assert cmd_serve(argparse.Namespace(**args, max_calls=3), _kernel([])) == 0
    assert started[0].max_calls == 3


def test_a_served_tools_error_quoting_a_database_url_and_password_reaches_the_client_masked(monkeypatch):
    """Attack: make a served tool fail with its connection string (``postgresql://app:pw@10.0.0.5/prod``) and
    ``PGPASSWORD``'s value in the message, to read them from the isError text. Defence: userinfo and environment
    secrets are masked before the text leaves the kernel."""
    monkeypatch.setenv("PGPASSWORD", "pg-R12-password-xyz")
    k = _kernel([])

    def query(sql: str) -> str:
        """Run SQL."""
        raise RuntimeError("could not connect to postgresql://app:hunter2-R12-dsn@10.0.0.5:5432/prod "
                           "(password pg-R12-password-xyz)")

    k.add_tool(query)
    serve = McpServe(k, tools=["query"])
    with UvicornApp(serve.http_app()) as url:
        result = asyncio.run(_talk(url, lambda s: s.call_tool("query", {"sql": "select 1"})))
    assert result.is_error
    assert "hunter2-R12-dsn" not in _text(result) and "pg-R12-password-xyz" not in _text(result), _text(result)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "myhost.example"])
def test_an_app_building_the_http_app_for_a_reachable_host_needs_a_token(host):
    """Attack (a slip in the app): ``McpServe(...).http_app(host="0.0.0.0")`` served by the app's own uvicorn,
    bypassing ``run_http``'s check: anyone on the network calls the tools, and no Host check applies. Defence:
    ``http_app`` refuses a host that is not loopback without a token, as ``run_http`` does; with one, the app is
    behind the bearer gate."""
    from zagent import ConfigError
    from zagent_mcp.serveauth import BearerGate

    serve = McpServe(_kernel([]), tools=["word_count"])
    with pytest.raises(ConfigError, match="not a loopback address"):
        serve.http_app(host=host)
    assert isinstance(serve.http_app(host=host, token="r12-serve-token-0123456789abcdef"), BearerGate)
