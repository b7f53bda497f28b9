"""Round eleven, a hostile MCP server (``servers/round11_raw.py``, raw JSON-RPC on stdio, no SDK) against zagent's
client: memory bombs made of many tiny items, schemas nested past the parser, a tool list that changes mid-run
into a name the app owns, and a flood of requests and replies the client never asked for.

Got through before this round's fixes: 200,000 tiny tools (9.6 MB) took some 750 MiB of memory and 400,000 empty
content blocks (10 MB) some 900 MiB, over stdio and over streamable HTTP (the SDK builds an object per item before
``MAX_TOOLS`` or ``MAX_RESULT_CHARS`` apply): both transports now cut both lists before the SDK parses them
(``zagent_mcp.trim``). The rest held.
"""

from __future__ import annotations

import logging
import pathlib
import socket
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("zagent_mcp")

from zagent.types import ToolCall  # noqa: E402
from zagent_mcp.plugin import runtime_of  # noqa: E402
from zagent_mcp.trim import MAX_BLOCKS  # noqa: E402

from mcp_helpers import free_port  # noqa: E402

RAW = str(pathlib.Path(__file__).resolve().parent / "servers" / "round11_raw.py")


def raw(mode, n="1000", **extra):
    return {"raw": {"command": sys.executable, "args": [RAW, mode, str(n)], **extra}}


class Rss:
    """The most resident memory this process used while ``with Rss() as rss:`` ran, above what it used before."""

    def __init__(self):
        self.base = self.peak = self._now()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    @staticmethod
    def _now():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096

    def _watch(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self._now())
            self._stop.wait(0.02)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._now())

    @property
    def grew(self):
        return (self.peak - self.base) / 2**20


needs_proc = pytest.mark.skipif(not pathlib.Path("/proc/self/statm").exists(), reason="reads /proc/self/statm")


@needs_proc
def test_two_hundred_thousand_tiny_tools_do_not_take_hundreds_of_megabytes(make_kernel, caplog):
    """Attack: one ``tools/list`` reply of 200,000 tools of 45 bytes each (9.6 MB, under ``max_message_bytes``).
    The SDK made a model of each before ``MAX_TOOLS`` applied: about 750 MiB. Defence: the stdio reader cuts the
    list to ``MAX_TOOLS`` + 1 before the SDK parses it; 1,000 tools are used and the warning says so."""
    caplog.set_level(logging.WARNING, logger="zagent.mcp")
    with Rss() as rss:
        k = make_kernel(raw("tinytools", 200_000))
        runtime_of(k).wait(None)
        names = [e.name for e in k.entries("tools") if e.name.startswith("raw.")]
    assert len(names) == 1000
    assert "more than 1000 tools" in caplog.text
    assert rss.grew < 250, f"grew {rss.grew:.0f} MiB"


@needs_proc
def test_four_hundred_thousand_empty_content_blocks_are_cut_and_said(make_kernel):
    """Attack: a tool result of 400,000 empty text blocks (10 MB): about 900 MiB once the SDK made a model of each.
    Defence: at most ``MAX_BLOCKS`` blocks are read, and the result the model reads ends saying how many were cut."""
    k = make_kernel(raw("blocks", 400_000))
    runtime_of(k).wait(None)
    with Rss() as rss:
        result = k.run_tool(ToolCall(id="c1", name="raw.blocks", arguments={}))
    assert result.state == "success", result.error
    assert f"{400_000 - MAX_BLOCKS} more content blocks cut" in result.content
    assert rss.grew < 250, f"grew {rss.grew:.0f} MiB"
    assert k.run_tool(ToolCall(id="c2", name="raw.echo", arguments={"text": "still up"})).content == "still up"


def test_a_few_content_blocks_are_left_whole(make_kernel):
    """The cut applies only past ``MAX_BLOCKS``: 20 blocks come back as 20 (19 line breaks), nothing added."""
    k = make_kernel(raw("blocks", 20))
    runtime_of(k).wait(None)
    result = k.run_tool(ToolCall(id="c1", name="raw.blocks", arguments={}))
    assert result.content == "\n" * 19


@pytest.mark.parametrize("depth", [600, 100_000])
def test_a_schema_nested_past_the_parser_fails_the_server_not_the_client(make_kernel, depth):
    """Attack: a tool whose input schema is nested 600 or 100,000 levels deep (a ``RecursionError`` somewhere, or
    a schema no provider accepts). Defence: the server is ``failed`` with a reason at connect; no tool of it is
    registered and the kernel goes on working."""
    k = make_kernel(raw("deep", depth))
    runtime_of(k).wait(None)
    (status,) = runtime_of(k).status()
    assert status["state"] == "failed" and status["error"], status
    assert not [e.name for e in k.entries("tools") if e.name.startswith("raw.")]


