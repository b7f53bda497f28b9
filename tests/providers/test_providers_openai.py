"""The openai provider against a loopback Chat Completions server: protocol, streaming, faults, secrets."""

from __future__ import annotations

import asyncio
import json

import pytest

from zagent import (AuthenticationError, Kernel, Message, ProviderError, ProviderTimeout, RateLimitError,
                    StreamInterrupted, ToolSpec)
from zagent._model.run import COST_KEY
from zagent.providerkit import RateLimiter, retry_after, shared_limiter
from tests.servers.loopback import Reply
from tests.servers.openai_server import OpenAIServer, chunk, completion, error, stream_events, stream_reply

KEY = "sk-test-0123456789abcdef"
ADD = ToolSpec(name="add", description="Add two integers.",
               parameters={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                           "required": ["a", "b"]})


@pytest.fixture
def k(make_kernel):
    """A fresh kernel with the openai plugin only, closed after the test."""
    return make_kernel("zagent.plugins.openai", strict=False)


@pytest.fixture
def server():
    with OpenAIServer(key=KEY) as s:
        yield s


def model(k, server, **options):
    options = {"base_url": server.url, "api_key": KEY, "retry_backoff": 0.001, **options}
    return k.llm("openai:gpt-4o-mini", **options)


# -- protocol --------------------------------------------------------------------------


def test_completion_text_usage_and_finish_reason(k, server):
    """A plain reply gives the text, the finish reason and the server's token usage."""
    c = model(k, server).complete("hi")
    assert c.text == "echo: hi"
    assert c.finish_reason == "stop"
    assert (c.usage.input_tokens, c.usage.output_tokens, c.usage.calls) == (11, 7, 1)


