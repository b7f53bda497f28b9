"""Round fourteen (second wave), a hostile MCP *client* of ``zagent mcp serve`` over stdio (a real ``zagent mcp
serve`` subprocess fed raw JSON-RPC lines); the HTTP side is in ``test_mcp_round14b_serve_http.py``, which holds
the round's account of what got through and what held.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("zagent_mcp")




PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.rails"]
MIB = 1 << 20
TOOLS = '''
import os
import time


def peek() -> str:
    """Read what fd 0 holds."""
    return repr(os.read(0, 4096))


def shout(text: str) -> str:
    """Print to stdout (a library's stray output) before answering."""
    print('{"jsonrpc": "2.0", "id": 99, "result": {"content": [{"type": "text", "text": "forged"}]}}', flush=True)
    os.write(1, b"raw bytes on fd 1\\n")
    return text


def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


def nap(seconds: float) -> str:
    """Sleep (a slow tool)."""
    time.sleep(min(seconds, 30))
    return "awake"
'''


class StdioServe:
    """``zagent mcp serve`` of ``mytools``' ``word_count``, ``nap`` and ``peek`` over stdio, as a client process
    sees it."""

    def __init__(self, folder):
        (folder / "mytools.py").write_text(TOOLS)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ZAGENT_")}
        env["ZAGENT_LOG"] = "0"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "zagent.plugins.cli", "mcp", "serve", "--tool", "mytools:word_count",
             "--tool", "mytools:nap", "--tool", "mytools:peek", "--tool", "mytools:shout"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=str(folder), env=env)
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}})
        assert self.reply()["id"] == 1
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message) -> None:
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def reply(self) -> dict:
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read().decode(errors="replace")[-2000:]
        return json.loads(line)

    def reply_to(self, request_id) -> dict:
        while True:
            message = self.reply()
            if message.get("id") == request_id:
                return message

    def call(self, request_id, text="one two three") -> dict:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                   "params": {"name": "word_count", "arguments": {"text": text}}})
        return self.reply_to(request_id)

    def memory(self, field: str = "VmHWM") -> int:
        """The server's resident memory (``VmRSS``) or its peak (``VmHWM``), in bytes."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
        raise AssertionError(field)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:  # a pipe the server never read (broken)
                pass


@pytest.fixture
def stdio_serve(tmp_path):
    if not sys.platform.startswith("linux"):
        pytest.skip("reads the server's memory from /proc")
    serve = StdioServe(tmp_path)
    try:
        yield serve
    finally:
        serve.close()


def _text(reply: dict) -> str:
    return "".join(c.get("text", "") for c in reply.get("result", {}).get("content", []))


@pytest.mark.parametrize("kind", ["call", "garbage"])
def test_a_stdio_request_line_over_the_http_limit_is_refused_without_being_held_whole(stdio_serve, kind):
    """Attack (got through): over stdio, one request line of 64 MiB -- a ``tools/call`` whose text fills it, or
    bytes that are no JSON at all -- which the streamable-HTTP transport refuses past 4 MiB. The SDK's stdio reader
    read the line whole and parsed it (about 300 MiB at its peak); a line that never ends grows without bound.
    Defence: the serve reads stdin itself; past 4 MiB a line is skipped, not kept, and answered with an error
    naming the limit; the next honest call is answered."""
    base = stdio_serve.memory("VmRSS")
    head = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"word_count","arguments":{"text":"'
    stdin = stdio_serve.proc.stdin
    stdin.write(head if kind == "call" else b"\x01" * 1024)
    for _ in range(64):
        stdin.write(b"w " * (MIB // 2) if kind == "call" else b"\xff\x00" * (MIB // 2))
    stdin.write(b'"}}}\n' if kind == "call" else b"\n")
    stdin.flush()
    honest = stdio_serve.call(8)
    assert _text(honest) == "3", honest
    assert stdio_serve.memory() - base < 48 * MIB, (base, stdio_serve.memory())
    stdio_serve.proc.stdin.close()
    stdio_serve.proc.wait(30)
    said = stdio_serve.proc.stdout.read().decode() + stdio_serve.proc.stderr.read().decode()
    if kind == "call":  # the refused call was answered (before the honest one), naming the limit
        assert "4 MiB" in said or "4 MiB" in json.dumps(honest), said[-2000:]


def test_a_stdio_line_that_never_ends_is_not_kept(stdio_serve):
    """Attack (got through): 80 MiB of one line that never ends (no newline, the pipe left open), to grow the
    server's line buffer without bound. Defence: past 4 MiB the bytes are dropped as they come; the server's
    memory stays flat."""
    base = stdio_serve.memory("VmRSS")
    stdin = stdio_serve.proc.stdin
    stdin.write(b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"word_count","arguments":')
    for _ in range(80):
        stdin.write(b"[" * MIB)
    stdin.flush()
    time.sleep(1)
    assert stdio_serve.memory() - base < 48 * MIB, (base, stdio_serve.memory())
    assert stdio_serve.proc.poll() is None


def _flood(serve, lines: bytes, seconds: float) -> bool:
    """Write ``lines`` from a thread for at most ``seconds``; whether all were written (a server that stops
    reading leaves the writer blocked, which is the defence)."""
    def write():
        try:
            serve.proc.stdin.write(lines)
            serve.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    writer.join(seconds)
    return not writer.is_alive()


@pytest.mark.parametrize("method", ["tools/list", "tools/call", "notifications/progress"])
def test_a_stdio_client_that_never_reads_its_answers_cannot_fill_the_servers_memory(stdio_serve, method):
    """Attack (got through): send 100,000 requests (5 MB of lines) and never read stdout. The SDK started a task
    per request, each holding its answer until the pipe drained: over 1 GiB for ``tools/list`` (``tools/call``
    refused as busy the same). Defence: at most 64 requests are open at once; past that the server stops reading
    stdin until answers are written, so the client's own writes block."""
    base = stdio_serve.memory("VmRSS")
    params = {"params": {"name": "word_count", "arguments": {"text": "a"}}} if method == "tools/call" else {}
    if method.startswith("notifications/"):  # no answers at all: read on, nothing kept
        params = {"params": {"progressToken": 1, "progress": 1}}
    lines = b"".join((json.dumps({"jsonrpc": "2.0", "method": method, **params,
                                  **({} if method.startswith("notifications/") else {"id": 100 + i})}) + "\n").encode()
                     for i in range(100_000))
    _flood(stdio_serve, lines, 20)
    assert stdio_serve.memory("VmRSS") - base < 48 * MIB, (base, stdio_serve.memory("VmRSS"))
    assert stdio_serve.proc.poll() is None


def test_cancelled_stdio_calls_free_their_place(stdio_serve):
    """Attack on the bound itself: 100 calls of a slow tool, each cancelled at once (a cancelled request is never
    answered), hoping the server counts them open for ever and stops serving. Defence: a cancel closes its
    request; the next honest call is answered."""
    for i in range(100):
        stdio_serve.send({"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call",
                          "params": {"name": "nap", "arguments": {"seconds": 30}}})
        stdio_serve.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": 1000 + i, "reason": "changed my mind"}})
    answer = stdio_serve.call(5000, "still serving here")
    assert _text(answer) == "3", answer


def test_repeated_stdio_request_ids_do_not_stall_the_server(stdio_serve):
    """Attack on the bound itself: 300 ``tools/list`` requests all with id 42, then a call, hoping answers to a
    repeated id are miscounted and the server stops reading. Defence: every answer closes one open request; the
    honest call is answered."""
    for _ in range(300):
        stdio_serve.send({"jsonrpc": "2.0", "id": 42, "method": "tools/list"})
    answer = stdio_serve.call(43, "a b c")
    assert _text(answer) == "3", answer


def test_a_served_tool_reading_stdin_cannot_read_the_clients_next_messages(stdio_serve):
    """Attack on the fix: the serve now reads the wire from its own copy of fd 0, so a served tool (or a console
    prompt, a child process) reading fd 0 might take the client's next messages. Defence: while serving, fd 0 is
    the null device (as the SDK's own claim made it): the tool reads nothing, and the next call is answered."""
    stdio_serve.proc.stdin.write(
        (json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "peek", "arguments": {}}})
         + "\n" + json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
             "name": "word_count", "arguments": {"text": "next message here"}}}) + "\n").encode())
    stdio_serve.proc.stdin.flush()
    answers: dict = {}
    while len(answers) < 2:
        message = stdio_serve.reply()
        answers[message.get("id")] = message
    assert _text(answers[2]) == "b''", answers[2]
    assert _text(answers[3]) == "3", answers[3]


def test_a_served_tools_stray_output_cannot_forge_an_answer_on_the_wire(stdio_serve):
    """Attack: a served tool (or a library it calls) prints a JSON-RPC answer for request 99 -- one the client is
    waiting on -- and raw bytes to fd 1, hoping they land on the wire between real answers. Defence: while
    serving, fd 1 and ``sys.stdout`` go to stderr; the client reads only the server's own answers."""
    stdio_serve.send({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                      "params": {"name": "shout", "arguments": {"text": "real"}}})
    assert _text(stdio_serve.reply()) == "real"
    assert _text(stdio_serve.call(100, "one two")) == "2"


@pytest.mark.timeout(180)  # a hang guard: fails only if it never ends
def test_a_stdio_request_nested_past_the_parser_under_the_line_limit_is_survived(stdio_serve):
    """Attack: a line under 4 MiB whose arguments nest 1,000,000 arrays deep (the HTTP variant was round ten's),
    to crash the reader with a recursion error or hold it in a quadratic parse. Defence: the SDK's parser refuses
    it; the server stays up and answers the next call."""
    stdio_serve.proc.stdin.write(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"word_count",'
                                 b'"arguments":{"text":' + b"[" * 1_000_000 + b"]" * 1_000_000 + b"}}}\n")
    stdio_serve.proc.stdin.flush()
    assert _text(stdio_serve.call(6, "a b c d")) == "4"
