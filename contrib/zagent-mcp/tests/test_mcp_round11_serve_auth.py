"""Round eleven: ``zagent mcp serve --transport http`` on a host others can reach had no authentication.

The SDK's own client over real streamable HTTP against uvicorn on 127.0.0.1 (in this process, so the spy sees what
ran); the refusal of a non-loopback host without a token is checked to happen before anything is bound (uvicorn is
never started). Each test names the attack and the defence.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("zagent_mcp")

import httpx2  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

from zagent import ConfigError, Kernel  # noqa: E402
from zagent_mcp.serve import McpServe  # noqa: E402
from zagent_mcp.serveauth import BearerGate, is_loopback, token_from  # noqa: E402

from mcp_helpers import UvicornApp, free_port  # noqa: E402

TOKEN = "r11-serve-token-0123456789abcdefXYZ"
PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.rails"]



def _serve(ran):
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)

    def word_count(text: str) -> int:
        """Count the words of a text."""
        ran.append("word_count")
        return len(text.split())

    k.add_tool(word_count)
    return McpServe(k, tools=["word_count"])


async def _session_call(url, headers):
    async with create_mcp_http_client(headers=headers) as client:
        async with streamable_http_client(url, http_client=client) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                result = await session.call_tool("word_count", {"text": "one two three"})
                return "".join(c.text for c in result.content if c.type == "text")


def _post_initialize(url, headers):
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "r11", "version": "0"}}}
    return httpx2.post(url, json=body, headers={"accept": "application/json, text/event-stream", **headers},
                       timeout=30)


def test_a_client_without_the_token_gets_401_saying_what_to_send():
    """Attack: an MCP client that does not know the token initializes and calls a served tool. Defence: every
    request without ``Authorization: Bearer <token>`` is a 401 naming the header and where the token comes from;
    the SDK client fails to initialize and the tool never runs."""
    ran = []
    serve = _serve(ran)
    with UvicornApp(serve.http_app(token=TOKEN)) as url:
        reply = _post_initialize(url, {})
        with pytest.raises(Exception):
            asyncio.run(asyncio.wait_for(_session_call(url, {}), 60))
    assert reply.status_code == 401
    assert reply.headers["www-authenticate"].startswith("Bearer")
    said = reply.json()["error_description"]
    assert "Authorization: Bearer" in said and "ZAGENT_MCP_TOKEN" in said
    assert TOKEN not in reply.text
    assert ran == []


@pytest.mark.parametrize("header", [
    f"Bearer {TOKEN[:-1]}", f"Bearer {TOKEN}x", f"Basic {TOKEN}", f"Token {TOKEN}", "Bearer",
    f"bearer {TOKEN.upper()}", f"Bearer {TOKEN[:16]}"])
def test_a_wrong_token_or_scheme_gets_401(header):
    """Attack: a token one character short or long, the right token under another scheme, an empty token, a
    prefix of it. Defence: 401 saying the token is not the server's (never echoing what was sent)."""
    ran = []
    with UvicornApp(_serve(ran).http_app(token=TOKEN)) as url:
        reply = _post_initialize(url, {"authorization": header})
    assert reply.status_code == 401, header
    assert "not this zagent MCP server's" in reply.json()["error_description"]
    assert TOKEN[:16] not in reply.text
    assert ran == []


def test_two_authorization_headers_are_refused_even_with_the_right_token_first():
    """Attack: the right token and a second ``Authorization`` header (which one a proxy or the app reads
    differs). Defence: a request must carry exactly one; 401."""
    with UvicornApp(_serve([]).http_app(token=TOKEN)) as url:
        reply = httpx2.post(url, content=b"{}", headers=[("authorization", f"Bearer {TOKEN}"),
                                                         ("authorization", "Bearer other-token-0123456789"),
                                                         ("accept", "application/json, text/event-stream")],
                            timeout=30)
    assert reply.status_code == 401


def test_a_client_with_the_token_is_served():
    """The defence keeps the server usable: the SDK client sending the token lists and calls the tool."""
    ran = []
    with UvicornApp(_serve(ran).http_app(token=TOKEN)) as url:
        text = asyncio.run(asyncio.wait_for(_session_call(url, {"Authorization": f"Bearer {TOKEN}"}), 60))
    assert text == "3" and ran == ["word_count"]


def test_the_token_is_compared_in_constant_time(monkeypatch):
    """The check is ``hmac.compare_digest`` of SHA-256 digests (no early exit, no length leak), and the gate
    keeps the digest only: the token is in none of its attributes."""
    import hmac

    from zagent_mcp import serveauth

    seen = []
    real = hmac.compare_digest
    monkeypatch.setattr(serveauth.hmac, "compare_digest", lambda a, b: seen.append((len(a), len(b))) or real(a, b))
    gate = BearerGate(object(), TOKEN)
    assert gate.refusal({"headers": [(b"authorization", f"Bearer {TOKEN}".encode())]}) is None
    assert gate.refusal({"headers": [(b"authorization", b"Bearer x")]}) is not None
    assert seen == [(32, 32), (32, 32)]
    assert TOKEN not in repr(vars(gate))


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "192.168.1.10", "example.com", "127.0.0.1.nip.io"])
def test_a_host_others_can_reach_is_refused_without_a_token_before_binding(monkeypatch, host):
    """Attack: ``zagent mcp serve --transport http --host 0.0.0.0`` (or any address that is not loopback) with
    no token: anyone on the network could call the served tools. Defence: a ``ConfigError`` saying to set
    ``ZAGENT_MCP_TOKEN`` or ``--token-file`` -- raised before uvicorn is started, so nothing is bound."""
    import uvicorn

    started = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **kw: started.append((a, kw)))
    with pytest.raises(ConfigError, match="not a loopback address.*ZAGENT_MCP_TOKEN.*--token-file"):
        _serve([]).run_http(host, 8000)
    assert started == []