def test_request_carries_model_messages_and_bearer_key(k, server):
    """The request posts model and messages to /v1/chat/completions with the key as a bearer token."""
    model(k, server).complete([Message.system("be brief"), Message.user("hi")])
    (req,) = server.requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.json["model"] == "gpt-4o-mini"
    assert req.json["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]


def test_tools_go_out_as_native_functions(k, server):
    """Offered tools are sent as OpenAI function tools with their JSON schema."""
    model(k, server).complete("add", tools=[ADD])
    (tool,) = server.requests[0].json["tools"]
    assert tool == {"type": "function", "function": {"name": "add", "parameters": ADD.parameters,
                                                     "description": "Add two integers."}}


def test_tool_calls_come_back_decoded(k, server):
    """tool_calls in the reply become ToolCalls with decoded arguments and their ids."""
    server.then(completion(tool_calls=[{"id": "call_9", "name": "add", "arguments": '{"a": 2, "b": 3}'}]))
    c = model(k, server).complete("add", tools=[ADD])
    assert [(t.id, t.name, t.arguments) for t in c.tool_calls] == [("call_9", "add", {"a": 2, "b": 3})]
    assert c.finish_reason == "tool_calls"


def test_undecodable_arguments_are_kept_raw(k, server):
    """Arguments that are not a JSON object are kept as the raw string, for the tool runner to report."""
    server.then(completion(tool_calls=[{"id": "c", "name": "add", "arguments": '{"a": 2,'}]))
    (call,) = model(k, server).complete("add", tools=[ADD]).tool_calls
    assert call.arguments == '{"a": 2,'


def test_tool_results_go_back_with_their_ids(k, server):
    """An assistant tool call and its tool result are sent back in OpenAI's format, linked by id."""
    from zagent import ToolCall

    history = [Message.user("add"), Message.assistant(None, [ToolCall(id="c1", name="add", arguments={"a": 1})]),
               Message.tool("3", "c1", "add")]
    model(k, server).complete(history, tools=[ADD])
    sent = server.requests[0].json["messages"]
    assert sent[1]["tool_calls"] == [{"id": "c1", "type": "function",
                                      "function": {"name": "add", "arguments": '{"a":1}'}}]
    assert sent[2] == {"role": "tool", "tool_call_id": "c1", "content": "3"}


def test_response_format_schema_is_wrapped(k, server):
    """A bare JSON schema as response_format is sent as OpenAI's json_schema format."""
    schema = {"title": "Answer", "type": "object", "properties": {"n": {"type": "integer"}}}
    model(k, server).complete("n?", response_format=schema)
    assert server.requests[0].json["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "Answer", "schema": schema}}


def test_extra_fields_pass_through(k, server):
    """extra_body and unknown options, per model and per call, are sent as request fields."""
    llm = model(k, server, temperature=0, extra_body={"top_k": 5})
    llm.complete("hi", seed=7, extra_body={"repetition_penalty": 1.1})
    body = server.requests[0].json
    assert (body["temperature"], body["top_k"], body["seed"], body["repetition_penalty"]) == (0, 5, 7, 1.1)


def test_key_and_base_url_from_environment(k, server, monkeypatch):
    """Without options, the key and base URL come from OPENAI_API_KEY and OPENAI_BASE_URL."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    assert k.llm("openai:gpt-4o-mini", retry_backoff=0.001).complete("env").text == "echo: env"


def test_kernel_config_gives_defaults(server):
    """Kernel(config={"openai": {...}}) supplies default options for every openai model."""
    kernel = Kernel(plugins=["zagent.plugins.openai"], entry_points=False,
                    config={"openai": {"base_url": server.url, "api_key": KEY, "temperature": 0.5}})
    try:
        kernel.llm("openai:gpt-4o").complete("hi")
    finally:
        kernel.close()
    assert server.requests[0].json["temperature"] == 0.5


# -- streaming -------------------------------------------------------------------------


def test_stream_yields_deltas_then_done_with_usage(k, server):
    """Streaming yields text deltas as they come and a done chunk with the whole text and usage."""
    chunks = list(model(k, server).stream("hey"))
    assert "".join(c.text for c in chunks if c.type == "text") == "echo: hey"
    done = chunks[-1]
    assert done.type == "done" and done.completion.text == "echo: hey" and done.completion.usage.input_tokens == 11
    assert server.requests[0].json["stream_options"] == {"include_usage": True}


def test_stream_assembles_tool_call_deltas(k, server):
    """Tool-call argument deltas are assembled into whole calls, yielded once each."""
    calls = [{"id": "c1", "name": "add", "arguments": '{"a": 2, "b": 3}'},
             {"id": "c2", "name": "add", "arguments": '{"a": 5, "b": 8}'}]
    server.then(stream_reply("", tool_calls=calls))
    chunks = list(model(k, server).stream("add", tools=[ADD]))
    got = [(c.tool_call.id, c.tool_call.arguments) for c in chunks if c.type == "tool_call"]
    assert got == [("c1", {"a": 2, "b": 3}), ("c2", {"a": 5, "b": 8})]
    assert chunks[-1].completion.finish_reason == "tool_calls"


def test_stream_usage_can_be_turned_off(k, server):
    """stream_usage=False leaves stream_options out (for servers that reject it)."""
    list(model(k, server, stream_usage=False).stream("x"))
    assert "stream_options" not in server.requests[0].json


def test_async_stream_early_exit_closes_the_response(k, server):
    """Leaving a stream early closes the response, so the connection is not left half-read."""
    server.then(Reply(chunks=stream_events("a long answer " * 20)[:5], end="close", content_type="text/event-stream"))
    llm = model(k, server)

    async def first_delta():
        agen = llm.astream("x")
        async for chunk in agen:
            await agen.aclose()
            return chunk
        return None

    async def run():
        chunk = await first_delta()
        pool = llm.http.client()._transport._pool
        return chunk, [c for c in pool.connections if not c.is_idle() and not c.is_closed()]

    chunk, busy = asyncio.run(run())
    assert chunk.type == "text" and busy == []


# -- faults -----------------------------------------------------------------------------


def test_429_with_retry_after_is_retried(k, server):
    """A 429 with Retry-After is retried after the given delay and the next reply is returned."""
    server.then(error(429, "Rate limit reached", "rate_limit_exceeded", headers={"retry-after": "0"}))
    assert model(k, server).complete("hi").text == "echo: hi"
    assert len(server.requests) == 2


def test_429_after_all_retries_is_a_rate_limit_error(k, server):
    """When every attempt gets 429 the user gets RateLimitError with status, server message and retry hint."""
    for _ in range(3):
        server.then(error(429, "Rate limit reached for gpt-4o-mini", headers={"retry-after": "0"}))
    with pytest.raises(RateLimitError) as info:
        model(k, server, max_retries=2).complete("hi")
    err = info.value
    assert (err.status, err.retry_after, err.provider) == (429, 0.0, "openai")
    assert "Rate limit reached for gpt-4o-mini" in str(err) and "rpm=" in str(err)
    assert len(server.requests) == 3


def test_retry_after_longer_than_allowed_is_not_waited(k, server):
    """A Retry-After beyond retry_max_wait raises at once instead of blocking the caller."""
    server.then(error(429, "slow down", headers={"retry-after": "3600"}))
    with pytest.raises(RateLimitError) as info:
        model(k, server).complete("hi")
    assert info.value.retry_after == 3600.0 and len(server.requests) == 1


def test_500_then_success(k, server):
    """A 500 is retried and the following success is returned."""
    server.then(error(500, "The server had an error", "server_error"))
    assert model(k, server).complete("hi").text == "echo: hi"
    assert len(server.requests) == 2


def test_5xx_after_all_retries_names_status_and_message(k, server):
    """Persistent 503s end in a ProviderError carrying the status and the server's message."""
    for _ in range(2):
        server.then(error(503, "Service overloaded", "server_error"))
    with pytest.raises(ProviderError) as info:
        model(k, server, max_retries=1).complete("hi")
    assert info.value.status == 503 and info.value.body == "Service overloaded"
    assert "HTTP 503: Service overloaded; gave up after 2 attempts" in str(info.value)


def test_400_is_not_retried(k, server):
    """A 400 is the caller's mistake: raised at once with the server's message, not retried."""
    server.then(error(400, "Invalid value for 'temperature'"))
    with pytest.raises(ProviderError) as info:
        model(k, server).complete("hi")
    assert info.value.status == 400 and not info.value.retryable
    assert "Invalid value for 'temperature'" in str(info.value) and len(server.requests) == 1


def test_401_names_the_key_variable(k, server):
    """A wrong key gives AuthenticationError telling the user to check OPENAI_API_KEY."""
    with pytest.raises(AuthenticationError) as info:
        model(k, server, api_key="sk-wrong").complete("hi")
    assert info.value.status == 401 and "OPENAI_API_KEY" in str(info.value)
    assert "Incorrect API key provided." in str(info.value)


def test_missing_key_says_to_set_it(k, server, monkeypatch):
    """Without any key, a 401 says the key is missing and which variable to set."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(AuthenticationError, match="needs an API key.*set OPENAI_API_KEY"):
        k.llm("openai:gpt-4o-mini", base_url=server.url).complete("hi")


def test_malformed_json_body(k, server):
    """A 200 whose body is not JSON raises ProviderError quoting its start and pointing at base_url."""
    server.then(Reply(body=b"<html>proxy login</html>"))
    with pytest.raises(ProviderError, match=r"not valid JSON.*<html>proxy login.*base_url"):
        model(k, server).complete("hi")


def test_server_that_never_answers_times_out(k, server):
    """A server that accepts the request but never answers raises ProviderTimeout after the timeout."""
    server.then(Reply(hang=True))
    with pytest.raises(ProviderTimeout, match="did not answer in time"):
        model(k, server, timeout=0.3, max_retries=0).complete("hi")


def test_unreachable_server(k):
    """A refused connection is retried, then raises ProviderError saying the server could not be reached."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = k.llm("openai:x", base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, retry_backoff=0.001)
    with pytest.raises(ProviderError, match="could not reach openai") as info:
        llm.complete("hi")
    assert info.value.status is None and info.value.retryable


def test_connection_reset_mid_stream_keeps_partial(k, server):
    """A TCP reset in the middle of a stream raises StreamInterrupted holding the text received."""
    events = stream_events("abcdefghijkl")[:3]  # role + "abc" + "def"
    server.then(Reply(chunks=events, end="reset", content_type="text/event-stream"))
    got = []
    with pytest.raises(StreamInterrupted) as info:
        for c in model(k, server).stream("x"):
            got.append(c.text)
    assert info.value.partial == "abcdef" == "".join(got)


def test_truncated_sse_stream(k, server):
    """A stream whose connection closes mid-body raises StreamInterrupted with the partial text."""
    events = stream_events("hello world")[:3]
    server.then(Reply(chunks=events + [b'data: {"choices": [{"ind'], end="close", content_type="text/event-stream"))
    with pytest.raises(StreamInterrupted) as info:
        list(model(k, server).stream("x"))
    assert info.value.partial == "hello "


def test_stream_ending_without_end_marker(k, server):
    """A stream that ends cleanly but before finish_reason/[DONE] is reported as interrupted."""
    server.then(Reply(chunks=stream_events("hello world")[:2], content_type="text/event-stream"))
    with pytest.raises(StreamInterrupted, match="ended before its end marker") as info:
        list(model(k, server).stream("x"))
    assert info.value.partial == "hel"


def test_partial_tool_calls_are_attached(k, server):
    """A stream cut inside a tool call attaches the call received so far (raw arguments)."""
    events = stream_events("", tool_calls=[{"id": "c1", "name": "add", "arguments": '{"a": 2, "b": 3}'}])[:3]
    server.then(Reply(chunks=events, end="close", content_type="text/event-stream"))
    with pytest.raises(StreamInterrupted) as info:
        list(model(k, server).stream("x", tools=[ADD]))
    (call,) = info.value.partial_tool_calls
    assert call.name == "add" and call.arguments == '{"a"'


def test_error_event_mid_stream(k, server):
    """An error object inside the stream raises ProviderError with the server's message."""
    events = [chunk({"content": "hi"}), b'data: {"error": {"message": "model overloaded"}}\n\n']
    server.then(Reply(chunks=events, content_type="text/event-stream"))
    with pytest.raises(ProviderError, match="model overloaded"):
        list(model(k, server).stream("x"))


# -- secrets ---------------------------------------------------------------------------


def test_key_never_in_repr_or_errors(k, server):
    """The API key appears in no repr and, even when the server echoes it, in no error."""
    llm = model(k, server)
    server.then(error(400, f"bad request from key {KEY}"))
    with pytest.raises(ProviderError) as info:
        llm.complete("hi")
    texts = [repr(llm), repr(llm.http), str(info.value), info.value.body, repr(llm.http.api_key)]
    assert not any(KEY in t for t in texts)
    assert "***" in str(info.value)


def test_key_never_in_events(server):
    """LLM events carry summaries only: the key is in none of them."""
    seen = []

    class Observer:
        @staticmethod
        def zagent_event(event):
            seen.append(event)

    kernel = Kernel(plugins=["zagent.plugins.openai", Observer], entry_points=False)
    try:
        model(kernel, server).complete("hi")
    finally:
        kernel.close()
    assert {e.type for e in seen} == {"llm_start", "llm_end"}
    assert KEY not in repr(seen)


# -- clients, limits, profiles, prices -------------------------------------------------------


def test_one_client_per_event_loop_reused(k, server):
    """Calls on one event loop share one client; the sync twin's background loop gets its own."""
    llm = model(k, server)

    async def two_calls():
        await llm.acomplete("a")
        first = llm.http.client()
        await llm.acomplete("b")
        return first, llm.http.client()

    a, b = asyncio.run(two_calls())
    llm.complete("c")
    sync_client = llm.http._last[1]
    llm.complete("d")
    assert a is b
    assert sync_client is not a and llm.http._last[1] is sync_client


def test_user_client_is_used_and_left_open(k, server):
    """client= hands in the user's own httpx client: used for requests, not closed by zagent."""
    import httpx

    async def run():
        async with httpx.AsyncClient(base_url=server.url) as client:
            llm = k.llm("openai:gpt-4o-mini", client=client, api_key=KEY)
            text = (await llm.acomplete("mine")).text
            await llm.aclose()
            return text, client.is_closed

    assert asyncio.run(run()) == ("echo: mine", False)
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_user_client_without_base_url(k, server):
    """A user's client with no base_url of its own gets absolute URLs under base_url=."""
    import httpx

    async def run():
        async with httpx.AsyncClient() as client:
            llm = k.llm("openai:gpt-4o-mini", client=client, api_key=KEY, base_url=server.url)
            return (await llm.acomplete("abs")).text

    assert asyncio.run(run()) == "echo: abs"
    assert server.requests[0].path == "/v1/chat/completions"


def test_client_factory_gets_timeouts_and_limits(k, server):
    """client_factory= is called once per loop with base_url, headers, timeout and limits."""
    import httpx

    made = []

    def factory(**kwargs):
        made.append(kwargs)
        return httpx.AsyncClient(**kwargs)

    llm = model(k, server, client_factory=factory, timeout=7, max_connections=50)
    llm.complete("a")
    llm.complete("b")
    (kwargs,) = made
    assert kwargs["timeout"].read == 7 and kwargs["limits"].max_connections == 50
    assert kwargs["base_url"] == server.url


def test_rate_limiter_is_shared_per_kernel(k, server):
    """Two models of one kernel on the same provider and URL share one rpm limiter; another kernel does not."""
    a = model(k, server, rpm=60)
    b = model(k, server, rpm=60, temperature=0)
    a.complete("x")
    b.complete("y")
    assert a.http.limiter is b.http.limiter is not None
    assert shared_limiter(None, "openai " + server.url, 60) is not a.http.limiter


def test_rate_limiter_spaces_requests_beyond_rpm():
    """The limiter lets rpm requests start at once, then makes the next wait for the window."""
    limiter = RateLimiter(2)
    waits = [limiter.reserve() for _ in range(3)]
    assert waits[0] == 0 and waits[1] == 0 and 59 < waits[2] <= 60


def test_retry_after_parses_seconds_dates_and_ms():
    """Retry-After may be seconds or an HTTP date; retry-after-ms wins when present."""
    from email.utils import formatdate
    import time

    assert retry_after({"retry-after": "2.5"}) == 2.5
    assert retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert 5 < retry_after({"retry-after": formatdate(time.time() + 30, usegmt=True)}) <= 31
    assert retry_after({"retry-after": "soon"}) is None


def test_known_model_profile_and_user_override(server):
    """gpt-4o reports JSON-schema output; kernel config overrides a field per model."""
    kernel = Kernel(plugins=["zagent.plugins.openai"], entry_points=False,
                    config={"profiles": {"openai:my-llama": {"native_tools": False}}})
    try:
        assert kernel.llm("openai:gpt-4o", api_key=KEY).profile.json_schema_output is True
        assert kernel.llm("openai:my-llama").profile.native_tools is False
        assert kernel.llm("openai:o1-mini").profile.native_tools is False
    finally:
        kernel.close()


def test_price_table_gives_run_cost(k, server):
    """With a price table, each call's cost is added to the run's ctx.stash[COST_KEY]."""
    llm = model(k, server, prices={"gpt-4o": (1.0, 2.0), "gpt-4o-mini": (0.5, 1.0)})
    ctx = k.context()
    asyncio.run(llm.acomplete("hi", ctx=ctx))
    assert llm.price == (0.5, 1.0)
    assert ctx.stash[COST_KEY] == pytest.approx((11 * 0.5 + 7 * 1.0) / 1e6)


def test_tool_spec_is_encoded_once(k, server):
    """The same ToolSpec object is encoded once and reused for later requests."""
    from zagent.plugins.openai import wire

    assert wire.encode_tool(ADD) is wire.encode_tool(ADD)
    assert json.loads(bytes(wire.encode_tool(ADD)))["function"]["name"] == "add"


def test_httpx2_client_factory(k, server):
    """client_factory=httpx2.AsyncClient works: requests, streams and typed errors use httpx2's own types."""
    httpx2 = pytest.importorskip("httpx2")
    llm = model(k, server, client_factory=httpx2.AsyncClient)
    assert llm.complete("two").text == "echo: two"
    assert list(llm.stream("s"))[-1].completion.text == "echo: s"
    assert llm.http.module() is httpx2
    server.then(Reply(hang=True))
    with pytest.raises(ProviderTimeout):
        model(k, server, client_factory=httpx2.AsyncClient, timeout=0.3, max_retries=0).complete("late")


def test_timeout_forms():
    """timeout= may be seconds, a dict per phase or an httpx.Timeout; anything else is a ConfigError."""
    import httpx

    from zagent import ConfigError
    from zagent.providerkit import HttpConfig

    assert HttpConfig.from_options({"timeout": 30}).read_timeout == 30
    assert HttpConfig.from_options({"timeout": {"connect": 2, "read": 9}}).connect_timeout == 2
    assert HttpConfig.from_options({"timeout": httpx.Timeout(4, read=8)}).read_timeout == 8
    with pytest.raises(ConfigError, match="timeout must be seconds"):
        HttpConfig.from_options({"timeout": "soon"})


def test_finished_streams_reuse_the_connection(k, server):
    """A stream read to its end marker leaves its connection in the pool: three streams, one connection."""
    llm = model(k, server)
    for text in ("a", "b", "c"):
        assert list(llm.stream(text))[-1].completion.text == f"echo: {text}"
    assert len(server.requests) == 3 and server.connections == 1
