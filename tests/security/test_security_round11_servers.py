"""Round eleven, hostile LLM servers: real HTTP/1.1 on 127.0.0.1 (``tests/servers``) answering the providers with
what a lying or broken server sends -- tiny chunks, escapes in errors, 1xx and 101, trickled headers, lying
``Content-Length``, endless comment streams, encodings zagent cannot bound, absurd ``Retry-After``, duplicate
call ids, lone surrogates.

Got through before this round's fixes: a stream of 2-byte chunks made ``aiter_lines`` keep a list of decoded pieces
(some 40 bytes of memory per byte of body: 32 MiB became gigabytes; now one ``bytearray``), an event of many
short ``data:`` lines a list of strings (some 6 bytes per byte; now one buffer), and a server's error
text brought ESC sequences and bidi controls into the exception's message and so into logs (now shown escaped,
``providerkit.wire.shown``). Everything else here held.
"""

import asyncio
import tracemalloc

import pytest

from tests.servers.hostile import HostileServer, _chunk, _head, written
from tests.servers.loopback import LoopbackServer, Reply
from tests.servers.openai_server import chunk, completion, sse
from tests.servers import anthropic_server

from .conftest import agent_spec, make_kernel

KEY = "sk-r11-servers-SECRET-0123456789abcdef"
ESCAPES = "\x1b[2J\x1b]0;owned\x07\x9b31m\u202eevil\u2066"


@pytest.fixture
def kernel():
    k = make_kernel(plugins=("zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama"))
    yield k
    k.close()


def openai(k, server, **options):
    return k.llm("openai:gpt-x", base_url=server.url + "/v1", api_key=KEY, max_retries=0, **options)


GOOD = completion("hello").body
OK_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(GOOD)


