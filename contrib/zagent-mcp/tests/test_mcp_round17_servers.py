"""Round seventeen, a hostile MCP server's ``notifications/tools/list_changed`` and results (``servers/round17_raw.py``,
raw JSON-RPC on stdio and streamable HTTP, no SDK): a server that says its list changed after every listing, a burst
of 5,000 such notifications, a changed list that takes a name the app already holds, a result of millions of tiny
scalars, and an event stream asking to be reopened at once.

Tried (8 attacks in all), 6 got through on the code of the round's start, 5 fixed, 1 open. Against the client:

- a result whose ``structuredContent`` lists 3,000,000 two-letter strings (15 MB, under the 16 MiB message bound;
  round twelve counted only objects and arrays) took 860 MiB once the SDK parsed it: a message listing more than
  ``trim.MAX_VALUES`` (1,000,000) values is an error for its call before the SDK parses it;
- a server answering every ``tools/list`` with ``list_changed`` was listed again at once, forever: some 70 listings
  a second from this Python server, each rebuilding and re-registering every tool of the server (escaping
  descriptions, encoding schemas) on the loop and the registry every agent shares: the list is now read again at most
  once a second (``refresh.REFRESH_INTERVAL``);
- each of those listings logged its skipped tools again and appended them to ``McpRuntime.skipped`` (a name listed
  50 times: 49 lines per listing, growing without end): a skip already reported is neither kept nor logged again,
  and at most ``MAX_SKIPPED`` (1,000) reasons are kept (a server naming new tools to skip at each listing);
- over streamable HTTP, a server answering each ``GET`` (its own messages' stream) with ``retry: 0`` and an at once
  ended stream was opened again without pause, forever (the SDK honours any ``retry``): a ``retry:`` under
  ``bounded.MIN_RETRY_MS`` (1 s) is raised to it as the event stream is read.

A hostile *client* of ``zagent mcp serve`` (1 attack, open, a strict xfail): a 3.8 MiB request (under the 4 MiB line
and body limits) listing 800,000 two-letter strings in its arguments made the server's peak memory grow by some
140 MiB while the SDK parsed it (36 times its size); requests read and waiting for a slot (up to ``max_calls`` * 5,
and 64 lines over stdio) each hold theirs. Left open with the round fourteen item on HTTP clients of ``mcp serve``.

Held: a burst of 5,000 notifications costs at most two more listings; a changed list taking the name of a tool the
app registered leaves the app's tool in place.
"""

from __future__ import annotations

import logging
import pathlib
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("zagent_mcp")

from zagent.types import ToolCall  # noqa: E402
from zagent_mcp.plugin import runtime_of  # noqa: E402

from mcp_helpers import free_port  # noqa: E402

RAW = str(pathlib.Path(__file__).resolve().parent / "servers" / "round17_raw.py")


def _kernel(make_kernel, mode):
    k = make_kernel({"raw": {"command": sys.executable, "args": [RAW, mode], "timeout": 10}})
    runtime_of(k).wait(None)
    return k


def _lists(k):
    """How many times the server's tool list has been read (the server counts and says so)."""
    r = k.run_tool(ToolCall(id="c1", name="raw.echo", arguments={"text": "x"}))
    assert r.state == "success", r.content
    return int(str(r.content).split("=")[1])


@pytest.mark.timeout(60)
def test_a_server_saying_its_list_changed_after_every_listing_is_not_listed_without_pause(make_kernel):
    """Attack (got through, round seventeen): ``churn`` sends ``list_changed`` right after each ``tools/list``
    answer; the client listed it again at once, forever (some 70 times a second from this Python server), rebuilding
    every tool each time on the loop all servers share. Defence: a changed list is read again at most once a second."""
    k = _kernel(make_kernel, "churn")
    first = _lists(k)
    time.sleep(3)
    assert _lists(k) - first <= 5


@pytest.mark.timeout(60)
def test_skipped_tools_of_a_churning_server_are_reported_once(make_kernel, caplog):
    """Attack (got through, round seventeen): ``churn`` lists ``dup`` 50 times; every re-listing appended 49 skip
    messages to ``McpRuntime.skipped`` and logged them again, growing without end while the server ran. Defence: a
    skip already reported is neither kept again nor logged again."""
    caplog.set_level(logging.WARNING, logger="zagent.mcp")
    k = _kernel(make_kernel, "churn")
    _lists(k)  # the call's answer is followed by list_changed: the churn starts
    time.sleep(3)
    skipped = runtime_of(k).skipped
    assert _lists(k) >= 2  # the server did make it list again
    assert len(skipped) == len(set(skipped)) == 1, skipped[:3]
    assert sum("'dup' is skipped" in r.getMessage() for r in caplog.records) == 1


@pytest.mark.timeout(60)
def test_a_server_naming_new_tools_to_skip_at_each_listing_fills_no_unbounded_list(make_kernel, monkeypatch):
    """Attack (got through, round seventeen): ``fresh`` names 30 new tools twice at each listing, so each listing
    gives 30 new reasons to skip. Defence: ``McpRuntime.skipped`` keeps at most ``MAX_SKIPPED`` reasons and a last
    one saying more were skipped (the bound lowered to 20 here to see it in seconds)."""
    import zagent_mcp.runtime

    monkeypatch.setattr(zagent_mcp.runtime, "MAX_SKIPPED", 20)
    k = _kernel(make_kernel, "fresh")
    _lists(k)
    time.sleep(2.5)
    skipped = runtime_of(k).skipped
    assert _lists(k) >= 2
    assert len(skipped) == 21 and "only the first 20 reasons are kept" in skipped[-1]


