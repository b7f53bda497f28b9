"""Round fourteen, hostile MCP servers against zagent's client (``servers/round14_raw.py``, raw JSON-RPC on stdio):
tools whose ``outputSchema`` makes the SDK's result validation run for ever (a backtracking ``pattern``, a
backtracking ``patternProperties`` key, 2**40 ``oneOf`` branches through ``$ref``), a tool list that changes to
such a schema after the first call, results holding ``NaN``/``-Infinity`` or a lone surrogate, an HTTP server
answering with text that is not UTF-8 (as an event stream and as a JSON body), stdio servers writing tens of
megabytes to stderr, and 15 MB of resource links.

11 attacks; 8 got through on the code of the round's start, each marked "Got through" in its docstring, all fixed.
The calls that hung run in a child process, so a regression fails the test instead of freezing the test run.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("zagent_mcp")

from zagent.types import ToolCall  # noqa: E402
from zagent_mcp.plugin import runtime_of  # noqa: E402

RAW = str(pathlib.Path(__file__).resolve().parent / "servers" / "round14_raw.py")


def _server(mode, **extra):
    return {"raw": {"command": sys.executable, "args": [RAW, mode], **extra}}


def _calls_in_child(mode, calls, timeout=90):
    """Run ``calls`` (``[(tool, arguments), ...]``) one after another against server ``mode`` in a new Python
    process, each with a 5 s tool timeout; return ``[(state, content, seconds), ...]``. A process that does not
    finish within ``timeout`` seconds (the GIL held by a regex, the loop stuck) fails the test."""
    script = textwrap.dedent(f"""
        import json, os, sys, time
        from zagent import Kernel
        from zagent.types import ToolCall
        from zagent_mcp.plugin import runtime_of
        k = Kernel(plugins=["zagent_mcp.plugin"], entry_points=False, strict=True,
                   config={{"mcp": {{"mcpServers": {json.dumps(_server(mode, timeout=5))}}}}})
        runtime_of(k).wait(None)
        out = []
        for i, (name, arguments) in enumerate({json.dumps(calls)}):
            started = time.monotonic()
            r = k.run_tool(ToolCall(id=f"c{{i}}", name=name, arguments=arguments))
            out.append([r.state, str(r.content)[:2000], time.monotonic() - started])
        print(json.dumps(out), flush=True)
        os._exit(0)
    """)
    try:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the process calling MCP server {mode!r} hung for {timeout} s")
    assert done.returncode == 0, done.stderr[-2000:]
    return [tuple(x) for x in json.loads(done.stdout.strip().splitlines()[-1])]


@pytest.mark.parametrize("mode", ["redos", "redos_keys"])
def test_an_output_schema_pattern_that_backtracks_never_freezes_the_process(mode):
    """Got through: ``match`` declares ``outputSchema`` ``{"pattern": "^(a|a)*$"}`` (or that pattern as a
    ``patternProperties`` key) and answers ``structuredContent`` of 40 ``a`` and a ``!``. The SDK's
    ``call_tool`` validates a result against the server's own output schema with ``jsonschema``, which runs the
    pattern with ``re``: 2**40 steps holding the GIL, so the whole process (every thread, every agent, the tool
    timeout itself) froze. Defence: zagent does not let the SDK validate results against a server's output schema
    (an untrusted server vouching for its own answer proves nothing; the result is data either way); the call
    returns at once, and the server's next call works."""
    (state, content, _), after = _calls_in_child(mode, [("raw.match", {}), ("raw.echo", {"text": "up"})])
    assert state == "success" and "a" * 40 in content, content
    assert after[0] == "success" and after[1].endswith("up"), after


def test_an_output_schema_of_a_trillion_branches_never_blocks_the_servers_loop():
    """Got through: ``match``'s output schema chains 40 ``oneOf`` pairs through ``$defs`` (a 3 KB schema,
    2**40 branches to evaluate for a non-string). The call timed out after its 5 s, but the validation went on in
    the one event loop every MCP server of the process shares: every later call of every server timed out too,
    for ever. Defence: as above, results are not validated against a server's output schema; the next call
    works."""
    (state, _, _), after = _calls_in_child("branches", [("raw.match", {}), ("raw.echo", {"text": "up"})])
    assert state == "success"
    assert after[0] == "success" and after[1].endswith("up") and after[2] < 5, after


def test_a_tool_list_changed_after_the_first_call_cannot_bring_a_freezing_schema():
    """Got through: ``echo`` is listed plainly; after the first call the server announces a changed list in which
    ``echo`` has the backtracking output schema, and the second call's result makes it backtrack (the process
    froze). Defence: no result is validated against a server's output schema, whenever it was listed."""
    calls = [("raw.echo", {"text": "one"}), ("raw.echo", {"text": "two"}), ("raw.echo", {"text": "two"})]
    results = _calls_in_child("swap", calls)
    assert [r[0] for r in results] == ["success"] * 3, results


def test_nan_and_infinity_in_structured_content_are_an_error_not_null(make_kernel):
    """Got through: ``structuredContent`` ``{"x": NaN, "y": -Infinity, "z": 1}`` (not JSON, but the SDK's parser
    takes it): the SDK's JSON dump turned both into ``null``, and the model and the app read ``{"x": null, "y":
    null, "z": 1}`` as the tool's answer, values the server never sent (a missing reading is not an endless one).
    Defence: a result holding a number JSON cannot write is an error the model reads, naming where."""
    k = make_kernel(_server("nan"))
    runtime_of(k).wait(None)
    result = k.run_tool(ToolCall(id="c1", name="raw.numbers", arguments={}))
    assert result.state == "error", result
    assert "not JSON" in result.content and ("NaN at $.x" in result.content or "-Infinity at $.y" in result.content)