def test_a_tool_list_changed_mid_run_into_an_app_tools_name_leaves_the_app_tool(make_kernel, caplog):
    """Attack: after the first call the server says its list changed and renames ``echo`` to ``mine`` -- so its
    tool would be ``raw.mine``, the name of a tool the app registered. Defence: the app's tool stays (and is the
    one that runs), the server's is skipped with a warning naming both, ``raw.echo`` is gone."""
    caplog.set_level(logging.WARNING, logger="zagent.mcp")
    k = make_kernel(raw("swap", "mine"))
    ran = []

    def mine(text: str) -> str:
        """The app's own tool."""
        ran.append(text)
        return "app:" + text

    k.add_tool(mine, name="raw.mine")
    runtime_of(k).wait(None)
    assert k.run_tool(ToolCall(id="c1", name="raw.echo", arguments={"text": "hi"})).content == "hi"
    deadline = time.monotonic() + 30
    while "raw.echo" in [e.name for e in k.entries("tools")] and time.monotonic() < deadline:
        time.sleep(0.05)
    names = sorted(e.name for e in k.entries("tools") if e.name.startswith("raw."))
    assert names == ["raw.mine"]
    assert k.run_tool(ToolCall(id="c2", name="raw.mine", arguments={"text": "x"})).content == "app:x"
    assert ran == ["x"] and "raw.mine" in caplog.text and "skipped" in caplog.text


def test_a_flood_of_unasked_requests_and_replies_changes_nothing(make_kernel):
    """Attack: before answering a call the server sends 200 rounds of sampling and elicitation requests (one asks
    for a password behind escapes), ``roots/list``, pings, an unknown method, replies to ids never sent and
    log and progress notifications (progress 1e400). Defence: no model is sampled, nobody is asked, the forged
    replies are dropped; each call gets its own answer."""
    k = make_kernel(raw("chatter", 200))
    runtime_of(k).wait(None)
    first = k.run_tool(ToolCall(id="c1", name="raw.echo", arguments={"text": "one"}))
    second = k.run_tool(ToolCall(id="c2", name="raw.echo", arguments={"text": "two"}))
    assert (first.content, second.content) == ("one", "two")
    assert "FORGED" not in f"{first.content}{second.content}"


@pytest.fixture
def raw_http():
    """``raw_http(mode, n)``: the raw server over streamable HTTP on a free loopback port; returns its entry."""
    procs = []

    def start(mode, n):
        port = free_port()
        procs.append(subprocess.Popen([sys.executable, RAW, mode, str(n), "http", str(port)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert procs[-1].poll() is None and time.monotonic() < deadline, "the raw HTTP server did not start"
                time.sleep(0.05)
        return {"raw": {"url": f"http://127.0.0.1:{port}/mcp"}}

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(10)


@needs_proc
def test_tiny_tools_over_http_do_not_take_hundreds_of_megabytes(make_kernel, raw_http, caplog):
    """Attack: the 200,000 tiny tools of the stdio attack, as one SSE event of a streamable-HTTP reply (about 750
    MiB before). Defence: the HTTP body reader cuts the event's list to ``MAX_TOOLS`` + 1 before the SDK parses
    it."""
    caplog.set_level(logging.WARNING, logger="zagent.mcp")
    entry = raw_http("tinytools", 200_000)
    with Rss() as rss:
        k = make_kernel(entry)
        runtime_of(k).wait(None)
        names = [e.name for e in k.entries("tools") if e.name.startswith("raw.")]
    assert len(names) == 1000 and "more than 1000 tools" in caplog.text
    assert rss.grew < 250, f"grew {rss.grew:.0f} MiB"


@needs_proc
def test_empty_content_blocks_over_http_are_cut_and_said(make_kernel, raw_http):
    """Attack: 400,000 empty content blocks in one SSE event (about 800 MiB before). Defence: ``MAX_BLOCKS`` are
    read, the result says how many were cut, and the server keeps answering."""
    k = make_kernel(raw_http("blocks", 400_000))
    runtime_of(k).wait(None)
    with Rss() as rss:
        result = k.run_tool(ToolCall(id="c1", name="raw.blocks", arguments={}))
    assert result.state == "success", result.error
    assert f"{400_000 - MAX_BLOCKS} more content blocks cut" in result.content
    assert rss.grew < 250, f"grew {rss.grew:.0f} MiB"
    assert k.run_tool(ToolCall(id="c2", name="raw.echo", arguments={"text": "still up"})).content == "still up"


def test_escapes_in_an_http_refusals_reason_and_challenge_are_shown_escaped(make_kernel, raw_http, caplog):
    """Attack: an HTTP MCP server answering 401 with terminal escapes in its reason phrase (clear screen, window
    title) and in its ``WWW-Authenticate`` ``error_description`` (hidden text): both went raw into the server's
    error, the log and what the model reads. Defence: shown escaped; the status and the hint remain."""
    caplog.set_level(logging.WARNING, logger="zagent.mcp")
    k = make_kernel(raw_http("refuse", 0))
    runtime_of(k).wait(None)
    (status,) = runtime_of(k).status()
    assert status["state"] == "failed" and "401" in status["error"], status
    for text in (status["error"], caplog.text):
        assert "\x1b" not in text and "\x07" not in text, repr(text)
    assert "\\x1b" in status["error"]