def test_a_non_loopback_host_with_a_token_is_served_behind_the_gate(monkeypatch):
    """With a token, ``run_http`` on ``0.0.0.0`` hands uvicorn the gated app (checked without binding)."""
    import uvicorn

    started = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: started.append((app, kw)))
    _serve([]).run_http("0.0.0.0", 8000, TOKEN)
    (app, kw), = started
    assert isinstance(app, BearerGate) and kw["host"] == "0.0.0.0"


def test_loopback_stays_open_without_a_token():
    """Loopback binding is as before without a token (``127.0.0.0/8``, ``::1``, ``localhost``)."""
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.5.6.7", "::1", "[::1]", "localhost", "LOCALHOST"))
    with UvicornApp(_serve([]).http_app()) as url:
        assert asyncio.run(asyncio.wait_for(_session_call(url, {}), 60)) == "3"


@pytest.mark.parametrize("token", ["short", "has space in it 0123456789", "caf\u00e9-0123456789abcdef", ""])
def test_a_weak_or_unsendable_token_is_refused_without_showing_it(tmp_path, token):
    """A token under 16 characters, with spaces or non-ASCII, or an empty token file: a ``ConfigError`` that
    says what a token must be and does not show the value."""
    path = tmp_path / "token"
    path.write_text(token + "\n", encoding="utf-8")
    path.chmod(0o600)  # a token file others can read is refused before it is read (round fifteen)
    with pytest.raises(ConfigError, match="at least 16 printable ASCII") as info:
        token_from(str(path))
    assert not token or token not in str(info.value)
    if token:
        with pytest.raises(ConfigError, match="ZAGENT_MCP_TOKEN"):
            token_from(None, {"ZAGENT_MCP_TOKEN": token})


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZAGENT_")}
    env.update(ZAGENT_LOG="0", **extra)
    return env


def test_the_cli_refuses_0_0_0_0_without_a_token_and_never_binds(tmp_path):
    """Attack: the command line ``zagent mcp serve --transport http --host 0.0.0.0``. Defence: it exits non-zero
    with the message, without binding the port (the port stays free)."""
    (tmp_path / "mytools.py").write_text("def word_count(text: str) -> int:\n    return len(text.split())\n")
    port = free_port()
    proc = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "mcp", "serve", "--tool", "mytools:word_count",
                           "--transport", "http", "--host", "0.0.0.0", "--port", str(port)],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode != 0
    assert "not a loopback address" in proc.stderr and "ZAGENT_MCP_TOKEN" in proc.stderr
    with socket.socket() as s:
        s.bind(("0.0.0.0", port))  # still free: nothing was bound


def test_the_cli_serves_with_the_token_from_the_environment_and_never_prints_it(tmp_path):
    """``ZAGENT_MCP_TOKEN`` set: the command serves on loopback, a client without the token gets 401, one with
    it is served, and the token is in none of the command's output."""
    (tmp_path / "mytools.py").write_text(
        "def word_count(text: str) -> int:\n    \"\"\"Count words.\"\"\"\n    return len(text.split())\n")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "zagent.plugins.cli", "mcp", "serve", "--tool",
                             "mytools:word_count", "--transport", "http", "--port", str(port)],
                            cwd=tmp_path, env=_env(ZAGENT_MCP_TOKEN=TOKEN), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read().decode()
                time.sleep(0.1)
        assert _post_initialize(url, {}).status_code == 401
        assert asyncio.run(asyncio.wait_for(_session_call(url, {"Authorization": f"Bearer {TOKEN}"}), 60)) == "3"
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    assert TOKEN not in out.decode() + err.decode()
    assert "bearer token" in err.decode()


def _args(**over):
    import argparse

    values = dict(tool=["word_count"], agent=[], transport="http", host="0.0.0.0", port=8000, token_file=None,
                  rails=None, name="zagent", trust=False)
    values.update(over)
    return argparse.Namespace(**values)


def test_the_cli_takes_the_token_from_a_file_for_a_non_loopback_host(monkeypatch, tmp_path, capsys):
    """``--token-file`` on ``--host 0.0.0.0``: uvicorn gets the gated app (checked without binding) and the token
    is printed nowhere."""
    import uvicorn

    from zagent_mcp.servecli import cmd_serve

    monkeypatch.delenv("ZAGENT_MCP_TOKEN", raising=False)
    started = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: started.append((app, kw)))
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    path.chmod(0o600)
    ran = []
    kernel = _serve(ran).kernel
    assert cmd_serve(_args(token_file=str(path)), kernel) == 0
    (app, kw), = started
    assert isinstance(app, BearerGate) and kw["host"] == "0.0.0.0"
    out = capsys.readouterr()
    assert TOKEN not in out.out + out.err and "bearer token" in out.err


def test_the_cli_refuses_a_token_file_for_stdio(monkeypatch, tmp_path):
    """``--token-file`` with ``--transport stdio`` is a ``ConfigError`` (it would be silently unused)."""
    from zagent_mcp.servecli import cmd_serve

    path = tmp_path / "token"
    path.write_text(TOKEN)
    with pytest.raises(ConfigError, match="--transport http only"):
        cmd_serve(_args(transport="stdio", token_file=str(path)), _serve([]).kernel)
