"""Errors are classified once: each HTTP failure becomes one typed error with the right ``retryable``,
and the HTTP policy retries exactly the retryable ones (read timeouts and ``x-should-retry: false`` excepted)."""

from __future__ import annotations

import json

import pytest

from tests.servers import hostile
from tests.servers.hostile import HostileServer
from zagent import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    NotFoundError,
    ProtocolError,
    ProviderConfigError,
    ProviderError,
    ProviderTimeout,
    RateLimitError,
)

KEY = "sk-errors-test-key-0123456789"


def _body(message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": "x"}}).encode()


def _llm(kernel, server, **options):
    return kernel.llm("openai:m", base_url=server.url, api_key=KEY, retry_backoff=0.001, **options)


@pytest.mark.parametrize("status, cls, retryable, requests", [
    (400, BadRequestError, False, 1),
    (401, AuthenticationError, False, 1),
    (403, AuthenticationError, False, 1),
    (404, NotFoundError, False, 1),
    (413, BadRequestError, False, 1),
    (422, BadRequestError, False, 1),
    (429, RateLimitError, True, 3),
    (500, ProviderError, True, 3),
    (503, ProviderError, True, 3),
])
def test_each_status_gets_its_type_and_retryable_flag(kernel, status, cls, retryable, requests):
    """A status maps to one error type; retryable ones are tried 1 + max_retries times, the others once."""
    with HostileServer(hostile.reply(status, _body("nope"))) as server:
        with pytest.raises(cls) as info:
            _llm(kernel, server).complete("hi")
    assert type(info.value) is cls and info.value.retryable is retryable and info.value.status == status
    assert len(server.requests) == requests


def test_unparseable_reply_is_a_protocol_error_and_not_retried(kernel):
    """A 200 whose body is not the protocol's JSON is ProtocolError (not retryable), after one request."""
    with HostileServer(hostile.reply(200, b"<html>hello</html>", content_type="text/html")) as server:
        with pytest.raises(ProtocolError, match="not valid JSON") as info:
            _llm(kernel, server).complete("hi")
    assert info.value.retryable is False and len(server.requests) == 1


def test_bad_base_url_scheme_is_a_config_error(kernel):
    """A base URL that is not http(s) is ProviderConfigError, which is also a ConfigError; not retryable."""
    llm = kernel.llm("openai:m", base_url="ftp://127.0.0.1:1/v1", api_key=KEY, retry_backoff=0.001)
    with pytest.raises(ProviderConfigError) as info:
        llm.complete("hi")
    assert isinstance(info.value, ConfigError) and info.value.retryable is False


def test_class_defaults_of_retryable():
    """The documented defaults: rate limits, timeouts and cut streams are retryable; the rest are not."""
    from zagent import DeadlineExceeded, ResponseTooLarge, StreamInterrupted

    assert RateLimitError("x").retryable and ProviderTimeout("x").retryable and StreamInterrupted("x").retryable
    for cls in (ProviderError, AuthenticationError, BadRequestError, NotFoundError, ProtocolError,
                ProviderConfigError, ResponseTooLarge, DeadlineExceeded):
        assert cls("x").retryable is False, cls
    assert ProviderError("x", retryable=True).retryable is True


@pytest.mark.timeout(60)
def test_read_timeout_on_a_generation_call_is_not_retried(kernel):
    """A read timeout is raised after one request (the server may still be generating), saying so."""
    with HostileServer(hostile.hang()) as server:
        with pytest.raises(ProviderTimeout) as info:
            _llm(kernel, server, timeout={"read": 0.3}).complete("hi")
    assert len(server.requests) == 1
    assert info.value.retryable is False and "not retried" in str(info.value)
    assert "retry_read_timeouts=True" in str(info.value) and "ZAGENT_TIMEOUT" in str(info.value)


@pytest.mark.timeout(60)
def test_read_timeouts_are_retried_when_asked(kernel):
    """retry_read_timeouts=True brings back retries of read timeouts (1 + max_retries requests)."""
    with HostileServer(hostile.hang()) as server:
        with pytest.raises(ProviderTimeout) as info:
            _llm(kernel, server, timeout={"read": 0.2}, retry_read_timeouts=True).complete("hi")
    assert len(server.requests) == 3 and info.value.retryable is True


def test_x_should_retry_false_stops_retries_of_a_5xx(kernel):
    """``x-should-retry: false`` on a 503 means one request and a non-retryable error."""
    with HostileServer(hostile.reply(503, _body("down"), headers={"x-should-retry": "false"})) as server:
        with pytest.raises(ProviderError) as info:
            _llm(kernel, server).complete("hi")
    assert len(server.requests) == 1 and info.value.retryable is False


def test_x_should_retry_true_retries_a_4xx(kernel):
    """``x-should-retry: true`` on a 400 is retried like a 5xx (as the official SDKs do)."""
    with HostileServer(hostile.reply(400, _body("odd"), headers={"x-should-retry": "true"})) as server:
        with pytest.raises(BadRequestError) as info:
            _llm(kernel, server).complete("hi")
    assert len(server.requests) == 3 and info.value.retryable is True


def test_endless_error_body_is_read_only_in_part(kernel):
    """A 500 whose body never ends is reported (its start read, the rest dropped), not read forever."""
    async def behave(request, writer):
        writer.write(b"HTTP/1.1 500 X\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n")
        while True:
            writer.write(b"10000\r\n" + b"e" * 0x10000 + b"\r\n")
            await writer.drain()

    with HostileServer(behave) as server:
        with pytest.raises(ProviderError, match="HTTP 500"):
            _llm(kernel, server, max_retries=0).complete("hi")
