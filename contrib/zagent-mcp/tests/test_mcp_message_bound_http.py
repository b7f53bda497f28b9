"""max_message_bytes over HTTP: a lying loopback server's oversized JSON body, oversized SSE event or
compressed body fails the connection with the reason (attack tests, a real HTTP server on 127.0.0.1)."""

import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from zagent_mcp.bounded import _since_blank_line
from zagent_mcp.plugin import runtime_of

LIMIT = 64 * 1024
HUGE = 4 * 1024 * 1024


def _reply(request_id, size):
    return {"jsonrpc": "2.0", "id": request_id, "result": {"protocolVersion": "2025-06-18", "capabilities": {},
            "serverInfo": {"name": "liar", "version": "1"}, "instructions": "x" * size}}


class _Liar(BaseHTTPRequestHandler):
    mode = "json"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        data = json.dumps(_reply(body.get("id"), HUGE)).encode()
        self.send_response(200)
        if self.mode == "sse":
            data = b"event: message\ndata: " + data + b"\n\n"
            self.send_header("Content-Type", "text/event-stream")
        else:
            self.send_header("Content-Type", "application/json")
        if self.mode == "gzip":
            data = gzip.compress(json.dumps(_reply(body.get("id"), 10)).encode())
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except OSError:  # the client hung up at the bound
            pass

    def do_DELETE(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def liar():
    servers = []

    def start(mode):
        handler = type("Liar", (_Liar,), {"mode": mode})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/mcp"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("mode", ["json", "sse"])
def test_an_oversized_http_message_fails_the_connection_with_the_reason(make_kernel, liar, mode):
    """A 4 MiB JSON body or SSE event against a 64 KiB bound: the server fails, saying so, nothing hangs."""
    k = make_kernel({"liar": {"url": liar(mode), "max_message_bytes": LIMIT, "connect_timeout": 30}})
    [status] = runtime_of(k).status()
    assert status["state"] == "failed"
    assert "sent a message over 64 KiB; raise max_message_bytes" in status["error"]


def test_a_compressed_http_body_is_refused_as_unboundable(make_kernel, liar):
    """zagent asks for identity encoding; a server that gzips anyway is refused (its decoded size is unknown)."""
    k = make_kernel({"liar": {"url": liar("gzip"), "connect_timeout": 30}})
    [status] = runtime_of(k).status()
    assert status["state"] == "failed" and "compressed response (Content-Encoding: gzip)" in status["error"]


@pytest.mark.parametrize(("data", "count", "expected"), [
    (b"data: abc", 9, 9),                 # no blank line: the event goes on
    (b"x\n\ndata: ab", 40, 8),            # an event ended: only what follows counts
    (b"\r\n\r\ndata", 30, 4),              # CRLF line ends
    (b"a\r\rbc", 5, 2),                   # CR line ends
])
def test_the_sse_event_size_counts_bytes_after_the_last_blank_line(data, count, expected):
    """``_since_blank_line``: the bytes of the event being read, after the last blank line if there is one."""
    assert _since_blank_line(data, count) == expected
