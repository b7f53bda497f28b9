"""Round twelve, hostile LLM servers: real HTTP/1.1 on 127.0.0.1 (``tests/servers``) answering the providers with
usage that lies (zero, absent, one token for 40,000 characters, negative, strings, NaN, floats, 70-bit numbers),
redirects to other hosts, ``file:`` and themselves, compressed bombs in streams and error bodies, endless, trickled
and one-byte-chunked bodies, JSON nested deep or made of millions of empty objects, duplicate keys naming another
tool, tools assembled from name pieces or sent in another choice, 100,000 calls in one reply, lying finish
reasons, megabyte ``model``/``finish_reason`` fields full of escapes, and 429 storms.

75 attacks (and one honest-server check); 25 got through before this round's fixes, each marked "Got through"
in its docstring, all fixed: usage left at zero or implausibly low (9), one-byte chunks costing minutes of CPU
(3), millions of tiny JSON objects (7), quadratic call-id checks (3), unbounded reply metadata (3).
"""

import asyncio
import json
import logging

import pytest

from tests.servers import anthropic_server
from tests.servers.hostile import HostileServer, _chunk, _head, bomb, encoded, endless_body, written
from tests.servers.loopback import LoopbackServer, Reply
from tests.servers.openai_server import chunk, sse

from .conftest import agent_spec, make_kernel

KEY = "sk-r12-servers-SECRET-0123456789abcdef"
LIMIT = 1000  # tokens a run may use in the usage tests
BIG = "lorem ipsum dolor sit amet " * 1500  # 40,500 characters: ~10,000 tokens by any count


def kernel_with(config=None):
    return make_kernel(config=config, plugins=("zagent.plugins.openai", "zagent.plugins.anthropic",
                                               "zagent.plugins.ollama"))


@pytest.fixture
def kernel():
    k = kernel_with()
    yield k
    k.close()


@pytest.fixture
def limited():
    """A kernel whose runs may use at most ``LIMIT`` tokens in and ``LIMIT`` in total."""
    k = kernel_with({"rails": {"usage_limits": {"total_tokens": LIMIT, "input_tokens": LIMIT}}})
    yield k
    k.close()


def openai(k, server, **options):
    return k.llm("openai:gpt-x", base_url=server.url + "/v1", api_key=KEY, max_retries=0, **options)


def llm_of(k, provider, server, **options):
    if provider == "anthropic":
        return k.llm("anthropic:claude-x", base_url=server.url, api_key=KEY, max_retries=0, **options)
    if provider == "ollama":
        return k.llm("ollama:m", base_url=server.url, max_retries=0, **options)
    return openai(k, server, **options)


def openai_body(text=None, *, usage=None, raw_usage=None, calls=None, **top):
    """A chat completion's JSON bytes; ``raw_usage`` is spliced in as it is (for NaN and 70-bit numbers)."""
    message = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    data = {"id": "c", "object": "chat.completion", "model": "m", **top,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}]}
    if usage is not None:
        data["usage"] = usage
    body = json.dumps(data).encode()
    if raw_usage is not None:
        body = body[:-1] + b', "usage": ' + raw_usage + b"}"
    return body


def stream_of(*events, done=True):
    return Reply(chunks=[*events, *([sse(b"[DONE]")] if done else [])], content_type="text/event-stream")


# -- usage that lies ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("usage", [{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}, None],
                         ids=["zero", "absent"])
def test_a_long_reply_reported_as_zero_or_no_tokens_still_counts_against_the_limit(limited, usage):
    """Got through: a 40,000-character answer with ``usage`` all zeros, or with no ``usage`` at all, counted
    nothing against ``rails.usage_limits.total_tokens`` (1,000): a server defeated every token budget. Defence:
    a count the server leaves at zero is estimated from the text (a quarter of its characters), so the run stops
    with ``UsageLimitExceeded``."""
    from zagent.errors import UsageLimitExceeded

    with LoopbackServer(lambda r: Reply(body=openai_body(BIG, usage=usage))) as server:
        with pytest.raises(UsageLimitExceeded, match="total_tokens"):
            openai(limited, server).complete("hi")


def test_a_long_prompt_reported_as_zero_input_tokens_still_counts(limited):
    """Got through: a 40,000-character prompt answered with ``prompt_tokens: 0`` used none of the
    ``input_tokens`` limit. Defence: the input count is estimated from what was sent."""
    from zagent.errors import UsageLimitExceeded

    with LoopbackServer(lambda r: Reply(body=openai_body("ok", usage={"prompt_tokens": 0, "completion_tokens": 1}))) \
            as server:
        with pytest.raises(UsageLimitExceeded, match="input_tokens"):
            openai(limited, server).complete(BIG)