def test_two_byte_chunks_do_not_multiply_a_streamed_lines_memory(kernel):
    """Attack: an event stream whose ``data:`` line arrives as 131,072 HTTP chunks of 2 bytes (256 KiB). Defence:
    the pending line is one ``bytearray`` (a byte of memory per byte), not a list of decoded pieces (some 40 bytes
    each, so the 32 MiB default limit allowed over a gigabyte); the line then fails as the JSON it is not."""
    from zagent.errors import ProtocolError

    pieces = 131072

    async def behave(request, writer):
        if len(server.requests) == 1:  # the warm-up call: client, pool and TLS context made before measuring
            events = [chunk({"role": "assistant", "content": "hi"}), chunk({}, "stop"), sse(b"[DONE]")]
            writer.write(_head(200, "text/event-stream") + b"".join(_chunk(e) for e in events) + b"0\r\n\r\n")
            await writer.drain()
            return True
        writer.write(_head(200, "text/event-stream") + _chunk(b"data: "))
        block = b"2\r\nzy\r\n" * 8192
        for _ in range(pieces // 8192):
            writer.write(block)
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return False

    with HostileServer(behave) as server:
        llm = openai(kernel, server)
        assert "".join(c.text for c in llm.stream("warm up") if c.type == "text") == "hi"
        tracemalloc.start()
        try:
            with pytest.raises(ProtocolError, match="not valid JSON"):
                list(llm.stream("hi"))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 4 * 2**20, f"{peak / 2**20:.1f} MiB for a 256 KiB line"


def test_an_event_of_many_short_data_lines_does_not_multiply_memory(kernel):
    """Attack: one event of 233,000 ``data: ab`` lines and no blank line (2 MiB). Defence: from the 64th line the
    event is gathered in one buffer, not a list of short strings (some 50 bytes each: 32 MiB of them made some
    200 MB); the event then fails as the JSON it is not."""
    from zagent.errors import ProtocolError

    async def behave(request, writer):
        if len(server.requests) == 1:
            events = [chunk({"role": "assistant", "content": "hi"}), chunk({}, "stop"), sse(b"[DONE]")]
            writer.write(_head(200, "text/event-stream") + b"".join(_chunk(e) for e in events) + b"0\r\n\r\n")
            await writer.drain()
            return True
        writer.write(_head(200, "text/event-stream"))
        block = _chunk(b"data: ab\n" * 8192)
        for _ in range(2 * 2**20 // (9 * 8192)):
            writer.write(block)
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return False

    with HostileServer(behave) as server:
        llm = openai(kernel, server)
        assert "".join(c.text for c in llm.stream("warm up") if c.type == "text") == "hi"
        tracemalloc.start()
        try:
            with pytest.raises(ProtocolError, match="not valid JSON"):
                list(llm.stream("hi"))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 8 * 2**20, f"{peak / 2**20:.1f} MiB for 2 MiB of data lines"


def _error_text(exc_info):
    return str(exc_info.value)


@pytest.mark.parametrize("where", ["status", "stream", "anthropic", "ollama"])
def test_escape_and_bidi_characters_of_a_servers_error_are_shown_escaped(kernel, where):
    """Attack: a server's error message holding ESC sequences (clear screen, set the window title), a C1 CSI
    and bidi overrides -- an HTTP 400, an error event mid-stream, Anthropic's error and Ollama's. They reached the
    exception text, and so any log or terminal the app writes it to. Defence: shown escaped (``\\x1b``,
    ``\\u202e``); the message still says what the server said."""
    from zagent.errors import ProviderError

    message = f"bad model {ESCAPES} done"
    if where == "status":
        reply = Reply.json({"error": {"message": message}}, 400)
    elif where == "stream":
        reply = Reply(chunks=[chunk({"role": "assistant", "content": "a"}), sse({"error": {"message": message}})],
                      content_type="text/event-stream")
    elif where == "anthropic":
        reply = anthropic_server.error(400, "invalid_request_error", message)
    else:
        reply = Reply.json({"error": message}, 400)
    with LoopbackServer(lambda r: reply) as server:
        if where == "anthropic":
            llm = kernel.llm("anthropic:claude-x", base_url=server.url, api_key=KEY, max_retries=0)
        elif where == "ollama":
            llm = kernel.llm("ollama:m", base_url=server.url, max_retries=0)
        else:
            llm = openai(kernel, server)
        with pytest.raises(ProviderError) as info:
            if where == "stream":
                list(llm.stream("hi"))
            else:
                llm.complete("hi")
    text = _error_text(info)
    assert "bad model" in text and "done" in text
    assert not any(c in text for c in "\x1b\x07\x9b\u202e\u2066"), repr(text)
    assert "\\x1b" in text and "\\u202e" in text


def test_only_encodings_whose_decoded_size_is_bounded_are_asked_for(kernel):
    """Attack surface: a server may compress with anything the client advertises. Defence: zagent asks for gzip
    and deflate only (inflated within ``max_response_bytes``), never br or zstd."""
    seen = {}

    async def behave(request, writer):
        seen.update(request.headers)
        writer.write(OK_HEAD + GOOD)
        await writer.drain()
        return False

    with HostileServer(behave) as server:
        assert openai(kernel, server).complete("hi").text == "hello"
    assert {e.strip() for e in seen["accept-encoding"].split(",")} <= {"gzip", "deflate", "identity"}


@pytest.mark.parametrize("encoding", ["br", "zstd", "gzip, br", "x-compress"])
def test_a_brotli_or_zstd_body_nobody_asked_for_is_refused(kernel, encoding):
    """Attack: a 200 sent as ``br`` or ``zstd`` (a bomb whose decoded size zagent could not bound). Defence: a
    ``ProtocolError`` naming the encoding; nothing is decoded."""
    from zagent.errors import ProtocolError

    body = b"\x00" * 64
    head = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: " + encoding.encode()
            + b"\r\ncontent-length: %d\r\n\r\n" % len(body))
    with HostileServer(written(head + body)) as server:
        with pytest.raises(ProtocolError, match="Content-Encoding"):
            openai(kernel, server).complete("hi")


@pytest.mark.parametrize("stream", [False, True])
def test_a_101_switching_protocols_is_an_error_not_a_reply(kernel, stream):
    """Attack: the server answers the POST with ``101 Switching Protocols`` and then a chat completion, as if the
    connection were its own. Defence: a ``ProviderError`` (the HTTP library refuses an upgrade nobody asked for);
    no text is taken from the rest."""
    from zagent.errors import ProviderError

    head = b"HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n"
    with HostileServer(written(head + GOOD)) as server:
        llm = openai(kernel, server, deadline=10)
        with pytest.raises(ProviderError, match="could not reach"):
            list(llm.stream("hi")) if stream else llm.complete("hi")


@pytest.mark.timeout(60)  # a hang guard: fails only if it never ends
def test_endless_informational_responses_end_at_the_deadline(kernel):
    """Attack: ``103 Early Hints`` forever, never a final status (each one resets the read timeout). Defence: the
    whole-call ``deadline`` ends it."""
    from zagent.errors import DeadlineExceeded

    hint = (b"HTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n", 0.005)
    with HostileServer(written(*[hint] * 100_000)) as server:
        with pytest.raises(DeadlineExceeded):
            openai(kernel, server, deadline=2).complete("hi")


def test_informational_responses_before_the_reply_are_skipped(kernel):
    """``100 Continue`` and ``103 Early Hints`` before the real reply are not the reply: the 200 after is read."""
    head = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n"
    with HostileServer(written(head + OK_HEAD + GOOD)) as server:
        assert openai(kernel, server).complete("hi").text == "hello"


@pytest.mark.timeout(60)  # a hang guard: fails only if it never ends
def test_headers_trickled_one_a_time_end_at_the_deadline(kernel):
    """Attack: slowloris from the server: a 200's header lines arrive one every 0.2 s, never ending (the read
    timeout never fires). Defence: the deadline covers the headers too."""
    from zagent.errors import DeadlineExceeded

    lines = [(b"x-pad-%d: y\r\n" % i, 0.2) for i in range(2000)]
    with HostileServer(written(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n", *lines)) as server:
        with pytest.raises(DeadlineExceeded):
            openai(kernel, server, deadline=2).complete("hi")


@pytest.mark.parametrize("length", [b"-1", b"abc", b"5, 6", b"99999999999999999999999999", b"+5"])
def test_a_content_length_that_lies_is_an_error(kernel, length):
    """Attack: a negative, non-numeric, self-contradicting or 26-digit ``Content-Length``. Defence: a
    ``ProviderError`` (the HTTP library refuses it); nothing is read as the reply."""
    from zagent.errors import ProviderError

    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: " + length + b"\r\n\r\n"
    with HostileServer(written(head + GOOD)) as server:
        with pytest.raises(ProviderError):
            openai(kernel, server, deadline=5).complete("hi")


@pytest.mark.timeout(60)  # a hang guard: fails only if it never ends
def test_a_huge_announced_length_is_refused_before_reading(kernel):
    """Attack: a 200 announcing 40 GB then trickling. Defence: ``ResponseTooLarge`` at once (the announced length
    is over ``max_response_bytes``)."""
    from zagent.errors import ResponseTooLarge

    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 40000000000\r\n\r\n"
    with HostileServer(written(head, (b" ", 30))) as server:
        with pytest.raises(ResponseTooLarge, match="announced"):
            openai(kernel, server).complete("hi")


def test_an_endless_stream_of_comments_ends_at_the_deadline(kernel):
    """Attack: an event stream of ``: ping`` comments forever (no event, so nothing for the caller to stop on).
    Defence: the deadline ends it."""
    from zagent.errors import DeadlineExceeded

    async def behave(request, writer):
        writer.write(_head(200, "text/event-stream"))
        while True:
            writer.write(_chunk(b": ping\n\n"))
            await writer.drain()
            await asyncio.sleep(0.01)

    with HostileServer(behave) as server:
        with pytest.raises(DeadlineExceeded):
            list(openai(kernel, server, deadline=2).stream("hi"))


def test_a_redirect_whose_location_holds_escapes_says_nothing_raw(kernel):
    """Attack: a 302 whose ``Location`` carries an ESC sequence and a bidi override (to reach the error text).
    Defence: a ``ProviderError``; the escape is in it only escaped, and nothing is followed."""
    from zagent.errors import ProviderError

    head = b"HTTP/1.1 302 Found\r\nlocation: http://evil.example/\x1b[31mzagent: ok\xe2\x80\xae\r\ncontent-length: 0\r\n\r\n"
    with HostileServer(written(head)) as server:
        with pytest.raises(ProviderError) as info:
            openai(kernel, server).complete("hi")
        assert len(server.requests) == 1
    assert "\x1b" not in str(info.value) and "\u202e" not in str(info.value)


@pytest.mark.parametrize("header, value", [("retry-after", "1e400"), ("retry-after", "99999999999999999999999"),
                                           ("retry-after", "Wed, 21 Oct 2999 07:28:00 GMT"),
                                           ("retry-after-ms", "inf"), ("retry-after", "nan"),
                                           ("retry-after", "-5")])
@pytest.mark.timeout(60)  # a hang guard: fails only if it never ends
def test_an_absurd_retry_after_never_makes_the_client_sleep_long(kernel, header, value):
    """Attack: ``Retry-After`` of infinity, 10^23 s, the year 2999, NaN, a negative number. Defence: a wait over
    ``retry_max_wait`` is not waited for (the error says so); NaN and negatives are no wait."""
    from zagent.errors import ProviderError

    with LoopbackServer(lambda r: completion("ok")) as server:
        server.then(Reply(status=429, headers={header: value}, body=b'{"error": {"message": "slow down"}}'))
        llm = kernel.llm("openai:gpt-x", base_url=server.url + "/v1", api_key=KEY, max_retries=1)
        try:
            assert llm.complete("hi").text == "ok"
        except ProviderError as exc:
            assert "retry_max_wait" in str(exc) or "gave up" in str(exc)


def test_duplicate_call_ids_and_an_unoffered_tool_from_a_real_server(kernel):
    """Attack: one reply with two calls under the same id ``dup`` and a call of ``steal`` (not offered). Defence:
    the second ``dup`` gets an id of its own (each result goes to its own call), ``steal`` is blocked by tool
    scope and never runs."""
    calls = [{"id": "dup", "name": "word_count", "arguments": '{"text": "a b"}'},
             {"id": "dup", "name": "word_count", "arguments": '{"text": "a b c"}'},
             {"id": "x", "name": "steal", "arguments": '{"path": "/"}'}]
    with LoopbackServer(lambda r: completion("done")) as server:
        server.then(completion(tool_calls=calls))
        agent = kernel.agent(agent_spec(tools=["word_count"], llm_config={
            "model": "openai:gpt-x", "base_url": server.url + "/v1", "api_key": KEY, "max_retries": 0}))
        agent(question="count")
        sent = server.requests[1].json["messages"]
    ids = [c["id"] for m in sent if m["role"] == "assistant" for c in m.get("tool_calls") or ()]
    results = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
    assert len(set(ids)) == 3 and set(results) == set(ids)
    assert sorted(results[i] for i in ids[:2]) == ["2", "3"] and "not offered" in results["x"]
    assert kernel.spy.ran == ["word_count", "word_count"]


@pytest.mark.parametrize("body", [
    b'{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant",'
    b'"content":"a\\ud800b"},"finish_reason":"stop"}]}',
    b'{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant",'
    b'"content":"caf\xc3"},"finish_reason":"stop"}]}'])
def test_lone_surrogates_and_invalid_utf8_in_a_reply_are_a_protocol_error(kernel, body):
    """Attack: a lone surrogate escaped in the text, invalid UTF-8 in a JSON reply (each would fail later, writing
    a file or a database). Defence: ``ProtocolError`` at decoding; no tool runs."""
    from zagent.errors import ProtocolError

    with LoopbackServer(lambda r: Reply(body=body)) as server:
        agent = kernel.agent(agent_spec(tools=["word_count"], llm_config={
            "model": "openai:gpt-x", "base_url": server.url + "/v1", "api_key": KEY, "max_retries": 0}))
        with pytest.raises(ProtocolError):
            agent(question="count")
    assert kernel.spy.ran == []


def test_a_lone_surrogate_inside_a_tool_calls_arguments_never_reaches_the_tool(kernel):
    """Attack: a tool call whose arguments (JSON inside the JSON reply) spell a lone surrogate ``\\udc00``.
    Defence: the arguments are not decoded into a string the tool would choke on: the call is an error result
    the model reads, and ``word_count`` never runs."""
    body = (b'{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant",'
            b'"content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"word_count",'
            b'"arguments":"{\\"text\\": \\"\\\\udc00\\"}"}}]},"finish_reason":"tool_calls"}]}')
    with LoopbackServer(lambda r: completion("done")) as server:
        server.then(Reply(body=body))
        agent = kernel.agent(agent_spec(tools=["word_count"], llm_config={
            "model": "openai:gpt-x", "base_url": server.url + "/v1", "api_key": KEY, "max_retries": 0}))
        agent(question="count")
        told = [m["content"] for m in server.requests[1].json["messages"] if m["role"] == "tool"]
    assert kernel.spy.ran == []
    assert len(told) == 1 and "word_count" in told[0], told


def test_a_reason_phrase_with_escapes_never_reaches_httpxs_log_line_raw(kernel, caplog):
    """Attack: ``HTTP/1.1 200 OK \\x1b[2J`` -- h11 accepts an ESC in the reason phrase, and httpx's own INFO line
    (``HTTP Request: POST ... "HTTP/1.1 200 OK ..."``) carries it to the app's log. Defence wanted: shown
    escaped, as in zagent's own errors."""
    import logging

    caplog.set_level(logging.INFO)
    head = b"HTTP/1.1 200 OK \x1b[2J\x1b]0;owned\x07\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
    with HostileServer(written(head % len(GOOD) + GOOD)) as server:
        assert openai(kernel, server).complete("hi").text == "hello"
    assert "HTTP Request" in caplog.text
    assert "\x1b" not in caplog.text and "\x07" not in caplog.text
