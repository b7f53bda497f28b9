"""The anthropic provider against a loopback Messages API server."""

from __future__ import annotations

import pytest

from zagent import (AuthenticationError, Message, ProviderError, StreamInterrupted, ToolCall, ToolSpec)
from tests.servers.anthropic_server import AnthropicServer, error, event, message, stream_events, stream_reply
from tests.servers.loopback import Reply

KEY = "sk-ant-test-secret-42"
ADD = ToolSpec(name="add", description="Add two integers.",
               parameters={"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]})


@pytest.fixture
def k(make_kernel):
    """A fresh kernel with the anthropic plugin only, closed after the test."""
    return make_kernel("zagent.plugins.anthropic", strict=False)


@pytest.fixture
def server():
    with AnthropicServer(key=KEY) as s:
        yield s


def model(k, server, **options):
    options = {"base_url": server.url, "api_key": KEY, "retry_backoff": 0.001, **options}
    return k.llm("anthropic:claude-sonnet-4-5", **options)


def test_completion_text_usage_and_stop_reason(k, server):
    """A reply gives its text, usage from the API and end_turn mapped to finish_reason 'stop'."""
    c = model(k, server).complete("hi")
    assert (c.text, c.finish_reason) == ("echo: hi", "stop")
    assert (c.usage.input_tokens, c.usage.output_tokens) == (21, 9)


def test_headers_key_and_version(k, server):
    """The key goes in x-api-key (never as a bearer token) with the anthropic-version header."""
    model(k, server).complete("hi")
    headers = server.requests[0].headers
    assert headers["x-api-key"] == KEY and headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in headers


def test_system_messages_become_the_system_prompt(k, server):
    """System messages are sent as the top-level system field, not as turns; max_tokens is always set."""
    model(k, server).complete([Message.system("be brief"), Message.user("hi")])
    body = server.requests[0].json
    assert body["system"] == "be brief"
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert body["max_tokens"] == 4096


def test_tools_and_tool_use_blocks(k, server):
    """Tools go out with input_schema; tool_use blocks come back as ToolCalls with finish_reason tool_calls."""
    server.then(message("let me add", tool_uses=[{"id": "toolu_1", "name": "add", "input": {"a": 2}}]))
    c = model(k, server).complete("add", tools=[ADD])
    assert server.requests[0].json["tools"] == [{"name": "add", "input_schema": ADD.parameters,
                                                 "description": "Add two integers."}]
    assert c.text == "let me add" and c.finish_reason == "tool_calls"
    assert [(t.id, t.name, t.arguments) for t in c.tool_calls] == [("toolu_1", "add", {"a": 2})]


def test_tool_results_are_merged_into_one_user_turn(k, server):
    """Tool results go back as tool_result blocks of one user turn, linked by tool_use_id."""
    calls = [ToolCall(id="t1", name="add", arguments={"a": 1}), ToolCall(id="t2", name="add", arguments={"a": 2})]
    history = [Message.user("add"), Message.assistant(None, calls), Message.tool("1", "t1"), Message.tool("2", "t2")]
    model(k, server).complete(history, tools=[ADD])
    turns = server.requests[0].json["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"][0] == {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1}}
    assert turns[2]["content"] == [{"type": "tool_result", "tool_use_id": "t1", "content": "1"},
                                   {"type": "tool_result", "tool_use_id": "t2", "content": "2"}]


def test_response_format_becomes_an_instruction(k, server):
    """The API has no response_format: a JSON schema is turned into a system instruction, not dropped."""
    model(k, server).complete("n?", response_format={"type": "object", "properties": {"n": {"type": "integer"}}})
    assert '"n":{"type":"integer"}' in server.requests[0].json["system"]


def test_stream_text_and_usage(k, server):
    """Streaming yields text deltas and a done chunk with usage from message_start and message_delta."""
    chunks = list(model(k, server).stream("hey"))
    assert "".join(c.text for c in chunks if c.type == "text") == "echo: hey"
    done = chunks[-1].completion
    assert (done.text, done.usage.input_tokens, done.usage.output_tokens) == ("echo: hey", 21, 9)


def test_stream_assembles_input_json_deltas(k, server):
    """input_json_delta pieces are joined into whole tool calls, each yielded when its block stops."""
    server.then(stream_reply("ok", tool_uses=[{"id": "t1", "name": "add", "input": {"a": 2, "b": [1, 2]}}]))
    chunks = list(model(k, server).stream("add", tools=[ADD]))
    (call,) = [c.tool_call for c in chunks if c.type == "tool_call"]
    assert (call.id, call.arguments) == ("t1", {"a": 2, "b": [1, 2]})
    assert chunks[-1].completion.finish_reason == "tool_calls"


def test_401_names_the_key_variable(k, server):
    """A wrong key gives AuthenticationError naming ANTHROPIC_API_KEY and the server's message."""
    with pytest.raises(AuthenticationError, match="ANTHROPIC_API_KEY") as info:
        model(k, server, api_key="wrong").complete("hi")
    assert "invalid x-api-key" in str(info.value)


def test_overloaded_529_is_retried(k, server):
    """529 overloaded_error is retried, then the next reply is returned."""
    server.then(error(529, "overloaded_error", "Overloaded"))
    assert model(k, server).complete("hi").text == "echo: hi"
    assert len(server.requests) == 2


def test_truncated_stream_keeps_partial_text(k, server):
    """A stream cut before message_stop raises StreamInterrupted with the text received."""
    events = stream_events("abcdefgh")[:5]  # start, ping, block start, "abcd", "efgh"
    server.then(Reply(chunks=events, end="close", content_type="text/event-stream"))
    with pytest.raises(StreamInterrupted) as info:
        list(model(k, server).stream("x"))
    assert info.value.partial == "abcdefgh"


def test_error_event_mid_stream(k, server):
    """An error event inside the stream raises ProviderError with its type and message."""
    events = stream_events("hello")[:3] + [event("error", {"error": {"type": "overloaded_error", "message": "Overloaded"}})]
    server.then(Reply(chunks=events, content_type="text/event-stream"))
    with pytest.raises(ProviderError, match="overloaded_error: Overloaded"):
        list(model(k, server).stream("x"))


def test_key_not_in_repr(k, server):
    """The key appears in no repr of the model or its client."""
    llm = model(k, server)
    assert KEY not in repr(llm) + repr(llm.http) + repr(llm.http.api_key)