def test_a_stream_without_a_usage_event_still_counts(limited):
    """Got through: a streamed 40,000-character answer whose server sends no usage event (many do, unless asked)
    counted zero tokens. Defence: the ``done`` reply's counts are estimated from the streamed text."""
    from zagent.errors import UsageLimitExceeded

    events = [chunk({"role": "assistant", "content": BIG[i:i + 4000]}) for i in range(0, len(BIG), 4000)]
    with LoopbackServer(lambda r: stream_of(*events, chunk({}, "stop"))) as server:
        with pytest.raises(UsageLimitExceeded, match="total_tokens"):
            list(openai(limited, server).stream("hi"))


def test_one_token_claimed_for_forty_thousand_characters_is_not_believed(limited):
    """Got through: a server claiming 1 token in and 1 out for a 40,000-character answer. Defence: a reported
    count below what the text could possibly be (an eighth of its characters) is raised to that floor."""
    from zagent.errors import UsageLimitExceeded

    with LoopbackServer(lambda r: Reply(body=openai_body(BIG, usage={"prompt_tokens": 1, "completion_tokens": 1}))) \
            as server:
        with pytest.raises(UsageLimitExceeded, match="total_tokens"):
            openai(limited, server).complete("hi")


@pytest.mark.parametrize("provider", ["anthropic", "ollama", "responses"])
def test_zero_usage_from_anthropic_ollama_and_responses_servers_still_counts(limited, provider):
    """Got through: Anthropic's ``usage`` of zeros, an Ollama reply without ``prompt_eval_count``/``eval_count``
    (Ollama leaves them out for a cached prompt) and a Responses API reply with ``usage: null`` counted nothing.
    Defence: estimated as for Chat Completions."""
    from tests.servers import responses_server
    from zagent.errors import UsageLimitExceeded

    if provider == "anthropic":
        reply = anthropic_server.message(BIG, usage={"input_tokens": 0, "output_tokens": 0})
    elif provider == "ollama":
        reply = Reply.json({"model": "m", "message": {"role": "assistant", "content": BIG}, "done": True,
                            "done_reason": "stop"})
    else:
        reply = Reply.json(responses_server.response([responses_server.message_item(BIG)], usage=None))
    with LoopbackServer(lambda r: reply) as server:
        if provider == "responses":
            llm = limited.llm("openai-responses:gpt-x", base_url=server.url, api_key=KEY, max_retries=0)
        else:
            llm = llm_of(limited, provider, server)
        with pytest.raises(UsageLimitExceeded, match="total_tokens"):
            llm.complete("hi")


def test_an_honest_servers_usage_is_reported_as_it_is(kernel):
    """Not an attack: counts at least as high as the text makes them are kept exactly as the server sent them."""
    with LoopbackServer(lambda r: Reply(body=openai_body("hello there", usage={"prompt_tokens": 9,
                                                                               "completion_tokens": 3}))) as server:
        usage = openai(kernel, server).complete("hi").usage
    assert (usage.input_tokens, usage.output_tokens, usage.estimated) == (9, 3, False)


def test_an_estimated_count_says_it_is_one(kernel):
    """Not invented silently: a reply whose server sent no usage carries counts estimated from its text (a quarter
    of its characters) with ``Usage.estimated`` set, and a sum of usages stays marked."""
    with LoopbackServer(lambda r: Reply(body=openai_body("x" * 400, usage=None))) as server:
        usage = openai(kernel, server).complete("hi").usage
    assert usage.output_tokens == 100 and usage.input_tokens > 0 and usage.estimated is True
    assert (usage + type(usage)(input_tokens=1)).estimated is True


@pytest.mark.parametrize("raw_usage", [b'{"prompt_tokens": -1000000, "completion_tokens": 5}',
                                       b'{"prompt_tokens": "12", "completion_tokens": 5}',
                                       b'{"prompt_tokens": NaN, "completion_tokens": 5}',
                                       b'{"prompt_tokens": 1e30, "completion_tokens": 5}',
                                       b'{"prompt_tokens": 1180591620717411303424, "completion_tokens": 5}',
                                       b'{"prompt_tokens": 5, "completion_tokens": 5000000000000}'],
                         ids=["negative", "string", "nan", "float", "70-bit", "trillions"])
def test_usage_that_cannot_be_a_count_is_a_protocol_error(limited, raw_usage):
    """Attack: a negative count (lowering the run's total), a string, NaN, a float, a 70-bit number, five
    trillion. Defence: a ``ProtocolError`` saying the reply was dropped; nothing is counted or summed."""
    from zagent.errors import ProtocolError

    with LoopbackServer(lambda r: Reply(body=openai_body("ok", raw_usage=raw_usage))) as server:
        with pytest.raises(ProtocolError):
            openai(limited, server).complete("hi")


