"""Hostile servers against the whole-call deadline and max_response_bytes: endless bodies, trickles, endless streams.

Each test runs a real provider (openai, over httpx) against a real server on
127.0.0.1 that misbehaves; the call must end with a typed error naming the
limit, and memory must stay bounded. No test asserts a duration.
"""

from __future__ import annotations

import asyncio
import json
import tracemalloc

import pytest

from tests.servers import hostile
from tests.servers.hostile import HostileServer
from zagent import DeadlineExceeded, ProtocolError, ProviderError, ResponseTooLarge
from zagent.providerkit import DEFAULT_MAX_RESPONSE_BYTES, HttpConfig

KEY = "sk-limits-test-key-0123456789"
OK = json.dumps({"id": "c", "object": "chat.completion", "model": "m", "choices": [
    {"index": 0, "message": {"role": "assistant", "content": "fine"}, "finish_reason": "stop"}]}).encode()


def _llm(kernel, server, **options):
    return kernel.llm("openai:m", base_url=server.url, api_key=KEY, retry_backoff=0.001, **options)


@pytest.mark.timeout(60)
def test_endless_body_ends_at_max_response_bytes_with_bounded_memory(kernel):
    """A 200 whose body never ends raises ResponseTooLarge naming the limit; memory stays near the limit."""
    with HostileServer(hostile.endless_body()) as server:
        llm = _llm(kernel, server, max_response_bytes=2 * 2**20)
        tracemalloc.start()
        try:
            with pytest.raises(ResponseTooLarge) as info:
                llm.complete("hi")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert "max_response_bytes=2097152" in str(info.value) and "Raise max_response_bytes" in str(info.value)
    assert info.value.limit == 2 * 2**20 and info.value.retryable is False
    assert len(server.requests) == 1
    assert peak < 12 * 2**20, f"peak traced memory {peak} bytes for a 2 MiB limit"


@pytest.mark.timeout(60)
def test_announced_length_over_the_limit_is_refused_before_reading(kernel):
    """A Content-Length above max_response_bytes is refused at once, naming the announced size."""
    with HostileServer(hostile.trickle(length=10**9)) as server:
        with pytest.raises(ResponseTooLarge, match="announced 1000000000 bytes"):
            _llm(kernel, server, max_response_bytes=1000).complete("hi")


@pytest.mark.timeout(60)
def test_trickling_body_ends_at_the_deadline(kernel):
    """A server sending one byte every 50 ms never trips the read timeout; the deadline ends the call."""
    with HostileServer(hostile.trickle(every=0.05)) as server:
        llm = _llm(kernel, server, deadline=1.0, timeout=30)
        with pytest.raises(DeadlineExceeded) as info:
            llm.complete("hi")
    assert "deadline=1 s" in str(info.value) and "raise deadline=" in str(info.value)
    assert info.value.retryable is False and info.value.deadline == 1.0
    assert len(server.requests) == 1


@pytest.mark.timeout(60)
def test_endless_stream_ends_at_the_deadline(kernel):
    """A well-formed event stream that never finishes ends at the deadline, after the text it did send."""
    with HostileServer(hostile.endless_sse(every=0.01)) as server:
        llm = _llm(kernel, server, deadline=1.0)
        seen = []
        with pytest.raises(DeadlineExceeded):
            for chunk in llm.stream("hi"):
                seen.append(chunk.text)
    assert seen and seen[0] == "la "


@pytest.mark.timeout(60)
def test_endless_stream_ends_at_max_response_bytes(kernel):
    """A stream that never ends and never pauses is cut by max_response_bytes, counted over the whole stream."""
    with HostileServer(hostile.endless_sse(every=0, text="z" * 1000)) as server:
        llm = _llm(kernel, server, max_response_bytes=256 * 1024, deadline=None)
        with pytest.raises(ResponseTooLarge, match="streamed"):
            for _ in llm.stream("hi"):
                pass


@pytest.mark.timeout(60)
def test_slow_consumer_of_a_stream_gets_the_deadline_at_its_next_read(kernel):
    """Time the caller spends between chunks counts: the next read after the deadline raises."""
    with HostileServer(hostile.endless_sse(every=0.001)) as server:
        llm = _llm(kernel, server, deadline=0.5)

        async def consume():
            async for _chunk in llm.astream("hi"):
                await asyncio.sleep(0.8)  # past the deadline while not reading

        with pytest.raises(DeadlineExceeded):
            asyncio.run(consume())


@pytest.mark.timeout(60)
def test_deadline_bounds_retries_and_their_waits(kernel):
    """A 503 asking to wait longer than the time left is not waited for: the 503 is raised at once."""
    body = json.dumps({"error": {"message": "busy"}}).encode()
    with HostileServer(hostile.reply(503, body, headers={"retry-after": "5"})) as server:
        llm = _llm(kernel, server, deadline=2.0, retry_max_wait=60)
        with pytest.raises(ProviderError, match="HTTP 503") as info:
            llm.complete("hi")
    assert not isinstance(info.value, DeadlineExceeded)
    assert len(server.requests) == 1


@pytest.mark.timeout(60)
def test_deadline_covers_a_hanging_server_before_the_read_timeout(kernel):
    """A server that never answers is cut by the deadline when it is shorter than the read timeout."""
    with HostileServer(hostile.hang()) as server:
        with pytest.raises(DeadlineExceeded):
            _llm(kernel, server, deadline=0.5, timeout=30).complete("hi")


