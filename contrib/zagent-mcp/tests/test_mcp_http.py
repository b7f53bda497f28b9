"""Streamable HTTP servers: the demo server on 127.0.0.1, headers sent but never shown."""

import logging

from mcp_helpers import HttpDemo, free_port
from zagent_mcp.plugin import runtime_of


def test_tools_of_an_http_server_run_end_to_end(make_kernel, http_demo):
    """A `url` entry connects over streamable HTTP; its tools run like stdio ones."""
    k = make_kernel({"web": {"url": http_demo}})
    assert "web.add" in {t.name for t in k.tools(toolset="web")}
    assert k.run_tool({"name": "web.add", "arguments": {"a": 20, "b": 22}}).value == {"sum": 42}


def test_configured_headers_are_sent_with_every_request(make_kernel, http_demo):
    """`headers` reach the server (here an Authorization header the demo server reads back)."""
    k = make_kernel({"web": {"url": http_demo, "headers": {"Authorization": "Bearer s3cret-token"}}})
    result = k.run_tool({"name": "web.header", "arguments": {"name": "authorization"}})
    assert result.value == {"result": "Bearer s3cret-token"}


def test_header_values_never_appear_in_reprs_status_or_logs(make_kernel, http_demo, caplog):
    """Header values are secrets: not in the config's repr, `zagent mcp list` data, or log records."""
    caplog.set_level(logging.DEBUG)
    k = make_kernel({"web": {"url": http_demo, "headers": {"X-Api-Key": "s3cret-token"}},
                     "down": {"url": f"http://127.0.0.1:{free_port()}/mcp", "headers": {"X-Api-Key": "s3cret-token"}}})
    runtime = runtime_of(k)
    shown = " ".join([repr(c.config) for c in runtime.connections.values()] + [repr(runtime), str(runtime.status())])
    assert "X-Api-Key" in shown
    assert "s3cret-token" not in shown
    assert "s3cret-token" not in caplog.text


def test_an_unreachable_http_server_is_reported_and_skipped(make_kernel):
    """Nothing listening on the URL: the server is failed, the kernel starts."""
    k = make_kernel({"gone": {"url": f"http://127.0.0.1:{free_port()}/mcp", "connect_timeout": 5}})
    status = runtime_of(k).status()[0]
    assert status["state"] == "failed" and status["error"]
    assert k.tools() == []


def test_reconnects_after_the_http_server_restarts(make_kernel):
    """A call after the HTTP server was killed and started again opens a new session and succeeds."""
    server = HttpDemo()
    try:
        k = make_kernel({"web": {"url": server.start()}})
        first = k.run_tool({"name": "web.pid", "arguments": {}}).value["result"]
        server.stop(kill=True)
        server.start()
        second = k.run_tool({"name": "web.pid", "arguments": {}})
        assert second.state == "success", second.content
        assert second.value["result"] != first
    finally:
        server.stop()