def test_a_group_chats_token_budget_holds_against_a_server_reporting_nothing(kernel):
    """Got through: a group chat's ``termination.max_tokens`` (2,000) never ended a chat whose server reported no
    usage: every turn cost zero. Defence: the turns' estimated counts reach the budget, which stops the chat."""
    from zagent.plugins.actions import CustomizeAgent
    from zagent.plugins.groupchat import GroupChat

    spec = {"description": "talks", "prompt": "Go: {task}", "inputs": [{"name": "task"}],
            "outputs": [{"name": "answer"}], "parse_mode": "str"}
    with LoopbackServer(lambda r: Reply(body=openai_body(BIG[:20000]))) as server:
        agents = [CustomizeAgent.from_dict({**spec, "name": n}, kernel, llm=openai(kernel, server)) for n in "AB"]
        chat = GroupChat(kernel=kernel, agents=agents, termination={"max_rounds": 50, "max_tokens": 2000})
        result = chat.run("talk")
        asked = len(server.requests)
    assert result.stopped_by == "max_tokens", result.stopped_by
    assert asked < 5


# -- redirects ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "anthropic", "ollama"])
@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_to_another_host_is_never_followed(kernel, provider, status):
    """Attack: every status of redirect, from each provider's server, to a second server recording what it gets
    (``Authorization``/``x-api-key`` would go with a followed 307/308). Defence: a ``ProviderError``; the second
    server never hears from zagent."""
    from zagent.errors import ProviderError

    with LoopbackServer(lambda r: Reply(body=openai_body("stolen"))) as thief:
        moved = Reply(status=status, headers={"location": thief.url + "/v1/chat/completions"})
        with LoopbackServer(lambda r: moved) as server:
            with pytest.raises(ProviderError):
                llm_of(kernel, provider, server).complete("hi")
        assert thief.requests == []


@pytest.mark.parametrize("location", ["file:///etc/passwd", "/v1/chat/completions", "ftp://127.0.0.1/x",
                                      "http://user:pw@127.0.0.1:1/"])
def test_a_redirect_to_a_file_to_itself_or_to_another_scheme_is_an_error(kernel, location):
    """Attack: a 307 to ``file:``, to the very URL asked (a loop), to ``ftp:``, to a URL with userinfo. Defence:
    one request, a ``ProviderError``; nothing read from the file."""
    from zagent.errors import ProviderError

    with LoopbackServer(lambda r: Reply(status=307, headers={"location": location})) as server:
        with pytest.raises(ProviderError) as info:
            openai(kernel, server).complete("hi")
        assert len(server.requests) == 1
    assert "root:" not in str(info.value)


@pytest.mark.parametrize("provider", ["openai", "ollama"])
def test_a_model_listing_redirect_is_never_followed(kernel, provider):
    """Attack: ``GET /models`` (``zagent models``) answered with a 308 to another host. Defence: refused; the other
    host gets nothing, the key with it."""
    from zagent.errors import ProviderError

    with LoopbackServer(lambda r: Reply.json({"data": [{"id": "x"}], "models": [{"name": "x"}]})) as thief:
        moved = Reply(status=308, headers={"location": thief.url + "/models"})
        with LoopbackServer(lambda r: moved) as server:
            with pytest.raises(ProviderError):
                asyncio.run(llm_of(kernel, provider, server).alist_models())
        assert thief.requests == []


# -- bodies ------------------------------------------------------------------------------------------------------


def test_a_gzip_bomb_sent_as_an_event_stream_is_cut_at_the_size_limit(kernel):
    """Attack: a streamed reply whose body is 200 MiB of zeros gzipped twice (some 200 KB on the wire). Defence:
    ``ResponseTooLarge`` at ``max_response_bytes`` (counted after inflating)."""
    from zagent.errors import ProtocolError, ResponseTooLarge

    body = bomb(200 * 2**20)
    head = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-encoding: gzip, gzip\r\n"
            b"content-length: %d\r\n\r\n" % len(body))
    with HostileServer(written(head + body)) as server:
        with pytest.raises((ResponseTooLarge, ProtocolError)):
            list(openai(kernel, server, max_response_bytes=4 * 2**20).stream("hi"))


