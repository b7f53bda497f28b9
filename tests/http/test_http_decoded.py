"""Bombs against max_response_bytes: the limit counts the *decoded* bytes, every layer of Content-Encoding.

A real provider (openai, over httpx) against a real server on 127.0.0.1 that sends a small compressed body
inflating to hundreds of MiB; the call must end with ResponseTooLarge while memory stays near the limit
(tracemalloc's peak, not a timing). bench/hostile_limits.py measures the same at 1 GiB.
"""

from __future__ import annotations

import json
import tracemalloc
import zlib

import pytest

from tests.servers import hostile
from tests.servers.hostile import HostileServer
from zagent import ProtocolError, ProviderError, ResponseTooLarge

KEY = "sk-decoded-test-key-0123456789"
LIMIT = 2**20
BIG = 256 * 2**20
OK = json.dumps({"id": "c", "object": "chat.completion", "model": "m", "choices": [
    {"index": 0, "message": {"role": "assistant", "content": "fine"}, "finish_reason": "stop"}]}).encode()


@pytest.fixture(scope="module")
def two_layer_bomb():
    """gzip of gzip of 256 MiB of zeros (about 600 bytes)."""
    return hostile.bomb(BIG, layers=2)


@pytest.fixture(scope="module")
def one_layer_bomb():
    """gzip of 256 MiB of zeros (about 250 KB)."""
    return hostile.bomb(BIG, layers=1)


def _llm(kernel, server, **options):
    return kernel.llm("openai:m", base_url=server.url, api_key=KEY, retry_backoff=0.001,
                      max_response_bytes=LIMIT, **options)


def _peak(call):
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.timeout(60)
def test_two_layer_gzip_bomb_stops_at_the_limit_with_bounded_memory(kernel, two_layer_bomb):
    """Content-Encoding: gzip, gzip inflating to 256 MiB raises ResponseTooLarge with memory near the 1 MiB limit."""
    with HostileServer(hostile.encoded(two_layer_bomb, "gzip, gzip")) as server:
        llm = _llm(kernel, server)

        def call():
            with pytest.raises(ResponseTooLarge, match="max_response_bytes=1048576") as info:
                llm.complete("hi")
            assert "decoded" in str(info.value)

        peak = _peak(call)
    assert peak < 12 * 2**20, f"peak traced memory {peak} bytes for a 1 MiB limit"


@pytest.mark.timeout(60)
def test_one_layer_gzip_bomb_in_an_event_stream_stops_at_the_limit(kernel, one_layer_bomb):
    """A gzip-encoded event stream inflating to 256 MiB is cut at max_response_bytes, memory bounded."""
    with HostileServer(hostile.encoded(one_layer_bomb, "gzip", content_type="text/event-stream")) as server:
        llm = _llm(kernel, server)

        def call():
            with pytest.raises(ResponseTooLarge):
                list(llm.stream("hi"))

        peak = _peak(call)
    assert peak < 12 * 2**20, f"peak traced memory {peak} bytes for a 1 MiB limit"


@pytest.mark.timeout(60)
def test_a_bomb_in_an_error_body_is_read_only_as_far_as_the_message_needs(kernel, two_layer_bomb):
    """A 400 whose gzip-of-gzip body inflates to 256 MiB gives the typed HTTP error with memory bounded."""
    with HostileServer(hostile.encoded(two_layer_bomb, "gzip, gzip", status=400)) as server:
        llm = _llm(kernel, server)

        def call():
            with pytest.raises(ProviderError, match="HTTP 400"):
                llm.complete("hi")

        peak = _peak(call)
    assert peak < 12 * 2**20, f"peak traced memory {peak} bytes"


@pytest.mark.parametrize("wbits, encoding", [(31, "gzip"), (15, "deflate"), (-15, "deflate")])
def test_a_compressed_reply_within_the_limit_is_decoded(kernel, wbits, encoding):
    """gzip, zlib-wrapped deflate and raw deflate replies under the limit decode to the same answer."""
    z = zlib.compressobj(9, zlib.DEFLATED, wbits)
    body = z.compress(OK) + z.flush()
    with HostileServer(hostile.encoded(body, encoding)) as server:
        assert _llm(kernel, server).complete("hi").text == "fine"


@pytest.mark.parametrize("encoding", ["gzip, gzip, gzip", "br", "zstd"])
def test_stacked_or_unsupported_encodings_are_a_protocol_error(kernel, encoding):
    """Three stacked layers, brotli or zstd (never asked for) are ProtocolError naming the encoding; not retried."""
    with HostileServer(hostile.encoded(b"\x00" * 64, encoding)) as server:
        with pytest.raises(ProtocolError, match="Content-Encoding") as info:
            _llm(kernel, server).complete("hi")
    assert encoding in str(info.value) and info.value.retryable is False
    assert len(server.requests) == 1


def test_corrupt_gzip_is_a_protocol_error(kernel):
    """A body that claims gzip but is not is ProtocolError naming gzip, not a raw decoding exception."""
    with HostileServer(hostile.encoded(b"not gzip at all", "gzip")) as server:
        with pytest.raises(ProtocolError, match="not valid gzip"):
            _llm(kernel, server).complete("hi")
