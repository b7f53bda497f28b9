"""An HTTP server refusing the credentials at start-up: the status code and a hint, never header values."""

import logging

import pytest

from mcp_helpers import HttpDemo
from zagent_mcp.plugin import runtime_of

GOOD = "good-token-123"


@pytest.fixture(scope="module")
def auth_demo():
    """The demo server over streamable HTTP requiring `Authorization: Bearer good-token-123`."""
    server = HttpDemo(token=GOOD)
    try:
        yield server.start()
    finally:
        server.stop()


def _start(make_kernel, url, headers):
    k = make_kernel({"web": {"url": url, "headers": headers, "connect_timeout": 10}})
    return k, runtime_of(k).status()[0]


def test_the_right_token_connects(make_kernel, auth_demo):
    """With the token the server expects, the server is ready and its tools run."""
    k, status = _start(make_kernel, auth_demo, {"Authorization": f"Bearer {GOOD}"})
    assert status["state"] == "ready"
    assert k.run_tool({"name": "web.add", "arguments": {"a": 1, "b": 2}}).value == {"sum": 3}


def test_a_401_is_reported_with_status_and_a_hint_to_check_the_headers(make_kernel, auth_demo, caplog):
    """A refused token: the error says HTTP 401, names the headers sent and says to check them, and never
    shows the header value (status, warning)."""
    caplog.set_level(logging.DEBUG)
    wrong = "wrong-token-987"
    _, status = _start(make_kernel, auth_demo, {"Authorization": f"Bearer {wrong}"})
    error = status["error"]
    assert status["state"] == "failed"
    assert "HTTP 401 Unauthorized" in error and "'headers'" in error and "headers sent were: Authorization" in error
    assert wrong not in error and wrong not in caplog.text
    assert "HTTP 401" in caplog.text


def test_a_401_without_headers_says_none_are_configured(make_kernel, auth_demo):
    """No `headers` at all: the 401 error says so, which is the likely fix."""
    _, status = _start(make_kernel, auth_demo, {})
    assert "HTTP 401" in status["error"] and "no 'headers' are configured" in status["error"]


def test_a_403_is_reported_with_status_and_a_hint_about_access(make_kernel, auth_demo):
    """A token the server knows but that lacks the needed scope: HTTP 403 with the server's reason."""
    _, status = _start(make_kernel, auth_demo, {"Authorization": "Bearer no-scope"})
    error = status["error"]
    assert "HTTP 403 Forbidden" in error and "insufficient_scope" in error and "scopes" in error
    assert "no-scope" not in error.replace("insufficient_scope", "")