def test_a_lone_surrogate_in_a_text_result_is_an_error_at_once(make_kernel):
    """Held: a text block holding ``\\ud800`` (no UTF-8 writer can write it). Defence: the reply is not read; the
    call fails at once saying why, and the server keeps answering."""
    k = make_kernel(_server("surrogate"))
    runtime_of(k).wait(None)
    result = k.run_tool(ToolCall(id="c1", name="raw.numbers", arguments={}))
    assert result.state == "error" and "could not be read" in result.content, result
    assert str(k.run_tool(ToolCall(id="c2", name="raw.echo", arguments={"text": "up"})).content).endswith("up")


# -- streamable HTTP --------------------------------------------------------------------------------------------


class _Utf8BreakingMcp:
    """A streamable-HTTP MCP server on 127.0.0.1 (stdlib, own thread) offering ``echo``; every ``echo`` answer
    holds the bytes ``caf\\xc3(`` (not UTF-8), sent as an SSE event (``sse=True``) or a JSON body."""

    def __init__(self, sse):
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, status, body=b"", ctype="application/json"):
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self._send(405)

            def do_DELETE(self):
                self._send(200)

            def do_POST(self):
                message = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                if "id" not in message:
                    return self._send(202)
                method = message.get("method")
                if method == "initialize":
                    result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                              "serverInfo": {"name": "r14", "version": "1"}}
                elif method == "tools/list":
                    result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
                else:
                    result = {"content": [{"type": "text", "text": "caf@"}]}
                body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
                body = body.replace(b"caf@", b"caf\xc3(")
                if sse:
                    self._send(200, b"event: message\ndata: " + body + b"\n\n", "text/event-stream")
                else:
                    self._send(200, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/mcp"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("sse", [True, False], ids=["event-stream", "json"])
def test_invalid_utf8_in_an_http_result_is_an_error_not_replacement_characters(make_kernel, sse):
    """Got through (as an event stream; held as a JSON body): a result whose text holds ``caf\\xc3(``. httpx decoded
    the SSE event with replacement characters, and the model read ``caf\\ufffd(``, text the server never sent (the
    same bytes as a JSON body are a parse error). Defence: a ``data:`` line that is not UTF-8 becomes an error for
    the call it answers, saying so; the server stays usable."""
    with _Utf8BreakingMcp(sse) as server:
        k = make_kernel({"h": {"url": server.url, "connect_timeout": 5, "timeout": 5}})
        runtime_of(k).wait(None)
        result = k.run_tool(ToolCall(id="c1", name="h.echo", arguments={}))
        assert result.state == "error" and "\ufffd" not in str(result.content), result
        assert ("not valid UTF-8" if sse else "JSON") in result.content, result.content
        assert runtime_of(k).status()[0]["state"] == "ready"


# -- stderr ---------------------------------------------------------------------------------------------------


def test_sixteen_megabytes_of_stderr_are_not_read_whole_when_a_server_fails(make_kernel):
    """Got through: a stdio server writes 16 MiB of three-byte lines to stderr and exits. ``stderr: capture`` (the
    default) kept all of it in a temporary file, and the failure report read the file whole and split it into 5.6
    million lines to show the last 8 (some 400 MiB). Defence: only the last 64 KiB a server writes to stderr are
    kept; the report still ends with its last words."""
    import tracemalloc

    tracemalloc.start()
    try:
        k = make_kernel(_server("noisy_exit", connect_timeout=20))
        runtime_of(k).wait(None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    [status] = runtime_of(k).status()
    assert status["state"] == "failed" and "the last words" in str(status["error"]), status
    assert peak < 64 * 2**20, f"{peak / 2**20:.0f} MiB"


def test_a_server_writing_stderr_during_calls_does_not_grow_a_file_without_end(make_kernel):
    """Got through: a stdio server writing 32 MiB to stderr before each answer: the temporary file behind
    ``stderr: capture`` grew by 32 MiB a call, without end (a disk filled by a chatty or hostile server). Defence:
    the server's stderr is read through a pipe and only its last 64 KiB are held, in memory; calls work."""
    import os

    k = make_kernel(_server("noisy", timeout=30))
    runtime_of(k).wait(None)
    for i in range(2):
        result = k.run_tool(ToolCall(id=f"c{i}", name="raw.echo", arguments={"text": "up"}))
        assert result.state == "success" and str(result.content).endswith("up"), result
    held = runtime_of(k).connections["raw"]._stderr
    size = len(held.data) if hasattr(held, "data") else os.fstat(held.fileno()).st_size
    assert size <= 256 * 1024, size


def test_fifteen_megabytes_of_resource_links_and_a_megabyte_mime_type_reach_the_model_cut(make_kernel):
    """Held: a result of 150 ``resource_link`` blocks with 100 KB URIs, an image whose ``mimeType`` is 1 MB and an
    embedded resource carrying ``_meta`` nested 50 deep (15 MB, under ``max_message_bytes``). Defence: the model
    reads at most ``MAX_RESULT_CHARS`` characters, the cut stated; the server keeps answering."""
    from zagent_mcp.results import MAX_RESULT_CHARS

    k = make_kernel(_server("links"))
    runtime_of(k).wait(None)
    result = k.run_tool(ToolCall(id="c1", name="raw.numbers", arguments={}))
    assert result.state == "success", result
    assert len(str(result.content)) <= MAX_RESULT_CHARS and "cut" in str(result.content)[-200:]
    assert str(k.run_tool(ToolCall(id="c2", name="raw.echo", arguments={"text": "up"})).content).endswith("up")