@pytest.mark.parametrize("wbits, encoding", [(31, "gzip"), (15, "deflate")])
def test_a_compressed_bomb_as_an_error_body_is_read_only_in_part(kernel, wbits, encoding):
    """Attack: a 500 whose body is a 512 MiB bomb (gzip, deflate). Defence: the error reads at most
    ``ERROR_BODY_BYTES`` of it; a ``ProviderError``, never a gigabyte of memory."""
    import tracemalloc

    from zagent.errors import ProviderError

    with HostileServer(encoded(bomb(512 * 2**20, layers=1, wbits=wbits), encoding, status=500)) as server:
        tracemalloc.start()
        try:
            with pytest.raises(ProviderError):
                openai(kernel, server).complete("hi")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 64 * 2**20, f"{peak / 2**20:.0f} MiB"


def test_an_endless_body_without_a_length_is_cut_at_the_size_limit(kernel):
    """Attack: a 200 with a chunked body that never ends (no ``Content-Length``). Defence: ``ResponseTooLarge``."""
    from zagent.errors import ResponseTooLarge

    with HostileServer(endless_body()) as server:
        with pytest.raises(ResponseTooLarge):
            openai(kernel, server, max_response_bytes=2**20).complete("hi")


@pytest.mark.parametrize("stream", [False, True])
def test_a_valid_reply_dripped_a_byte_at_a_time_ends_at_the_deadline(kernel, stream):
    """Attack: a well-formed reply sent one byte every 0.1 s (each byte resets the read timeout, which alone
    would allow hours). Defence: the whole-call ``deadline`` ends it with ``DeadlineExceeded``."""
    from zagent.errors import DeadlineExceeded

    if stream:
        body = b"".join([chunk({"role": "assistant", "content": "x"})] * 200) + chunk({}, "stop") + sse(b"[DONE]")
        head = _head(200, "text/event-stream", length=len(body))
    else:
        body = openai_body("x" * 2000, usage={"prompt_tokens": 1, "completion_tokens": 600})
        head = _head(200, "application/json", length=len(body))
    with HostileServer(written(head, *[(body[i:i + 1], 0.1) for i in range(len(body))])) as server:
        llm = openai(kernel, server, deadline=1.5)
        with pytest.raises(DeadlineExceeded):
            list(llm.stream("hi")) if stream else llm.complete("hi")


def test_an_ollama_stream_that_never_says_done_ends_at_the_deadline(kernel):
    """Attack: an Ollama NDJSON stream of empty pieces forever, never ``done: true``. Defence: the deadline."""
    from zagent.errors import DeadlineExceeded

    line = json.dumps({"model": "m", "message": {"role": "assistant", "content": ""}, "done": False}).encode() + b"\n"

    async def behave(request, writer):
        writer.write(_head(200, "application/x-ndjson"))
        while True:
            writer.write(_chunk(line * 50))
            await writer.drain()
            await asyncio.sleep(0.01)

    with HostileServer(behave) as server:
        with pytest.raises(DeadlineExceeded):
            list(llm_of(kernel, "ollama", server, deadline=1.5).stream("hi"))


def _one_byte_pieces(head, body):
    """A behaviour sending ``head`` then ``body`` as HTTP chunks of one byte each (1,024 at a time)."""

    async def behave(request, writer):
        writer.write(head)
        for i in range(0, len(body), 1024):
            writer.write(b"".join(_chunk(body[j:j + 1]) for j in range(i, min(i + 1024, len(body)))))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return False

    return behave


@pytest.mark.parametrize("kind", ["stream", "json", "gzip"])
def test_a_body_sent_one_byte_per_chunk_is_refused_before_it_costs_minutes_of_cpu(kernel, kind):
    """Got through: a reply sent as HTTP chunks of one byte each (a streamed event, a JSON reply, a gzip body)
    costs some 10 microseconds of CPU per byte: 32 MiB (``max_response_bytes``) kept a core busy for over five
    minutes, bounded only by the 600 s deadline. Defence: after 262,144 pieces averaging under 24 bytes the body
    is refused (``ProtocolError`` saying so); an honest event is 50 bytes or more."""
    import zlib

    from zagent.errors import ProtocolError

    size = 300_000
    if kind == "stream":
        head, body = _head(200, "text/event-stream"), b"data: " + b"z" * size
    elif kind == "json":
        head, body = _head(200, "application/json"), openai_body("z" * size)
    else:
        z = zlib.compressobj(9, zlib.DEFLATED, 31)
        packed = z.compress(openai_body(" ".join(str(i) for i in range(size)))) + z.flush()
        head, body = _head(200, "application/json", {"content-encoding": "gzip"}), packed[:size]
        assert len(body) == size
    with HostileServer(_one_byte_pieces(head, body)) as server:
        llm = openai(kernel, server)
        with pytest.raises(ProtocolError, match="pieces"):
            list(llm.stream("hi")) if kind == "stream" else llm.complete("hi")


