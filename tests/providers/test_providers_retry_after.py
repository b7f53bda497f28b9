"""A 429's Retry-After is really waited (seconds or HTTP date), up to the documented ``retry_max_wait`` (60 s).

The client's sleep is patched to record the delays instead of sleeping, so
nothing here depends on the clock of a busy machine.
"""

from __future__ import annotations

import time
import types
from email.utils import formatdate

import pytest

import zagent.providerkit.wire
from zagent import RateLimitError
from zagent.providerkit import HttpClient, HttpConfig
from tests.servers import anthropic_server, openai_server
from tests.servers.anthropic_server import AnthropicServer
from tests.servers.openai_server import OpenAIServer

KEY = "sk-retry-after-test"
NOW = 1_700_000_000.0  # the patched wall clock for HTTP-date hints


@pytest.fixture
def k(make_kernel):
    """A fresh kernel with the openai and anthropic plugins only, closed after the test."""
    return make_kernel("zagent.plugins.openai", "zagent.plugins.anthropic", strict=False)


@pytest.fixture
def delays(monkeypatch):
    """The seconds each retry would have slept, in order (nothing really sleeps)."""
    slept: list[float] = []

    async def record(self, seconds):
        slept.append(seconds)

    monkeypatch.setattr(HttpClient, "_sleep", record)
    return slept


@pytest.fixture
def fixed_clock(monkeypatch):
    """``zagent.providerkit.wire`` reads the wall clock as NOW (for HTTP-date Retry-After values)."""
    monkeypatch.setattr(zagent.providerkit.wire, "time", types.SimpleNamespace(time=lambda: NOW, monotonic=time.monotonic))


def openai_429(retry_after: str):
    return openai_server.error(429, "Rate limit reached", "rate_limit_exceeded", headers={"retry-after": retry_after})


def anthropic_429(retry_after: str):
    return anthropic_server.error(429, "rate_limit_error", "Number of requests has exceeded your rate limit",
                                  headers={"retry-after": retry_after})


def openai(k, server, **options):
    return k.llm("openai:gpt-4o-mini", base_url=server.url, api_key=KEY, **options)


def anthropic(k, server, **options):
    return k.llm("anthropic:claude-sonnet-4-5", base_url=server.url, api_key=KEY, **options)


def test_documented_cap_is_60_seconds():
    """The default retry_max_wait, the longest Retry-After honoured, is the documented 60 s."""
    assert HttpConfig().retry_max_wait == 60.0
    assert "retry_max_wait`` (60 s)" in HttpConfig.__doc__


def test_openai_waits_retry_after_seconds(k, delays):
    """openai: a 429 with Retry-After: 7 sleeps exactly 7.0 s, then returns the next reply."""
    with OpenAIServer(key=KEY) as server:
        server.then(openai_429("7"))
        assert openai(k, server).complete("hi").text == "echo: hi"
        assert len(server.requests) == 2
    assert delays == [7.0]


def test_openai_stream_waits_retry_after_seconds(k, delays):
    """openai streaming: a 429 with Retry-After: 7 before the stream starts sleeps 7.0 s, then streams."""
    with OpenAIServer(key=KEY) as server:
        server.then(openai_429("7"))
        chunks = list(openai(k, server).stream("hi"))
    assert chunks[-1].completion.text == "echo: hi"
    assert delays == [7.0]


def test_openai_waits_until_an_http_date(k, delays, fixed_clock):
    """openai: Retry-After as an HTTP date 7 s after now sleeps 7.0 s."""
    with OpenAIServer(key=KEY) as server:
        server.then(openai_429(formatdate(NOW + 7, usegmt=True)))
        assert openai(k, server).complete("hi").text == "echo: hi"
    assert delays == [7.0]


def test_hint_longer_than_backoff_cap_is_still_waited_in_full(k, delays):
    """A hint of 30 s is waited in full: retry_max_backoff (8 s) caps only zagent's own backoff."""
    with OpenAIServer(key=KEY) as server:
        server.then(openai_429("30"))
        openai(k, server).complete("hi")
    assert delays == [30.0]


def test_hint_at_the_cap_is_waited_and_beyond_it_is_not(k, delays):
    """Retry-After: 60 (= retry_max_wait) is waited; 61 raises RateLimitError at once, naming the cap."""
    with OpenAIServer(key=KEY) as server:
        server.then(openai_429("60"))
        assert openai(k, server).complete("hi").text == "echo: hi"
        server.then(openai_429("61"))
        with pytest.raises(RateLimitError, match=r"asks to wait 61 s, longer than retry_max_wait=60 s") as info:
            openai(k, server).complete("hi")
        assert len(server.requests) == 3
    assert delays == [60.0]
    assert info.value.retry_after == 61.0


def test_lowered_cap_applies_to_the_hint(k, delays):
    """With retry_max_wait=5, Retry-After: 7 is not waited: the caller gets the RateLimitError."""
    with OpenAIServer(key=KEY) as server:
        server.then(openai_429("7"))
        with pytest.raises(RateLimitError, match="retry_max_wait=5 s"):
            openai(k, server, retry_max_wait=5).complete("hi")
    assert delays == []


def test_anthropic_waits_retry_after_seconds(k, delays):
    """anthropic: a 429 rate_limit_error with Retry-After: 7 sleeps exactly 7.0 s, then returns the next reply."""
    with AnthropicServer(key=KEY) as server:
        server.then(anthropic_429("7"))
        assert anthropic(k, server).complete("hi").text == "echo: hi"
        assert len(server.requests) == 2
    assert delays == [7.0]


def test_anthropic_waits_until_an_http_date(k, delays, fixed_clock):
    """anthropic: Retry-After as an HTTP date 7 s after now sleeps 7.0 s."""
    with AnthropicServer(key=KEY) as server:
        server.then(anthropic_429(formatdate(NOW + 7, usegmt=True)))
        assert anthropic(k, server).complete("hi").text == "echo: hi"
    assert delays == [7.0]


def test_anthropic_hint_beyond_the_cap_is_not_waited(k, delays):
    """anthropic: Retry-After: 120 raises RateLimitError after one request, without sleeping."""
    with AnthropicServer(key=KEY) as server:
        server.then(anthropic_429("120"))
        with pytest.raises(RateLimitError) as info:
            anthropic(k, server).complete("hi")
        assert len(server.requests) == 1
    assert delays == [] and info.value.retry_after == 120.0
