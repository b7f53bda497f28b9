"""Reading streamed bodies: lines split right however the bytes arrive, and a last SSE event without its
closing blank line is still dispatched (as the official SDKs do)."""

from __future__ import annotations

import asyncio
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.servers import anthropic_server, openai_server
from tests.servers.loopback import Reply
from zagent.providerkit import HttpConfig, StreamReply, iter_sse


def _unterminated(events: list[bytes]) -> list[bytes]:
    return events[:-1] + [events[-1].rstrip(b"\n")]


def test_openai_stream_whose_done_marker_lacks_the_blank_line_completes(kernel):
    """An OpenAI stream ending ``data: [DONE]`` with no blank line after it is complete, not cut."""
    with openai_server.OpenAIServer(key="sk-sse-test") as server:
        server.then(Reply(chunks=_unterminated(openai_server.stream_events("hello")), content_type="text/event-stream"))
        llm = kernel.llm("openai:m", base_url=server.url, api_key="sk-sse-test")
        chunks = list(llm.stream("hi"))
    assert chunks[-1].type == "done" and chunks[-1].completion.text == "hello"


def test_anthropic_stream_whose_message_stop_lacks_the_blank_line_completes(kernel):
    """An Anthropic stream ending with ``message_stop`` and no blank line (as the SDK's recordings do) completes."""
    with anthropic_server.AnthropicServer(key="sk-sse-test") as server:
        events = anthropic_server.stream_events("hello")
        server.then(Reply(chunks=_unterminated(events), content_type="text/event-stream"))
        llm = kernel.llm("anthropic:m", base_url=server.url, api_key="sk-sse-test")
        chunks = list(llm.stream("hi"))
    assert chunks[-1].type == "done" and chunks[-1].completion.text == "hello"


async def _lines(items):
    for item in items:
        yield item


def test_iter_sse_dispatches_the_last_event_at_a_clean_end():
    """iter_sse yields an event whose data lines were not followed by a blank line, once the lines end."""
    async def collect():
        return [e async for e in iter_sse(_lines(["event: a", "data: 1", "", "event: b", "data: 2", "data: 3"]))]

    assert asyncio.run(collect()) == [("a", "1"), ("b", "2\n3")]


class _FakeResponse:
    """Just enough of an httpx response for ``StreamReply``: the given byte chunks, then the end."""

    status_code = 200
    headers: dict = {}

    def __init__(self, chunks):
        self.chunks = chunks

    async def aiter_bytes(self):
        for c in self.chunks:
            yield c

    aiter_raw = aiter_bytes  # what StreamReply reads (providerkit.decode)

    async def aclose(self):
        pass


class _Http:
    config = HttpConfig(max_response_bytes=None)


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces, start = [], 0
    for p in points + [len(data)]:
        pieces.append(data[start:p])
        start = p
    return pieces


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list("ab é\u2028{}:")), max_size=8), max_size=8),
       st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=8, max_size=8),
       st.lists(st.integers(min_value=0, max_value=10_000), max_size=6),
       st.booleans())
def test_lines_are_the_same_however_the_bytes_are_cut(texts, ends, cuts, terminated):
    """``StreamReply.aiter_lines`` gives the lines split at CR, LF or CRLF only (not at U+2028), whatever the chunking."""
    body = "".join(t + ends[i] for i, t in enumerate(texts))
    if texts and not terminated:
        body = body[: -len(ends[len(texts) - 1])]
    expected = re.split(r"\r\n|\r|\n", body)  # the whole body at once: the reference
    if expected[-1] == "":
        expected.pop()
    reply = StreamReply(_Http(), _FakeResponse(_split(body.encode(), cuts)), None, None)

    async def collect():
        return [line async for line in reply.aiter_lines()]

    assert asyncio.run(collect()) == expected


def test_stream_reply_passes_other_attributes_through():
    """Attributes it does not define (status_code, headers) come from the response."""
    reply = StreamReply(_Http(), _FakeResponse([]), None, None)
    assert reply.status_code == 200 and reply.headers == {}


@pytest.mark.parametrize("name", ["openai", "anthropic"])
def test_stream_reply_is_closed_and_the_slot_given_back(kernel, name):
    """After a stream is read to its end, the in-flight slot is free again (max_in_flight=1 allows a second call)."""
    module = openai_server if name == "openai" else anthropic_server
    cls = module.OpenAIServer if name == "openai" else module.AnthropicServer
    with cls(key="sk-sse-test") as server:
        llm = kernel.llm(f"{name}:m", base_url=server.url, api_key="sk-sse-test", max_in_flight=1)

        async def twice():
            for _ in range(2):
                async for _chunk in llm.astream("hi"):
                    pass
            return True

        assert asyncio.run(asyncio.wait_for(twice(), 30))