@pytest.mark.timeout(60)
def test_deadlines_of_concurrent_calls_share_one_timer_and_each_still_fires(kernel):
    """One client's calls share one deadline timer: when the oldest call is gone (cancelled by its owner)
    the timer moves on to the next, and two later calls still pending both end with DeadlineExceeded."""
    with HostileServer(hostile.hang()) as server:
        llm = _llm(kernel, server, deadline=4.0, timeout=30)  # margin: the first is cancelled at 0.5 s, on a loaded machine too

        async def main():
            first = asyncio.ensure_future(llm.acomplete("first"))
            await asyncio.sleep(0.3)
            later = [asyncio.ensure_future(llm.acomplete(f"later {i}")) for i in range(2)]
            await asyncio.sleep(0.2)
            first.cancel()
            with pytest.raises(asyncio.CancelledError):
                await first
            for task in later:
                with pytest.raises(DeadlineExceeded):
                    await task
            timers = llm.http._timers[asyncio.get_running_loop()]
            assert not timers.pending  # nothing left behind

        asyncio.run(main())


@pytest.mark.timeout(60)
def test_cancelling_the_caller_is_not_reported_as_the_deadline(kernel):
    """A task cancelled by its owner gets CancelledError, not DeadlineExceeded."""
    with HostileServer(hostile.hang()) as server:
        llm = _llm(kernel, server, deadline=30)

        async def main():
            task = asyncio.ensure_future(llm.acomplete("hi"))
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(main())


@pytest.mark.timeout(60)
def test_a_reply_within_the_limits_is_read_whole(kernel):
    """An ordinary reply under both limits comes back unchanged (the limits only bound hostile replies)."""
    with HostileServer(hostile.reply(200, OK)) as server:
        assert _llm(kernel, server, deadline=5, max_response_bytes=len(OK)).complete("hi").text == "fine"


@pytest.mark.parametrize("content_type, body", [
    ("text/html; charset=utf-8", b"<html><body>Please log in</body></html>"),
    ("application/json", OK),
])
def test_a_200_that_is_not_an_event_stream_is_a_protocol_error(kernel, content_type, body):
    """An HTML page or a JSON body answering a streaming call is ProtocolError naming the type; never retried."""
    with HostileServer(hostile.reply(200, body, content_type=content_type)) as server:
        with pytest.raises(ProtocolError) as info:
            list(_llm(kernel, server).stream("hi"))
    media = content_type.split(";")[0]
    assert f"content type {media!r}" in str(info.value) and "text/event-stream" in str(info.value)
    assert "retry the call" not in str(info.value)
    assert info.value.retryable is False and info.value.status == 200
    assert len(server.requests) == 1


@pytest.mark.parametrize("provider", ["anthropic", "openai-responses"])
def test_other_event_stream_providers_refuse_an_html_200_too(kernel, provider):
    """The Anthropic and Responses providers also name the content type of a non-event-stream 200."""
    page = b"<html><body>Please log in</body></html>"
    with HostileServer(hostile.reply(200, page, content_type="text/html")) as server:
        llm = kernel.llm(f"{provider}:m", base_url=server.url, api_key=KEY)
        with pytest.raises(ProtocolError, match="content type 'text/html'"):
            list(llm.stream("hi"))
    assert len(server.requests) == 1


def test_the_limits_have_sensible_defaults_and_can_be_turned_off():
    """Defaults: 32 MiB and 600 s (or the read timeout when longer); None turns either off; bad values refused."""
    assert HttpConfig.from_options({}).max_response_bytes == DEFAULT_MAX_RESPONSE_BYTES == 32 * 2**20
    assert HttpConfig.from_options({}).deadline == 600
    assert HttpConfig.from_options({"timeout": 900}).deadline == 900
    assert HttpConfig.from_options({"deadline": None, "max_response_bytes": None}).deadline is None
    from zagent import ConfigError

    with pytest.raises(ConfigError, match="deadline must be a positive number"):
        HttpConfig.from_options({"deadline": 0})
    with pytest.raises(ConfigError, match="max_response_bytes"):
        HttpConfig.from_options({"max_response_bytes": -1})


@pytest.mark.timeout(60)
@pytest.mark.parametrize("stream", [False, True])
def test_a_call_cut_by_the_deadline_gives_its_connection_back(kernel, stream):
    """After a trickle is cut by the deadline, a 1-connection pool serves the next call (nothing leaked)."""
    trickling = hostile.trickle(every=0.05) if not stream else hostile.endless_sse(every=0.05)
    ok = hostile.reply(200, OK)

    async def behave(request, writer):
        return await (trickling if len(server.requests) == 1 else ok)(request, writer)

    with HostileServer(behave) as server:
        llm = _llm(kernel, server, deadline=0.5, max_connections=1, max_keepalive_connections=1,
                   timeout={"pool": 2, "read": 30})

        async def twice():
            with pytest.raises(DeadlineExceeded):
                if stream:
                    async for _ in llm.astream("hi"):
                        pass
                else:
                    await llm.acomplete("hi")
            llm.http.config = HttpConfig.from_options({"deadline": 10, "max_connections": 1})
            return (await llm.acomplete("again")).text

        assert asyncio.run(twice()) == "fine"


@pytest.mark.timeout(60)
def test_a_200_whose_body_is_cut_off_is_not_retried(kernel):
    """A 200 announcing 1,000 bytes that closes after 46: one request, an error saying the reply was cut off
    and not retried (the server had answered), never "could not reach"."""
    with HostileServer(hostile.cut_body()) as server:
        with pytest.raises(ProviderError) as info:
            _llm(kernel, server).complete("hi")
    assert len(server.requests) == 1
    assert "cut off" in str(info.value) and "not retried" in str(info.value)
    assert "could not reach" not in str(info.value) and info.value.retryable is False
