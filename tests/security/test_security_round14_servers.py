"""Round fourteen, hostile servers: real HTTP/1.1 on 127.0.0.1 (``tests/servers``) that put invalid UTF-8 into a
streamed reply (every provider), add a second gzip member, junk or nothing after a compressed body (or cut it before
its end), report token counts whose parts are negative (Anthropic's cache counts, llama.cpp's ``timings``), send
tool-call arguments that are not a JSON object (Anthropic ``input``, Ollama ``arguments``, OpenAI text) or a whole
input in an Anthropic block start, start an event stream with a byte order mark, start an Anthropic ``tool_use``
block twice at one index, and lie in their HTTP framing and status lines.

33 attacks (and 6 checks that honest servers and round thirteen's rule still work); 21 got through on the code of
the round's start, each marked "Got through" in its docstring, all fixed: invalid UTF-8 in streams (5), compressed
bodies (7), negative count parts (3), tool inputs dropped or not objects (3), a byte order mark (2), a tool_use
block started twice (1). The other 12 were held."""

import gzip
import json
import zlib

import pytest

from tests.servers.hostile import HostileServer, _chunk, _head, reply

from .conftest import make_kernel

KEY = "sk-r14-servers-SECRET-0123456789abcdef"


@pytest.fixture
def kernel():
    k = make_kernel(plugins=("zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama"))
    yield k
    k.close()


def _model(k, provider, server, **options):
    options = {"max_retries": 0, "deadline": 20, **options}
    if provider == "anthropic":
        return k.llm("anthropic:claude-x", base_url=server.url, api_key=KEY, **options)
    if provider == "ollama":
        return k.llm("ollama:m", base_url=server.url, **options)
    if provider == "responses":
        return k.llm("openai-responses:gpt-x", base_url=server.url + "/v1", api_key=KEY, **options)
    return k.llm("openai:gpt-x", base_url=server.url + "/v1", api_key=KEY, **options)


def _config(server, provider="openai"):
    if provider == "anthropic":
        return {"model": "anthropic:claude-x", "base_url": server.url, "api_key": KEY, "max_retries": 0}
    if provider == "ollama":
        return {"model": "ollama:m", "base_url": server.url, "max_retries": 0}
    return {"model": "openai:gpt-x", "base_url": server.url + "/v1", "api_key": KEY, "max_retries": 0}


