"""Round twelve, an MCP server's secrets echoed encoded (a real stdio server on the official SDK,
``servers/round12_encoded.py``) and a key quoted encoded in what ``zagent mcp serve`` answers (the SDK's client over
streamable HTTP against uvicorn on 127.0.0.1).

Got through before the fix (``mask_pieces`` reads what it scrubs decoded too):
the server's ``env`` token as hex in a tool description, and every byte percent-encoded, as ``\\u`` escapes, as
HTML references and between zero-width spaces in an ``isError`` result; ``OPENAI_API_KEY`` percent-encoded in the
error a served tool answers.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading

import pytest

pytest.importorskip("zagent_mcp")

from zagent import Kernel  # noqa: E402
from zagent_mcp.plugin import runtime_of  # noqa: E402

from mcp_helpers import free_port  # noqa: E402

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "servers", "round12_encoded.py")
TOKEN = "enc-r12-TOKEN-5566778899aabbcc"


def _forms(value):
    return ["".join(f"%{b:02X}" for b in value.encode()), "".join(f"\\u{ord(c):04x}" for c in value),
            "".join(f"&#{ord(c)};" for c in value), "\u200b".join(value), value.encode().hex()]


@pytest.fixture
def encoded(make_kernel):
    k = make_kernel({"db": {"command": sys.executable, "args": [SERVER], "env": {"ENCODED_API_TOKEN": TOKEN},
                            "connect_timeout": 120, "timeout": 120}})
    runtime_of(k).wait(None)
    return k


def test_an_env_token_in_a_tool_description_as_hex_is_masked(encoded):
    """Attack: the server quotes its ``env`` token as hex in a tool description (sent to the model with every
    call, shown by ``zagent tools``). Defence: masked like the token as written."""
    [tool] = [t for t in encoded.tools() if t.name == "db.query"]
    assert "Query the warehouse" in tool.description
    assert TOKEN.encode().hex()[:32] not in json.dumps({"d": tool.description, "p": tool.parameters})


def test_an_env_token_encoded_in_an_error_result_is_masked(encoded):
    """Attack: an ``isError`` result quoting the token percent-encoded, as ``\\u`` escapes, as HTML references and
    between zero-width spaces. Defence: each line holding it is masked; the server's words stay."""
    result = encoded.run_tool({"name": "db.fail", "arguments": {}})
    text = str(result.content)
    assert result.state == "error" and "auth failed for" in text
    assert [f[:30] for f in _forms(TOKEN) if f[:30] in text or f[:30] in text.encode("unicode_escape").decode()] == []


SERVED_KEY = "sk-r12-SERVED-0123456789abcdef"


def test_a_served_tools_error_quoting_the_environment_key_percent_encoded_is_masked(monkeypatch):
    """Attack: a client of ``zagent mcp serve`` calls a tool whose library fails quoting ``OPENAI_API_KEY`` with
    every byte percent-encoded (a proxy's log line). Defence: the ``isError`` text the client gets is masked."""
    import uvicorn
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from zagent_mcp.serve import McpServe

    monkeypatch.setenv("OPENAI_API_KEY", SERVED_KEY)
    form = "".join(f"%{b:02X}" for b in SERVED_KEY.encode())

    def lookup(word: str) -> str:
        """Look a word up."""
        raise RuntimeError(f"GET https://dict.example/?q={word} failed; the proxy logged {form}")

    k = Kernel(plugins=["zagent.plugins.offline"], entry_points=False, strict=True)
    k.add_tool(lookup)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(McpServe(k, tools=["lookup"]).http_app(), host="127.0.0.1", port=port,
                                           log_level="error", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()

    async def call():
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                return await session.call_tool("lookup", {"word": "cat"})

    try:
        while not server.started:
            assert thread.is_alive(), "uvicorn did not start"
            threading.Event().wait(0.02)
        result = asyncio.run(call())
    finally:
        server.should_exit = True
        thread.join(30)
        k.close()
    text = "".join(c.text for c in result.content if c.type == "text")
    assert result.is_error and "dict.example" in text and "failed" in text
    assert form[:30] not in text and SERVED_KEY not in text


URL_KEY = "qk-r12-MCPQUERY-1234567890abcdef"
URL_PW = "pw-r12-MCPUSER-Secret-998877"


class _Refusing:
    """An "MCP server" on 127.0.0.1 answering every request 401 with a JSON-RPC error quoting ``message``."""

    def __init__(self, message):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        body = json.dumps({"jsonrpc": "2.0", "id": 0, "error": {"code": -32001, "message": message}}).encode()

        class Handler(BaseHTTPRequestHandler):
            def _any(self):
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(401)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_DELETE = _any

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_an_mcp_urls_own_credentials_echoed_bare_are_masked(caplog):
    """Attack: an MCP server configured by URL with a literal ``?api_key=`` and a ``user:password@`` (no
    ``${VAR}``) refuses the client with an error quoting both bare (``token qk-... rejected``). The server's
    status (``zagent mcp list``) and the warning the kernel logs showed them: only ``${VAR}`` values, ``env``,
    headers and secret flags were scrubbed. Defence: the URL's own credentials are the server's secrets too
    (got through before)."""
    import logging

    caplog.set_level(logging.WARNING)
    server = _Refusing(f"token {URL_KEY} / password {URL_PW} rejected")
    try:
        url = f"http://alice:{URL_PW}@127.0.0.1:{server.port}/mcp?api_key={URL_KEY}"
        k = Kernel(plugins=["zagent_mcp.plugin"], entry_points=False,
                   config={"mcp": {"mcpServers": {"web": {"url": url, "connect_timeout": 10}}}})
        try:
            runtime_of(k).wait(None)
            status = runtime_of(k).status()
        finally:
            k.close()
    finally:
        server.close()
    shown = json.dumps(status, default=str) + caplog.text
    assert status[0]["state"] == "failed" and "rejected" in shown
    assert URL_KEY not in shown and URL_PW not in shown


def test_a_stdio_servers_url_argument_password_echoed_bare_is_masked(make_kernel):
    """Attack: a stdio server started with ``args: ["--dsn", "postgres://app:<password>@db/x"]`` (a database URL
    as an argument, not a secret-named flag) fails quoting the password bare. Defence: the password of a URL in
    ``args`` is the server's secret too (got through before)."""
    script = ("import sys; sys.stderr.write('connect failed: password ' + sys.argv[1].split(':')[2].split('@')[0]"
              " + ' rejected'); sys.exit(3)")
    k = make_kernel({"db": {"command": sys.executable, "args": ["-c", script, f"postgres://app:{URL_PW}@db/x"],
                            "connect_timeout": 60}})
    runtime_of(k).wait(None)
    [status] = runtime_of(k).status()
    shown = json.dumps(status, default=str)
    assert status["state"] == "failed"
    assert URL_PW not in shown