# -- JSON ---------------------------------------------------------------------------------------------------------


DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize("provider, body", [
    ("openai", b'{"error": ' + DEEP + b"}"),
    ("openai", b'{"choices": [], "id": "c", "model": "m", "junk": ' + DEEP + b"}"),
    ("anthropic", b'{"type": "message", "content": [], "error": ' + DEEP + b"}"),
    ("anthropic", b'{"type": "message", "content": [{"type": "tool_use", "id": "t", "name": "word_count", '
                  b'"input": ' + DEEP + b"}]}"),
    ("ollama", b'{"done": true, "message": {"role": "assistant", "content": "", "tool_calls": [{"function": '
               b'{"name": "word_count", "arguments": ' + DEEP + b"}}]}}"),
], ids=["openai-error", "openai-unknown-field", "anthropic-error", "anthropic-input", "ollama-arguments"])
def test_json_nested_deep_in_fields_decoded_as_anything_is_a_clean_error(kernel, default_recursion_limit, provider,
                                                                         body):
    """Attack: 100,000 nested arrays inside fields decoded as any JSON (an error, an unknown field, a tool
    input). Defence: a ``ProviderError`` naming the reply, never a ``RecursionError`` or a crash; no tool runs."""
    from zagent.errors import ProviderError

    with LoopbackServer(lambda r: Reply(body=body)) as server:
        agent = kernel.agent(agent_spec(tools=["word_count"], llm_config={
            "model": {"openai": "openai:gpt-x", "anthropic": "anthropic:claude-x", "ollama": "ollama:m"}[provider],
            "base_url": server.url + ("/v1" if provider == "openai" else ""), "api_key": KEY, "max_retries": 0}))
        try:
            agent(question="count")
        except ProviderError:
            pass
    assert kernel.spy.ran == []


BOMB = b"{}," * (3 * 2**20) + b"{}"  # 9 MiB: 3 million empty objects (some 600 MB once decoded)


@pytest.mark.parametrize("where", ["error", "content", "arguments", "anthropic-input", "ollama-line", "sse-event",
                                   "listing"])
def test_json_of_millions_of_tiny_objects_is_not_decoded(kernel, where):
    """Got through: 9 MiB of ``{},`` in a field decoded as any JSON -- an ``error``, a content-part list, a tool
    call's arguments, Anthropic's ``input``, an Ollama stream line, one SSE event, a model listing -- became some
    600 MB of Python objects (32 MiB, the size limit, some 2 GB). Defence: JSON holding more than
    ``MAX_CONTAINERS`` (200,000) objects and arrays is not decoded: the reply is a ``ProtocolError`` saying so (a
    tool call's arguments stay text the tool runner refuses); memory stays near the body's size; no tool runs."""
    import tracemalloc

    from zagent.errors import ProtocolError, ProviderError

    provider, stream = "openai", False
    if where == "error":
        reply = Reply(body=b'{"error": [' + BOMB + b"]}")
    elif where == "content":
        reply = Reply(body=b'{"id":"c","model":"m","choices":[{"index":0,"message":{"role":"assistant",'
                           b'"content":[' + BOMB + b']},"finish_reason":"stop"}]}')
    elif where == "arguments":
        reply = Reply(body=b'{"id":"c","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":'
                           b'null,"tool_calls":[{"id":"a","type":"function","function":{"name":"word_count",'
                           b'"arguments":"{\\"text\\": [' + BOMB + b']}"}}]},"finish_reason":"tool_calls"}]}')
    elif where == "anthropic-input":
        provider = "anthropic"
        reply = Reply(body=b'{"type":"message","id":"m","model":"c","role":"assistant","stop_reason":"tool_use",'
                           b'"content":[{"type":"tool_use","id":"t","name":"word_count","input":{"text":['
                           + BOMB + b"]}}]}")
    elif where == "ollama-line":
        provider, stream = "ollama", True
        reply = Reply(chunks=[b'{"model":"m","done":false,"message":{"role":"assistant","content":"","x":['
                              + BOMB + b"]}}\n"], content_type="application/x-ndjson")
    elif where == "sse-event":
        stream = True
        reply = Reply(chunks=[b'data: {"object":"chat.completion.chunk","choices":[],"error":[' + BOMB + b"]}\n\n"],
                      content_type="text/event-stream")
    else:  # a listing is read within 4 MiB
        reply = Reply(body=b'{"data": [' + BOMB[:3_900_000] + b"{}]}")
    with LoopbackServer(lambda r: reply) as server:
        llm = llm_of(kernel, provider, server)
        tracemalloc.start()
        try:
            if where == "listing":
                with pytest.raises(ProtocolError, match="objects and arrays"):
                    asyncio.run(llm.alist_models())
            elif where in ("arguments", "anthropic-input"):
                try:
                    calls = llm.complete("hi").tool_calls
                except ProtocolError as exc:
                    assert "objects and arrays" in str(exc)
                else:
                    assert all(isinstance(c.arguments, str) for c in calls), calls
            else:
                with pytest.raises(ProviderError, match="objects and arrays"):
                    list(llm.stream("hi")) if stream else llm.complete("hi")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 120 * 2**20, f"{peak / 2**20:.0f} MiB for a 9 MiB body"
    assert kernel.spy.ran == []


