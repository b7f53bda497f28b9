"""The Responses API provider (openai-responses:) on a loopback server speaking that protocol.

Recorded replies: ``fixtures/openai_responses_replies.json`` (openai-python's live-API snapshots).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zagent import Kernel, Message, ProviderError, Refusal, StreamInterrupted, ToolSpec
from tests.servers.loopback import Reply
from tests.servers.responses_server import (ResponsesServer, call_item, events, message_item, response,
                                            stream_reply)

KEY = "sk-responses-test"
FIX = json.loads((Path(__file__).parent / "fixtures" / "openai_responses_replies.json").read_text())
ADD = ToolSpec(name="add", description="Add.", parameters={"type": "object", "properties": {"a": {"type": "integer"}}})
REASONING = {"type": "reasoning", "id": "rs_abc", "summary": [{"type": "summary_text", "text": "Add one to one."}],
             "encrypted_content": "gAAAAABo-opaque=="}


@pytest.fixture
def k(make_kernel):
    """A fresh kernel with the openai plugin only, closed after the test."""
    return make_kernel("zagent.plugins.openai", strict=False)


@pytest.fixture
def server():
    with ResponsesServer(key=KEY) as s:
        yield s


def llm(k, server, spec="openai-responses:gpt-5-mini", **options):
    return k.llm(spec, base_url=server.url, api_key=KEY, retry_backoff=0.001, **options)


def test_recorded_reply_text_and_usage(k, server):
    """The live-API reply gives its output_text and usage; a null text part is skipped."""
    server.then(Reply.json(FIX["output_text"]), Reply.json(FIX["null_text_item"]))
    model = llm(k, server)
    c = model.complete("What's the weather like in SF?")
    assert c.text.startswith("I can't provide real-time updates") and c.finish_reason == "stop"
    assert (c.usage.input_tokens, c.usage.output_tokens) == (14, 50)
    assert model.complete("hi").text == "hello"


def test_request_uses_input_items_and_function_tools(k, server):
    """System/user turns become input items; tools are flat function tools with tool_choice auto."""
    llm(k, server).complete([Message.system("be brief"), Message.user("2+2?")], tools=[ADD])
    body = server.requests[0].json
    assert body["input"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "2+2?"}]
    assert body["tools"][0]["name"] == "add" and body["tools"][0]["type"] == "function"
    assert body["tool_choice"] == "auto"


def test_reasoning_items_go_back_unchanged_between_turns(k, server):
    """A reasoning item (with encrypted content) comes back first in the next turn's input, unchanged."""
    server.then(Reply.json(response([REASONING, call_item("call_1", "add", '{"a": 1}')])))
    model = llm(k, server, store=False)
    first = model.complete("add one", tools=[ADD])
    assert first.reasoning == "Add one to one." and first.message.reasoning_blocks == [REASONING]
    model.complete([Message.user("add one"), first.message, Message.tool("2", "call_1", "add")], tools=[ADD])
    body = server.requests[1].json
    assert body["input"][1] == REASONING
    call = body["input"][2]
    assert (call["type"], call["call_id"], call["name"], json.loads(call["arguments"])) == ("function_call", "call_1", "add", {"a": 1})
    assert body["input"][3] == {"type": "function_call_output", "call_id": "call_1", "output": "2"}
    assert "reasoning.encrypted_content" in body["include"]


def test_streamed_reasoning_text_and_calls(k, server):
    """Streaming: reasoning summary deltas are reasoning chunks; a function call arrives whole; usage reported."""
    server.then(stream_reply([REASONING, call_item("call_9", "add", '{"a": 41}')]))
    chunks = list(llm(k, server).stream("q", tools=[ADD]))
    assert "".join(c.text for c in chunks if c.type == "reasoning") == "Add one to one."
    calls = [c.tool_call for c in chunks if c.type == "tool_call"]
    assert [(c.id, c.name, c.arguments) for c in calls] == [("call_9", "add", {"a": 41})]
    done = chunks[-1].completion
    assert done.finish_reason == "tool_calls" and done.message.reasoning_blocks == [REASONING]
    assert (done.usage.input_tokens, done.usage.output_tokens) == (13, 6)


def test_structured_output_goes_in_text_format(k, server):
    """A JSON-schema response_format becomes text.format (flat json_schema)."""
    schema = {"title": "Answer", "type": "object", "properties": {"a": {"type": "string"}}}
    llm(k, server).complete("q", response_format=schema)
    fmt = server.requests[0].json["text"]["format"]
    assert fmt == {"type": "json_schema", "name": "Answer", "schema": schema, "strict": False}


def test_refusal_part_surfaces_and_raises_for_structured_output(k, server):
    """A refusal content part is Completion.refusal, and Refusal when structured output was asked for."""
    refused = response([message_item("", refusal="I can't help with that.")])
    server.then(Reply.json(refused), Reply.json(refused))
    model = llm(k, server)
    assert model.complete("q").refusal == "I can't help with that."
    with pytest.raises(Refusal):
        model.complete("q", response_format={"type": "json_object"})


def test_incomplete_is_length_and_max_tokens_maps(k, server):
    """status incomplete (max_output_tokens) is finish_reason 'length'; max_tokens is sent as max_output_tokens."""
    server.then(Reply.json(response([message_item("partial")], status="incomplete",
                                    incomplete={"reason": "max_output_tokens"})))
    c = llm(k, server).complete("q", max_tokens=5)
    assert c.finish_reason == "length" and server.requests[0].json["max_output_tokens"] == 5


def test_failed_response_is_a_provider_error(k, server):
    """status failed with an error object raises ProviderError naming it."""
    body = response([], status="failed")
    body["error"] = {"code": "server_error", "message": "The model crashed."}
    server.then(Reply.json(body))
    with pytest.raises(ProviderError, match="The model crashed"):
        llm(k, server).complete("q")


def test_stream_cut_before_completed_is_interrupted(k, server):
    """A stream that ends before response.completed raises StreamInterrupted with the partial text."""
    server.then(Reply(chunks=events([message_item("hello there")])[:-1], content_type="text/event-stream"))
    with pytest.raises(StreamInterrupted) as info:
        list(llm(k, server).stream("q"))
    assert info.value.partial == "hello there"


def test_openai_provider_selects_responses_by_option_or_profile(server):
    """openai:<model> speaks the Responses API with api='responses' or a kernel profile entry."""
    k = Kernel(plugins=["zagent.plugins.openai"], entry_points=False,
               config={"profiles": {"openai:gpt-5": {"api": "responses"}}})
    try:
        assert k.llm("openai:gpt-5", base_url=server.url, api_key=KEY).complete("x").text == "echo: x"
        assert llm(k, server, "openai:o3", api="responses").complete("y").text == "echo: y"
        assert [r.path for r in server.requests] == ["/v1/responses", "/v1/responses"]
    finally:
        k.close()


def test_stream_with_only_the_final_object_loses_nothing(k, server):
    """A server that streams no deltas, only response.completed with the output, still gives text and calls."""
    final = response([message_item("all at once"), call_item("call_2", "add", '{"a": 2}')])
    body = f"event: response.completed\ndata: {json.dumps({'type': 'response.completed', 'response': final})}\n\n"
    server.then(Reply(chunks=[body.encode()], content_type="text/event-stream"))
    chunks = list(llm(k, server).stream("q", tools=[ADD]))
    assert "".join(c.text for c in chunks if c.type == "text") == "all at once" == chunks[-1].completion.text
    assert [c.tool_call.id for c in chunks if c.type == "tool_call"] == ["call_2"]