def _data(obj):
    return b"data: " + (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n\n"


def _named(obj):
    return b"event: " + obj["type"].encode() + b"\n" + _data(obj)


def _delta(delta, finish=None):
    return _data({"object": "chat.completion.chunk", "model": "m",
                  "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


MARK = b"\xe2\x98\x83"  # stands for the text "hello" of a streamed answer; replaced by a byte sequence under test


def _stream_of(provider):
    """``(content type, body)``: a whole streamed answer whose text is ``MARK`` (three bytes: a snowman)."""
    text = MARK.decode()
    if provider == "openai":
        body = _delta({"role": "assistant", "content": text}) + _delta({}, "stop") + _data(b"[DONE]")
        return "text/event-stream", body
    if provider == "anthropic":
        events = [{"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
                                                         "model": "claude-x", "content": [],
                                                         "usage": {"input_tokens": 3, "output_tokens": 1}}},
                  {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                  {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
                  {"type": "content_block_stop", "index": 0},
                  {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}},
                  {"type": "message_stop"}]
        return "text/event-stream", b"".join(_named(e) for e in events)
    if provider == "ollama":
        lines = [{"model": "m", "message": {"role": "assistant", "content": text}, "done": False},
                 {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True,
                  "done_reason": "stop", "prompt_eval_count": 3, "eval_count": 2}]
        return "application/x-ndjson", b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n"
                                                for line in lines)
    events = [{"type": "response.output_text.delta", "delta": text},
              {"type": "response.completed", "response": {"id": "r", "status": "completed", "model": "gpt-x",
                                                          "output": [{"type": "message", "role": "assistant",
                                                                      "content": [{"type": "output_text",
                                                                                   "text": text}]}],
                                                          "usage": {"input_tokens": 3, "output_tokens": 2}}}]
    return "text/event-stream", b"".join(_named(e) for e in events)


def _sent(ctype, body, pieces=1, headers=None):
    """A behaviour answering ``body`` (chunked, in ``pieces`` chunks) with content type ``ctype``."""
    size = -(-len(body) // pieces)

    async def behave(request, writer):
        writer.write(_head(200, ctype, headers) + b"".join(_chunk(body[i:i + size])
                                                          for i in range(0, len(body), size)) + b"0\r\n\r\n")
        await writer.drain()
        return True

    return behave


def _ensure_ascii(ctype, body):
    return ctype, body.replace(json.dumps(MARK.decode()).encode()[1:-1], MARK)


# -- invalid UTF-8 in a streamed reply ------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "anthropic", "ollama", "responses"])
def test_invalid_utf8_in_a_streamed_reply_is_a_protocol_error_not_replacement_characters(kernel, provider):
    """Got through: a streamed answer whose text holds bytes that are not UTF-8 (``caf\\xc3`` then a quote). A
    JSON reply holding them is a ``ProtocolError`` (round eleven), but every stream decoded its lines with
    ``errors="replace"``: the answer silently held U+FFFD where the server's bytes were. Defence: a streamed line
    that is not UTF-8 is a ``ProtocolError`` naming the server and the byte offset."""
    from zagent.errors import ProtocolError

    ctype, body = _ensure_ascii(*_stream_of(provider))
    assert MARK in body
    with HostileServer(_sent(ctype, body.replace(MARK, b"caf\xc3"))) as server:
        with pytest.raises(ProtocolError, match="not valid UTF-8"):
            list(_model(kernel, provider, server).stream("hi"))


def test_invalid_utf8_in_streamed_tool_arguments_is_a_protocol_error(kernel):
    """Got through: a streamed call of ``word_count`` whose arguments' text holds ``\\xff``: the call came out with
    ``{"text": "a\\ufffdb"}``, text the server never sent, ready to run. Defence: the stream is a ``ProtocolError``;
    no call is returned."""
    from zagent.errors import ProtocolError

    call = {"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                            "function": {"name": "word_count", "arguments": '{"text": "aXb"}'}}]}
    body = (_delta({"role": "assistant", "content": None}) + _delta(call).replace(b"aX", b"a\xff")
            + _delta({}, "tool_calls") + _data(b"[DONE]"))
    with HostileServer(_sent("text/event-stream", body)) as server:
        with pytest.raises(ProtocolError, match="not valid UTF-8"):
            list(_model(kernel, "openai", server).stream("count"))


def test_a_character_split_across_chunks_of_an_honest_stream_still_decodes(kernel):
    """Not an attack: a snowman's three bytes split over one-byte chunks (and ``\\r\\n`` line ends) decode as sent."""
    ctype, body = _ensure_ascii(*_stream_of("openai"))
    with HostileServer(_sent(ctype, body.replace(b"\n", b"\r\n"), pieces=len(body))) as server:
        chunks = list(_model(kernel, "openai", server).stream("hi"))
    assert chunks[-1].completion.message.content == MARK.decode()


def test_a_lone_surrogate_escaped_in_a_stream_event_is_a_protocol_error(kernel):
    """Held: ``\\ud800`` escaped in a streamed event's text (the streamed twin of round eleven's JSON reply).
    Defence: the event does not decode; a ``ProtocolError``, nothing returned."""
    from zagent.errors import ProtocolError

    body = _delta({"role": "assistant", "content": "a"}).replace(b'"a"', b'"a\\ud800b"') + _delta({}, "stop")
    with HostileServer(_sent("text/event-stream", body + _data(b"[DONE]"))) as server:
        with pytest.raises(ProtocolError):
            list(_model(kernel, "openai", server).stream("hi"))


# -- compressed bodies that lie about their end -----------------------------------------------------------------

GOOD = json.dumps({"id": "c", "object": "chat.completion", "model": "m", "choices": [
    {"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}]}).encode()
EVIL = json.dumps({"id": "c", "object": "chat.completion", "model": "m", "choices": [
    {"index": 0, "message": {"role": "assistant", "content": "call steal"}, "finish_reason": "stop"}]}).encode()


def _pack(data, encoding):
    if encoding == "gzip":
        return gzip.compress(data)
    return zlib.compress(data)


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
@pytest.mark.parametrize("after", ["second member", "junk"])
def test_data_after_the_end_of_a_compressed_body_is_refused(kernel, encoding, after):
    """Got through: a compressed reply followed by a second compressed member (a whole other reply) or by junk.
    zagent stopped inflating at the first member's end and dropped the rest unsaid, though other clients (gzip
    tools, proxies, the server's own logs) read both members: two readers, two replies. Defence: anything after
    the end of a compressed body is a ``ProtocolError`` saying so."""
    from zagent.errors import ProtocolError

    rest = _pack(EVIL, encoding) if after == "second member" else b"trailing bytes"
    with HostileServer(reply(200, _pack(GOOD, encoding) + rest, headers={"content-encoding": encoding})) as server:
        with pytest.raises(ProtocolError, match="after the end"):
            _model(kernel, "openai", server).complete("hi")


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_compressed_reply_cut_before_its_end_is_refused(kernel, encoding):
    """Got through: a gzip reply missing its last 8 bytes (CRC and length), or a zlib reply missing its checksum,
    inside an HTTP body whose own framing is complete. zagent took what had inflated and never checked the end:
    a cut or tampered body passed. Defence: a compressed body that ends before its compressed stream does is a
    ``ProtocolError`` saying the body was cut."""
    from zagent.errors import ProtocolError

    packed = _pack(GOOD, encoding)[:-8 if encoding == "gzip" else -4]
    with HostileServer(reply(200, packed, headers={"content-encoding": encoding})) as server:
        with pytest.raises(ProtocolError, match="cut"):
            _model(kernel, "openai", server).complete("hi")


def test_a_compressed_stream_cut_after_its_finish_is_not_a_finished_answer(kernel):
    """Got through: a gzip event stream holding the answer and its ``finish_reason``, cut before ``[DONE]`` and
    before the gzip end, the HTTP framing complete. The stream read as finished (its finish reason was there).
    Defence: the cut compressed body is a ``ProtocolError``."""
    from zagent.errors import ProtocolError

    events = _delta({"role": "assistant", "content": "hello"}) + _delta({}, "stop")
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    packed = z.compress(events) + z.flush(zlib.Z_SYNC_FLUSH)  # all of ``events`` inflates; the gzip never ends
    with HostileServer(_sent("text/event-stream", packed, headers={"content-encoding": "gzip"})) as server:
        with pytest.raises(ProtocolError, match="cut"):
            list(_model(kernel, "openai", server).stream("hi"))


# -- token counts whose parts are negative ----------------------------------------------------------------------


@pytest.mark.parametrize("part", ["cache_read_input_tokens", "cache_creation_input_tokens"])
def test_a_negative_anthropic_cache_count_is_a_protocol_error(kernel, part):
    """Got through: ``input_tokens: 50000`` and ``cache_read_input_tokens: -49990``. A negative count is refused
    (round twelve), but Anthropic's input count is a sum of three and only the sum was checked: 10 tokens were
    counted for 50,000 (budgets and cost). Defence: each reported count must be a whole number >= 0, else a
    ``ProtocolError``."""
    from zagent.errors import ProtocolError

    body = {"id": "m", "type": "message", "role": "assistant", "model": "claude-x",
            "content": [{"type": "text", "text": "hello"}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 50000, "output_tokens": 2, part: -49990}}
    with HostileServer(reply(200, json.dumps(body).encode())) as server:
        with pytest.raises(ProtocolError):
            _model(kernel, "anthropic", server).complete("hi")


def test_negative_llamacpp_timings_are_a_protocol_error(kernel):
    """Got through: no ``usage``, and llama.cpp ``timings`` of ``prompt_n: 50000, cache_n: -49999``: one input
    token was counted. Defence: each ``timings`` count must be >= 0, else a ``ProtocolError``."""
    from zagent.errors import ProtocolError

    body = json.loads(GOOD)
    body["timings"] = {"prompt_n": 50000, "cache_n": -49999, "predicted_n": 2}
    with HostileServer(reply(200, json.dumps(body).encode())) as server:
        with pytest.raises(ProtocolError):
            _model(kernel, "openai", server).complete("hi")


# -- tool-call arguments that are not a JSON object --------------------------------------------------------------


def _spec(server, provider="openai", **over):
    return {"name": "Evil", "prompt": "Answer: {question}", "inputs": [{"name": "question"}],
            "outputs": [{"name": "answer"}], "parse_mode": "str",
            "llm_config": _config(server, provider),
            **over}


def _listing_tool(k):
    ran = []

    def list_files(path: str = ".") -> str:
        """List the files of a folder."""
        ran.append(path)
        return "a.txt"

    k.add_tool(list_files)
    return ran


def _told(server):
    """What the last request told the model of its tool calls (OpenAI and Ollama ``tool`` messages, Anthropic
    ``tool_result`` blocks)."""
    messages = server.requests[-1].json["messages"]
    blocks = [b for m in messages if isinstance(m["content"], list) for b in m["content"]]
    return [m["content"] for m in messages if m["role"] == "tool"] + [
        b["content"] for b in blocks if b.get("type") == "tool_result"]


def test_an_anthropic_tool_input_that_is_not_an_object_is_not_run_with_defaults(kernel):
    """Got through: a ``tool_use`` block whose ``input`` is the string ``"/etc"`` (not an object). zagent made it
    ``{}``: ``list_files`` ran with its default ``"."``, a call nobody asked for, and the model was told it
    succeeded. Defence: an input that is not an object reaches the tool runner as its JSON text, which refuses it
    and tells the model the arguments must be an object; the tool never runs."""
    ran = _listing_tool(kernel)
    first = {"id": "m", "type": "message", "role": "assistant", "model": "claude-x", "stop_reason": "tool_use",
             "content": [{"type": "tool_use", "id": "t1", "name": "list_files", "input": "/etc"}],
             "usage": {"input_tokens": 5, "output_tokens": 2}}
    last = {**first, "stop_reason": "end_turn", "content": [{"type": "text", "text": "done"}]}
    answers = iter([first, last])

    async def behave(request, writer):
        return await reply(200, json.dumps(next(answers)).encode())(request, writer)

    with HostileServer(behave) as server:
        kernel.agent(_spec(server, "anthropic", tools=["list_files"]))(question="list")
        told = _told(server)
    assert ran == []
    assert len(told) == 1 and "object" in str(told[0]), told


def test_ollama_tool_arguments_that_are_a_list_are_not_run_with_defaults(kernel):
    """Got through: an Ollama call of ``list_files`` whose ``arguments`` are the list ``["/etc"]``: made ``{}``,
    the tool ran with its default. Defence: as for Anthropic, the tool runner refuses them; the tool never runs."""
    ran = _listing_tool(kernel)
    first = {"model": "m", "done": True, "prompt_eval_count": 3, "eval_count": 2, "message": {
        "role": "assistant", "content": "", "tool_calls": [{"function": {"name": "list_files", "arguments": ["/etc"]}}]}}
    last = {"model": "m", "done": True, "prompt_eval_count": 3, "eval_count": 2,
            "message": {"role": "assistant", "content": "done"}}
    answers = iter([first, last])

    async def behave(request, writer):
        return await reply(200, json.dumps(next(answers)).encode())(request, writer)

    with HostileServer(behave) as server:
        kernel.agent(_spec(server, "ollama", tools=["list_files"]))(question="list")
        told = _told(server)
    assert ran == []
    assert len(told) == 1 and "object" in str(told[0]), told


@pytest.mark.parametrize("arguments", ['{"text": "a"} {"text": "b c"}', '["a b"]', '{"text": NaN}'],
                         ids=["two-objects", "array", "nan"])
def test_openai_arguments_that_are_not_one_json_object_never_run_the_tool(kernel, arguments):
    """Held: a call of ``word_count`` whose arguments are two JSON objects, an array, or hold ``NaN``. Defence: the
    tool runner refuses them (the model is told); ``word_count`` never runs."""
    first = {"id": "c", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls",
             "message": {"role": "assistant", "content": None, "tool_calls": [
                 {"id": "a", "type": "function", "function": {"name": "word_count", "arguments": arguments}}]}}]}
    answers = iter([json.dumps(first).encode(), GOOD])

    async def behave(request, writer):
        return await reply(200, next(answers))(request, writer)

    with HostileServer(behave) as server:
        kernel.agent(_spec(server, tools=["word_count"]))(question="count")
        told = _told(server)
    assert kernel.spy.ran == []
    assert len(told) == 1 and "word_count" in told[0], told


# -- a byte order mark before an event stream, a tool-use block started twice ---------------------------------


@pytest.mark.parametrize("provider", ["openai", "anthropic", "responses"])
def test_a_byte_order_mark_before_an_event_stream_does_not_hide_its_first_event(kernel, provider):
    """Got through (OpenAI; held for Anthropic and Responses, whose first line is an ``event:`` name they do not
    need): an event stream starting with a UTF-8 byte order mark. Its first line read ``\\ufeffdata:``, no field
    zagent knows, so the first event was dropped unsaid: the first piece of the answer was lost. Defence: as the
    SSE standard says, one leading byte order mark is ignored; the event is read."""
    ctype, body = _ensure_ascii(*_stream_of(provider))
    if provider == "openai":
        body = _delta({"role": "assistant", "content": "first "}) + body
    with HostileServer(_sent(ctype, b"\xef\xbb\xbf" + body)) as server:
        done = list(_model(kernel, provider, server).stream("hi"))[-1].completion
    assert done.message.content == ("first " if provider == "openai" else "") + MARK.decode()
    if provider == "anthropic":
        assert done.usage.input_tokens >= 3 and done.usage.output_tokens == 2


def test_a_byte_order_mark_cannot_strip_a_streamed_calls_name(kernel):
    """Got through: a byte order mark before an OpenAI stream whose first event names the call (``word_count``,
    id ``c1``) and whose second carries its arguments: the call came out with no name and a made-up id. Defence:
    the first event is read; the call is whole."""
    first = _delta({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                    "function": {"name": "word_count", "arguments": ""}}]})
    rest = _delta({"tool_calls": [{"index": 0, "function": {"arguments": '{"text": "a b"}'}}]})
    body = b"\xef\xbb\xbf" + first + rest + _delta({}, "tool_calls") + _data(b"[DONE]")
    with HostileServer(_sent("text/event-stream", body)) as server:
        done = list(_model(kernel, "openai", server).stream("hi"))[-1].completion
    [call] = done.message.tool_calls
    assert (call.id, call.name, call.arguments) == ("c1", "word_count", {"text": "a b"})


def test_an_anthropic_tool_use_block_started_twice_at_one_index_is_a_protocol_error(kernel):
    """Got through: ``content_block_start`` of ``tool_use`` ``list_files`` at index 0, its input ``{"path":
    "/tmp"}``, then another ``tool_use`` (``word_count``, id ``t2``) started at the same index before the first
    stopped. The first call vanished unsaid and its input went to the second. Defence: a block index started again
    while its tool call is open is a ``ProtocolError`` naming the index; no call is returned."""
    from zagent.errors import ProtocolError

    events = [{"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
                                                     "model": "claude-x", "content": [],
                                                     "usage": {"input_tokens": 3, "output_tokens": 1}}},
              {"type": "content_block_start", "index": 0,
               "content_block": {"type": "tool_use", "id": "t1", "name": "list_files", "input": {}}},
              {"type": "content_block_delta", "index": 0,
               "delta": {"type": "input_json_delta", "partial_json": '{"path": "/tmp"}'}},
              {"type": "content_block_start", "index": 0,
               "content_block": {"type": "tool_use", "id": "t2", "name": "word_count", "input": {}}},
              {"type": "content_block_stop", "index": 0},
              {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}},
              {"type": "message_stop"}]
    with HostileServer(_sent("text/event-stream", b"".join(_named(e) for e in events))) as server:
        with pytest.raises(ProtocolError, match="index 0"):
            list(_model(kernel, "anthropic", server).stream("hi"))


def test_an_error_reply_whose_compressed_body_is_cut_still_reports_its_status(kernel):
    """Not an attack: a 400 whose gzip body lacks its last bytes is reported as the 400 it is, with its message
    (an error body is read only in part anyway); only a 2xx reply must be whole."""
    from zagent.errors import ProtocolError, ProviderError

    packed = gzip.compress(b'{"error": {"message": "bad model name"}}')[:-8]
    with HostileServer(reply(400, packed, headers={"content-encoding": "gzip"})) as server:
        with pytest.raises(ProviderError, match="bad model name") as info:
            _model(kernel, "openai", server).complete("hi")
    assert info.value.status == 400 and not isinstance(info.value, ProtocolError)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("after", ["junk after the gzip end", "bytes that are not UTF-8"])
def test_bytes_after_a_finished_streams_end_marker_still_cannot_fail_it(kernel, provider, after):
    """Not an attack on its own: round thirteen's rule kept with this round's checks. A finished answer (end marker
    read), then junk after the end of its gzip stream, or a line that is not UTF-8: the answer is returned, as
    for any talk after the end; only what comes before the end marker must be whole and UTF-8."""
    ctype, body = _ensure_ascii(*_stream_of(provider))
    if after == "bytes that are not UTF-8":
        behave = _sent(ctype, body + b"data: caf\xc3(\n\n")
    else:
        behave = _sent(ctype, gzip.compress(body) + b"data: junk\n\n", headers={"content-encoding": "gzip"})
    with HostileServer(behave) as server:
        done = list(_model(kernel, provider, server).stream("hi"))[-1].completion
    assert done.message.content == MARK.decode()


# -- framing and status lines that lie (held) ---------------------------------------------------------------------


def _raw_reply(data):
    async def behave(request, writer):
        writer.write(data)
        await writer.drain()
        return False

    return behave


_CHUNKED = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"


@pytest.mark.parametrize("framing", ["200,000 headers", "chunk size of 20 hex digits", "100,000 trailer lines",
                                     "Transfer-Encoding gzip, chunked", "HTTP/2 status line"])
@pytest.mark.timeout(60)  # a hang guard: fails only if it never ends
def test_framing_that_lies_is_a_provider_error_at_once(kernel, framing):
    """Held: 200,000 header lines sent at once (4 MB of head), a chunk announcing ``ffffffffffffffffffff`` bytes,
    100,000 trailer lines after the last chunk, ``Transfer-Encoding: gzip, chunked``, an ``HTTP/2`` status line on
    an HTTP/1.1 connection. Defence: the HTTP library refuses each (its head buffer is bounded); a
    ``ProviderError`` within a second, no reply."""

    from zagent.errors import ProviderError

    data = {
        "200,000 headers": (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                            + b"".join(b"x-h%d: v\r\n" % i for i in range(200_000))
                            + b"content-length: %d\r\n\r\n" % len(GOOD) + GOOD),
        "chunk size of 20 hex digits": _CHUNKED + b"ffffffffffffffffffff\r\n" + GOOD,
        "100,000 trailer lines": _CHUNKED + _chunk(GOOD) + b"0\r\n" + b"x-trailer: 1\r\n" * 100_000 + b"\r\n",
        "Transfer-Encoding gzip, chunked": _CHUNKED.replace(b"chunked", b"gzip, chunked") + _chunk(GOOD) + b"0\r\n\r\n",
        "HTTP/2 status line": b"HTTP/2 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
                              % len(GOOD) + GOOD,
    }[framing]
    with HostileServer(_raw_reply(data)) as server:
        with pytest.raises(ProviderError):
            _model(kernel, "openai", server).complete("hi")


def test_a_status_outside_the_known_ranges_is_an_error_even_with_a_reply_body(kernel):
    """Held: ``HTTP/1.1 600`` carrying a whole chat completion as its body. Defence: a status of 400 or more is an
    error whatever the body says (the body is quoted in the message, never read as the reply)."""
    from zagent.errors import ProviderError

    data = b"HTTP/1.1 600 X\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(GOOD) + GOOD
    with HostileServer(_raw_reply(data)) as server:
        with pytest.raises(ProviderError, match="HTTP 600") as info:
            _model(kernel, "openai", server).complete("hi")
    assert info.value.status == 600


def test_an_anthropic_tool_input_sent_whole_in_its_block_start_is_not_dropped(kernel):
    """Got through: a stream whose ``tool_use`` block arrives whole in ``content_block_start`` (``input:
    {"path": "/etc"}``) with no ``input_json_delta`` after it, as some Messages-API proxies send it. zagent read
    the input only from deltas: the call came out as ``list_files({})`` and would run with its default path.
    Defence: an input given in the block start is the call's input (more deltas after it make the arguments
    invalid JSON, which the tool runner refuses); nothing is dropped."""
    events = [{"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
                                                     "model": "claude-x", "content": [],
                                                     "usage": {"input_tokens": 3, "output_tokens": 1}}},
              {"type": "content_block_start", "index": 0,
               "content_block": {"type": "tool_use", "id": "t1", "name": "list_files", "input": {"path": "/etc"}}},
              {"type": "content_block_stop", "index": 0},
              {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}},
              {"type": "message_stop"}]
    with HostileServer(_sent("text/event-stream", b"".join(_named(e) for e in events))) as server:
        done = list(_model(kernel, "anthropic", server).stream("hi"))[-1].completion
    [call] = done.message.tool_calls
    assert (call.name, call.arguments) == ("list_files", {"path": "/etc"})