def test_a_duplicate_name_key_cannot_turn_a_call_into_one_not_offered(kernel):
    """Attack: ``"function": {"name": "word_count", "name": "steal"}`` -- a reviewer reading the raw reply sees the
    first name, the decoder keeps the last. Defence: whichever is taken, ``steal`` is not offered and never runs."""
    body = (b'{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant",'
            b'"content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"word_count",'
            b'"name":"steal","arguments":"{\\"path\\": \\"/\\", \\"text\\": \\"a\\"}"}}]},"finish_reason":"tool_calls"}]}')
    with LoopbackServer(lambda r: Reply(body=openai_body("done"))) as server:
        server.then(Reply(body=body))
        agent = kernel.agent(agent_spec(tools=["word_count"], llm_config={
            "model": "openai:gpt-x", "base_url": server.url + "/v1", "api_key": KEY, "max_retries": 0}))
        agent(question="count")
    assert "steal" not in kernel.spy.ran


# -- tool calls assembled from a stream -------------------------------------------------------------------------------


def _call_delta(index, *, name=None, arguments=None, id=None, choice=0):
    function = {k: v for k, v in (("name", name), ("arguments", arguments)) if v is not None}
    call = {"index": index, **({"id": id} if id else {}), "type": "function", "function": function}
    return sse({"object": "chat.completion.chunk", "model": "m", "choices": [
        {"index": choice, "delta": {"tool_calls": [call]}, "finish_reason": None}]})


def _streamed_agent(kernel, server):
    """``run(**inputs)`` of an agent offered ``word_count`` whose replies are streamed."""
    agent = kernel.agent(agent_spec(tools=["word_count"], llm_config={
        "model": "openai:gpt-x", "base_url": server.url + "/v1", "api_key": KEY, "max_retries": 0}))
    return lambda **inputs: list(agent.stream(**inputs))


def test_a_tool_name_streamed_in_pieces_cannot_assemble_a_tool_not_offered(kernel):
    """Attack: ``"st"`` and ``"eal"`` as two name deltas of one call (and ``word_`` + ``count_steal`` of another).
    Defence: the assembled names are checked against what was offered; ``steal`` never runs, and the model is
    told the call was not offered."""
    done = stream_of(chunk({"role": "assistant", "content": "done"}), chunk({}, "stop"))
    with LoopbackServer(lambda r: done) as server:
        server.then(stream_of(_call_delta(0, id="a", name="st"), _call_delta(0, name="eal", arguments='{"path"'),
                              _call_delta(0, arguments=': "/"}'),
                              _call_delta(1, id="b", name="word_"), _call_delta(1, name="count_steal",
                                                                                  arguments="{}"),
                              chunk({}, "tool_calls")))
        _streamed_agent(kernel, server)(question="count")
        told = [m["content"] for m in server.requests[-1].json["messages"] if m["role"] == "tool"]
    assert kernel.spy.ran == []
    assert len(told) == 2 and all("not offered" in t or "unknown" in t.lower() for t in told), told


def test_a_tool_call_sent_in_a_second_choice_is_not_run(kernel):
    """Attack: a stream whose choice 0 is harmless text and whose choice 1 (never asked for: ``n`` is 1) carries a
    call of ``steal``. Defence: only choice 0 is read; nothing runs."""
    done = stream_of(chunk({"role": "assistant", "content": "done"}), chunk({}, "stop"))
    with LoopbackServer(lambda r: done) as server:
        server.then(stream_of(chunk({"role": "assistant", "content": "hello"}),
                              _call_delta(0, id="x", name="steal", arguments='{"path": "/"}', choice=1),
                              chunk({}, "stop")))
        _streamed_agent(kernel, server)(question="count")
    assert kernel.spy.ran == []


