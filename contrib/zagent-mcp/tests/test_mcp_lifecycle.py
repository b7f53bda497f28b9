"""Server lifecycle: failures at start, reconnection after a crash, clean shutdown, one state per kernel."""

import logging
import os
import signal
import sys

from mcp_helpers import alive, demo_stdio
from zagent_mcp.plugin import runtime_of


def _pid(k):
    return k.run_tool({"name": "demo.pid", "arguments": {}}).value["result"]


def test_a_server_that_fails_to_start_is_reported_and_skipped(make_kernel, caplog):
    """A server whose command does not exist is logged, listed as failed, and the kernel still starts."""
    caplog.set_level(logging.WARNING, logger="zagent.mcp")
    k = make_kernel({"broken": {"command": "zagent-mcp-no-such-command"}, "demo": demo_stdio(tools=["echo"])})
    assert [t.name for t in k.tools()] == ["demo.echo"]
    status = {s["name"]: s for s in runtime_of(k).status()}
    assert status["broken"]["state"] == "failed"
    assert "zagent-mcp-no-such-command" in status["broken"]["error"]
    assert "'broken'" in caplog.text and "skipped" in caplog.text
    assert k.problems == []


def test_a_server_that_exits_at_start_is_reported_with_its_stderr(make_kernel):
    """A server that dies while starting is failed, and the error shows the end of what it wrote to stderr."""
    script = "import sys; print('missing API key', file=sys.stderr); sys.exit(2)"
    k = make_kernel({"dies": {"command": sys.executable, "args": ["-c", script]}})
    status = runtime_of(k).status()[0]
    assert status["state"] == "failed"
    assert "missing API key" in status["error"]


def test_a_server_slower_than_connect_timeout_is_skipped(make_kernel):
    """A server that never answers the handshake is given up after `connect_timeout`; the kernel starts."""
    script = "import time; time.sleep(60)"
    k = make_kernel({"mute": {"command": sys.executable, "args": ["-c", script], "connect_timeout": 1}})
    status = runtime_of(k).status()[0]
    assert status["state"] == "failed"
    assert "connect_timeout" in status["error"]
    assert k.tools() == []


def test_reconnects_after_the_server_process_is_killed(make_kernel):
    """When the server process dies, the next call starts it again and succeeds."""
    k = make_kernel({"demo": demo_stdio()})
    first = _pid(k)
    os.kill(first, signal.SIGKILL)
    second = _pid(k)
    assert second != first
    assert runtime_of(k).connections["demo"].connects == 2


def test_a_call_cut_by_a_crash_is_not_repeated_unless_the_tool_is_idempotent(make_kernel):
    """A non-idempotent call whose server dies midway is reported (it may have run), and the server restarts."""
    k = make_kernel({"demo": demo_stdio()})
    result = k.run_tool({"name": "demo.crash", "arguments": {}})
    assert result.state == "error"
    assert "restarted" in result.content and "may or may not have run" in result.content
    assert k.run_tool({"name": "demo.echo", "arguments": {"text": "back"}}).value == {"result": "back"}


def test_closing_the_kernel_stops_the_server(make_kernel):
    """`kernel.close()` ends the server process and the plugin's loop."""
    k = make_kernel({"demo": demo_stdio()})
    pid = _pid(k)
    runtime = runtime_of(k)
    k.close()
    assert not alive(pid)
    assert runtime.closed and runtime_of(k) is None
    assert runtime.connections["demo"].state == "closed"


def test_calling_after_close_is_an_error_result_not_a_hang(make_kernel):
    """A tool of a closed kernel answers with an error result (the kernel refuses it: it is no longer available)."""
    k = make_kernel({"demo": demo_stdio()})
    k.tool("demo.echo")  # connected (servers connect in the background)
    k.close()
    result = k.run_tool({"name": "demo.echo", "arguments": {"text": "late"}})
    assert result.state == "error"
    assert "not available" in result.content


def test_kernels_do_not_share_servers(make_kernel):
    """Two kernels with the same configuration each have their own server process and runtime."""
    a = make_kernel({"demo": demo_stdio()})
    b = make_kernel({"demo": demo_stdio()})
    assert runtime_of(a) is not runtime_of(b)
    assert _pid(a) != _pid(b)
    a.close()
    assert b.run_tool({"name": "demo.echo", "arguments": {"text": "b"}}).state == "success"


def test_a_kernel_without_mcp_configuration_keeps_no_state(make_kernel):
    """With no servers configured the plugin registers nothing and keeps no state."""
    k = make_kernel({})
    assert k.tools() == [] and runtime_of(k) is None
