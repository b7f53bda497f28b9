"""A response zagent has finished with is freed by reference counting, not left for the cycle collector.

httpx leaves a cycle in every response (its stream refers back to it), which would hand each call's
response, request and pool objects to the cycle collector; ``providerkit.stream.release`` breaks it once
the response is closed. Checked against a real loopback server with the collector switched off.
"""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest

from tests.servers import openai_server
from zagent import Secret
from zagent.providerkit import HttpClient
from zagent.providerkit.stream import release


@pytest.fixture
def no_collector():
    """The cycle collector off for the test (so only reference counting can free anything)."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    yield
    if was:
        gc.enable()


def _http(server) -> HttpClient:
    return HttpClient.build("openai", server.url, {}, api_key=Secret("sk-test"))


def test_a_read_response_is_freed_when_dropped(no_collector):
    """After ``post`` reads the body, dropping the response frees it at once (no cycle left behind)."""
    async def go():
        with openai_server.OpenAIServer() as server:
            http = _http(server)
            response = await http.post("/chat/completions", b'{"model":"m","messages":[]}')
            body = response.content
            gone = weakref.ref(response)
            del response
            await http.aclose()
            return body, gone

    body, gone = asyncio.run(go())
    assert b"chat.completion" in body
    assert gone() is None


def test_a_streamed_reply_is_freed_once_closed(no_collector):
    """A ``StreamReply`` read to its end and closed leaves its response to reference counting too."""
    async def go():
        with openai_server.OpenAIServer() as server:
            http = _http(server)
            reply = await http.post("/chat/completions", b'{"model":"m","messages":[],"stream":true}', stream=True,
                                    expect="text/event-stream")
            lines = [line async for line in reply.aiter_lines()]
            await reply.aclose()
            gone = weakref.ref(reply._response)
            del reply
            await http.aclose()
            return lines, gone

    lines, gone = asyncio.run(go())
    assert any("[DONE]" in line for line in lines)
    assert gone() is None


def test_release_leaves_an_open_response_alone():
    """A response still being read keeps its stream: only a closed one is released."""
    class Open:
        is_closed = False
        stream = object()

    response = Open()
    kept = response.stream
    release(response)
    assert response.stream is kept