@pytest.mark.timeout(120)
def test_a_result_of_millions_of_tiny_scalars_is_an_error_not_a_gigabyte(make_kernel):
    """Attack (got through, round seventeen): ``scalars`` answers ``echo`` with a ``structuredContent`` list of
    3,000,000 two-letter strings (15 MB: within ``max_message_bytes``, one array); parsed by the SDK it took some
    860 MiB. Defence: a message listing more than ``MAX_VALUES`` values is replaced by an error for its call before
    it is parsed; the call fails saying why and memory stays near the message's size."""
    import resource

    k = _kernel(make_kernel, "scalars")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = k.run_tool(ToolCall(id="c3", name="raw.echo", arguments={"text": "x"}))
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024  # ru_maxrss: KiB on Linux
    assert r.state == "error" and "JSON values" in str(r.content), str(r.content)[:300]
    assert grown < 300 * 2**20, f"the peak grew by {grown >> 20} MiB"


@pytest.mark.timeout(60)
def test_a_burst_of_list_changed_notifications_costs_at_most_two_listings(make_kernel):
    """Attack (held): ``burst`` sends 5,000 ``list_changed`` notifications after its first listing. Defence:
    notifications arriving while a listing is under way ask for one more listing, not one each."""
    k = _kernel(make_kernel, "burst")
    time.sleep(3)
    assert _lists(k) <= 3


@pytest.mark.timeout(60)
def test_a_changed_list_cannot_take_the_name_of_an_app_tool(make_kernel):
    """Attack (held): after its first listing, ``grab`` lists a tool ``clash`` (zagent's name ``raw.clash``, which
    the app registered meanwhile) and keeps saying its list changed. Defence: the app's tool stays; the server's
    is skipped with a message."""
    k = _kernel(make_kernel, "grab")

    def clash() -> str:
        """The app's own tool."""
        return "the app's tool"

    k.add_tool(clash, name="raw.clash")
    _lists(k)  # the call's answer is followed by list_changed
    time.sleep(2.5)
    r = k.run_tool(ToolCall(id="c2", name="raw.clash", arguments={}))
    assert (r.state, r.content) == ("success", "the app's tool")
    assert any("'raw.clash' is skipped" in s for s in runtime_of(k).skipped)


@pytest.fixture
def raw_http():
    """``raw_http(mode)``: the raw server over streamable HTTP on a free loopback port; returns its entry."""
    procs = []

    def start(mode):
        port = free_port()
        procs.append(subprocess.Popen([sys.executable, RAW, mode, "http", str(port)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert procs[-1].poll() is None, "the raw HTTP server exited"
                time.sleep(0.05)
        return {"raw": {"url": f"http://127.0.0.1:{port}/mcp"}}

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(10)


@pytest.mark.timeout(60)
def test_a_stream_asking_to_be_reopened_at_once_is_not_reopened_without_pause(make_kernel, raw_http):
    """Attack (got through, round seventeen): ``getstorm`` answers every ``GET`` of its message stream with
    ``retry: 0`` (also written `` 0``, ``-5``, ``0_0`` or with an Arabic-Indic digit) and ends it at once; the SDK
    opened it again without waiting, as fast as the server answered (about 22 times a second against this Python
    server), forever. Defence: a ``retry:`` under one second is raised to one second as the stream is read."""
    k = make_kernel(raw_http("getstorm"))
    runtime_of(k).wait(None)
    first = int(str(k.run_tool(ToolCall(id="c4", name="raw.echo", arguments={"text": "x"})).content).split("=")[1])
    time.sleep(3)
    later = int(str(k.run_tool(ToolCall(id="c5", name="raw.echo", arguments={"text": "x"})).content).split("=")[1])
    assert later - first <= 6, (first, later)


@pytest.mark.timeout(120)
@pytest.mark.xfail(strict=True, reason="open: zagent mcp serve bounds a request's bytes (4 MiB), not the values "
                                       "it lists; the SDK's parse of 800,000 short strings takes some 140 MiB")
def test_a_served_request_of_many_tiny_values_does_not_grow_the_server_by_a_hundred_megabytes(tmp_path):
    """Attack (got through, open): a hostile client sends ``zagent mcp serve`` one ``tools/call`` of 3.8 MiB whose
    arguments list 800,000 two-letter strings (under the 4 MiB line limit). Defence wanted: the server's peak
    memory grows by less than 64 MiB (it grew by some 140 MiB while the SDK parsed the request)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("reads the server's memory from /proc")
    from test_mcp_round14b_serve_stdio import MIB, StdioServe

    serve = StdioServe(tmp_path)
    try:
        base = serve.memory("VmRSS")
        serve.proc.stdin.write(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"word_count",'
                               b'"arguments":{"text":"x","junk":[' + b'"ab",' * 800_000 + b'"ab"]}}}\n')
        serve.proc.stdin.flush()
        serve.reply_to(7)
        grown = serve.memory() - base
    finally:
        serve.close()
    assert grown < 64 * MIB, f"{grown / MIB:.0f} MiB"