def test_streamed_call_ids_reusing_an_earlier_replys_id_get_fresh_ones(kernel):
    """Attack: two streamed replies whose calls all carry the id ``call_1`` (two in the second reply, under two
    indices). Defence: each call gets an id of its own, and each result goes to its own call."""
    done = stream_of(chunk({"role": "assistant", "content": "done"}), chunk({}, "stop"))
    calls = lambda *texts: stream_of(*[_call_delta(i, id="call_1", name="word_count",  # noqa: E731
                                                   arguments=json.dumps({"text": t})) for i, t in enumerate(texts)],
                                     chunk({}, "tool_calls"))
    with LoopbackServer(lambda r: done) as server:
        server.then(calls("a"), calls("a b", "a b c"))
        _streamed_agent(kernel, server)(question="count")
        sent = server.requests[-1].json["messages"]
    ids = [c["id"] for m in sent if m["role"] == "assistant" for c in m.get("tool_calls") or ()]
    results = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
    assert len(ids) == 3 and len(set(ids)) == 3 and set(results) == set(ids), (ids, results)
    assert sorted(results.values()) == ["1", "2", "3"]


@pytest.mark.parametrize("finish", ["tool_calls", "stop", "length", "content_filter", "function_call"])
def test_a_finish_reason_that_lies_changes_nothing_the_reply_holds(kernel, finish):
    """Attack: a reply whose ``finish_reason`` contradicts it: ``tool_calls`` with no call (to make a loop ask
    again for ever), ``stop``/``length``/``content_filter`` beside a call of ``steal``. Defence: what runs is what
    the reply holds and was offered; ``steal`` never runs and the run ends after the server's few replies."""
    lie = {"id": "c", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "message": {
        "role": "assistant", "content": "the answer", "tool_calls": [] if finish == "tool_calls" else [
            {"id": "s", "type": "function", "function": {"name": "steal", "arguments": '{"path": "/"}'}}]},
        "finish_reason": finish}]}
    with LoopbackServer(lambda r: Reply(body=openai_body("done"))) as server:
        server.then(Reply.json(lie))
        kernel.agent(agent_spec(tools=["word_count"], llm_config={
            "model": "openai:gpt-x", "base_url": server.url + "/v1", "api_key": KEY, "max_retries": 0}))(
            question="count")
        asked = len(server.requests)
    assert kernel.spy.ran == [] and asked <= 2


def test_many_choices_in_one_reply_use_only_the_first(kernel):
    """Attack: a reply with 20,000 choices, all but the first calling ``steal``. Defence: only the first choice is
    the answer; nothing runs."""
    steal = {"index": 1, "message": {"role": "assistant", "content": None, "tool_calls": [
        {"id": "s", "type": "function", "function": {"name": "steal", "arguments": '{"path": "/"}'}}]},
        "finish_reason": "tool_calls"}
    body = json.dumps({"id": "c", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "fine"}, "finish_reason": "stop"},
        *[steal] * 20_000]}).encode()
    with LoopbackServer(lambda r: Reply(body=body)) as server:
        answer = kernel.agent(agent_spec(tools=["word_count"], llm_config={
            "model": "openai:gpt-x", "base_url": server.url + "/v1", "api_key": KEY, "max_retries": 0}))(
            question="count")
    assert kernel.spy.ran == [] and "fine" in str(answer)


CALLS = 100_000


def _many_calls_reply(provider):
    """A reply of ``CALLS`` tool calls, each with an id of its own, as ``provider`` streams (or sends) it."""
    if provider == "anthropic":
        start = anthropic_server.event("message_start", {"message": {
            "id": "m", "type": "message", "role": "assistant", "model": "c", "content": [],
            "usage": {"input_tokens": 1, "output_tokens": 1}}})
        blocks = b"".join(anthropic_server.event("content_block_start", {"index": i, "content_block": {
            "type": "tool_use", "id": f"t{i}", "name": "word_count", "input": {}}})
            + anthropic_server.event("content_block_stop", {"index": i}) for i in range(CALLS))
        end = (anthropic_server.event("message_delta", {"delta": {"stop_reason": "tool_use"}, "usage": {
            "output_tokens": 1}}) + anthropic_server.event("message_stop", {}))
        return Reply(chunks=[start, blocks, end], content_type="text/event-stream")
    if provider == "ollama":  # five lines of 20,000 calls (one line of them all is refused as a memory bomb)
        line = {"model": "m", "done": False, "message": {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "word_count", "arguments": {}}}] * (CALLS // 5)}}
        done = {"model": "m", "done": True, "done_reason": "stop", "message": {"role": "assistant", "content": ""},
                "prompt_eval_count": 1, "eval_count": 1}
        return Reply(chunks=[json.dumps(line).encode() + b"\n"] * 5 + [json.dumps(done).encode() + b"\n"],
                     content_type="application/x-ndjson")
    from tests.servers import responses_server

    return Reply.json(responses_server.response([responses_server.call_item(f"c{i}", "word_count", "{}")
                                                 for i in range(CALLS * 3 // 5)]))


@pytest.mark.timeout(150)
@pytest.mark.parametrize("provider", ["anthropic", "ollama", "responses"])
def test_a_hundred_thousand_tool_calls_are_read_in_linear_time(kernel, provider):
    """Got through: a reply of 100,000 tool calls (some 24 MB, under ``max_response_bytes``) to Anthropic's stream or
    Ollama's stream, or of 60,000 from the Responses API: each call's id was checked against every call before it (a list scan),
    so reading the reply took some 5 minutes of CPU (60,000 calls: 100 s). Defence: the ids seen are a set; the
    reply is read in seconds (the timeout marker is only a hang guard, far above what the fix takes)."""
    with LoopbackServer(lambda r: _many_calls_reply(provider)) as server:
        if provider == "responses":
            llm = kernel.llm("openai-responses:gpt-x", base_url=server.url, api_key=KEY, max_retries=0)
            calls = llm.complete("hi").tool_calls
            assert len(calls) == CALLS * 3 // 5
        else:
            llm = llm_of(kernel, provider, server)
            calls = [c for c in llm.stream("hi") if c.type == "tool_call"]
            assert len(calls) == CALLS


# -- metadata --------------------------------------------------------------------------------------------------------


ESC = "\x1b[2J\x1b]0;owned\x07\u202e"


@pytest.mark.parametrize("field", ["model", "finish_reason", "id"])
def test_a_megabyte_model_or_finish_reason_full_of_escapes_is_bounded_in_events(kernel, field):
    """Got through: a reply's ``model``, ``id`` or ``finish_reason`` of 1 MB holding terminal escapes went whole and
    raw into the ``llm_end`` event (and so into the run log, traces and ``zagent logs show``). Defence: such
    metadata is cut to 200 characters with control and bidi characters shown escaped."""
    events = []

    class LlmEndRecorder:
        def zagent_event(self, event):
            if event.type == "llm_end":
                events.append(dict(event.data))

    kernel.add_plugin(LlmEndRecorder())
    value = ESC + "m" * 2**20
    data = {"id": "c", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1}}
    if field == "finish_reason":
        data["choices"][0]["finish_reason"] = value
    else:
        data[field] = value
    with LoopbackServer(lambda r: Reply.json(data)) as server:
        reply = openai(kernel, server).complete("hi")
    assert reply.text == "hi"
    shown = {"model": "response_model", "id": "response_id", "finish_reason": "finish_reason"}[field]
    seen = str(events[-1].get(shown, ""))
    assert len(seen) <= 256 and not any(c in seen for c in "\x1b\x07\u202e"), (len(seen), seen[:40])
    assert len(str(getattr(reply, field))) <= 256


# -- retries ---------------------------------------------------------------------------------------------------------


def test_a_429_storm_asking_for_no_wait_ends_after_max_retries(kernel, caplog):
    """Attack: every answer a 429 with ``retry-after: 0`` (and ``x-should-retry: true``), forever. Defence: at most
    ``max_retries`` + 1 requests, then a ``RateLimited`` error saying so."""
    from zagent.errors import ProviderError

    caplog.set_level(logging.WARNING)
    storm = Reply(status=429, headers={"retry-after": "0", "x-should-retry": "true"},
                  body=b'{"error": {"message": "slow down"}}')
    with LoopbackServer(lambda r: storm) as server:
        llm = kernel.llm("openai:gpt-x", base_url=server.url + "/v1", api_key=KEY, max_retries=3)
        with pytest.raises(ProviderError):
            llm.complete("hi")
        assert len(server.requests) == 4


@pytest.mark.parametrize("status", [400, 401, 404])
def test_a_should_retry_header_does_not_make_a_refusal_retried_for_ever(kernel, status):
    """Attack: a 400/401/404 carrying ``x-should-retry: true`` and ``retry-after: 0``. Defence: at most
    ``max_retries`` + 1 requests (the key is not resent without bound)."""
    from zagent.errors import ProviderError

    refusal = Reply(status=status, headers={"retry-after": "0", "x-should-retry": "true"},
                    body=b'{"error": {"message": "no"}}')
    with LoopbackServer(lambda r: refusal) as server:
        llm = kernel.llm("openai:gpt-x", base_url=server.url + "/v1", api_key=KEY, max_retries=2)
        with pytest.raises(ProviderError):
            llm.complete("hi")
        assert len(server.requests) <= 3
