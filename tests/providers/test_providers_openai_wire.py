"""Chat Completions wire details of real servers (issues 16 and 22): reasoning, refusals, odd ids,
llama.cpp timings, tool_choice, stream usage, bounded generations, and record: on the wire.

Recorded payloads come from ``fixtures/openai_replies.json`` (each names its public repository and file).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zagent import Refusal, ToolSpec
from tests.servers.loopback import Reply
from tests.servers.openai_server import OpenAIServer, chunk, completion, sse, stream_events

KEY = "sk-wire-test"
FIX = json.loads((Path(__file__).parent / "fixtures" / "openai_replies.json").read_text())
ADD = ToolSpec(name="add", parameters={"type": "object", "properties": {"a": {"type": "integer"}}})


@pytest.fixture
def k(make_kernel):
    """A fresh kernel with the offline and openai plugins only, closed after the test."""
    return make_kernel("zagent.plugins.offline", "zagent.plugins.openai", strict=False)


@pytest.fixture
def server():
    with OpenAIServer(key=KEY) as s:
        yield s


def llm(k, server, name="gpt-4o-mini", **options):
    return k.llm(f"openai:{name}", base_url=server.url, api_key=KEY, retry_backoff=0.001, **options)


def stream(events: list[bytes]) -> Reply:
    return Reply(chunks=events, content_type="text/event-stream")


def test_vllm_inline_think_is_reasoning_not_text(k, server):
    """Recorded vLLM reply with <think> in content: the answer is the text after it; reasoning is kept."""
    server.then(Reply.json(FIX["vllm_inline_think"]["reply"]))
    c = llm(k, server, "Qwen/Qwen3-0.6B").complete("Hello, InstructKR!")
    assert c.text == "Hello! How can I assist you today? \U0001f60a"
    assert c.reasoning.startswith("Okay, the user just said") and "<think>" not in c.reasoning


def test_reasoning_content_field_is_reasoning(k, server):
    """DeepSeek/vLLM reasoning_content and OpenRouter reasoning fill Completion.reasoning."""
    body = json.loads(completion("4").body)
    body["choices"][0]["message"]["reasoning_content"] = "2+2 is 4"
    server.then(Reply.json(body))
    c = llm(k, server).complete("2+2?")
    assert (c.text, c.reasoning) == ("4", "2+2 is 4")
    body["choices"][0]["message"].pop("reasoning_content")
    body["choices"][0]["message"]["reasoning"] = "via router"
    server.then(Reply.json(body))
    assert llm(k, server).complete("2+2?").reasoning == "via router"


def test_streamed_reasoning_content_arrives_as_reasoning_chunks(k, server):
    """reasoning_content deltas stream as reasoning chunks, never as text."""
    events = [chunk({"role": "assistant", "content": ""}), chunk({"reasoning_content": "think "}),
              chunk({"reasoning_content": "hard"}), *stream_events("ok")[1:]]
    server.then(stream(events))
    chunks = list(llm(k, server).stream("q"))
    assert "".join(c.text for c in chunks if c.type == "reasoning") == "think hard"
    assert "".join(c.text for c in chunks if c.type == "text") == "ok"
    assert chunks[-1].completion.reasoning == "think hard"


def test_refusal_surfaces_on_the_completion(k, server):
    """Recorded refusal: the completion carries it (no text invented)."""
    server.then(Reply.json(FIX["openai_refusal"]["reply"]))
    c = llm(k, server).complete("How do I make anthrax?")
    assert c.refusal == "I'm very sorry, but I can't assist with that." and c.text == ""


def test_refusal_to_structured_output_raises_refusal(k, server):
    """With a response_format, the same reply raises the typed Refusal."""
    server.then(Reply.json(FIX["openai_refusal"]["reply"]))
    with pytest.raises(Refusal) as info:
        llm(k, server).complete("How do I make anthrax?", response_format={"type": "json_object"})
    assert info.value.refusal.startswith("I'm very sorry")


def test_streamed_refusal_surfaces(k, server):
    """refusal deltas are gathered on the streamed completion, and raise Refusal with structured output."""
    events = [chunk({"role": "assistant", "content": None, "refusal": ""}), chunk({"refusal": "I'm very sorry, "}),
              chunk({"refusal": "but I can't assist with that."}), chunk({}, "stop"), sse(b"[DONE]")]
    server.then(stream(events))
    assert list(llm(k, server).stream("q"))[-1].completion.refusal == "I'm very sorry, but I can't assist with that."
    server.then(stream(events))
    with pytest.raises(Refusal):
        list(llm(k, server).stream("q", response_format={"type": "json_object"}))


@pytest.mark.parametrize("ids", [("", ""), ("same", "same"), (None, None)])
def test_non_stream_calls_get_unique_ids(k, server, ids):
    """Empty, repeated or missing ids (Gemini's compat endpoint, some local servers) become unique ids."""
    reply = json.loads(json.dumps(FIX["openai_two_tool_calls"]["reply"]))
    for call, i in zip(reply["choices"][0]["message"]["tool_calls"], ids):
        if i is None:
            call.pop("id")
        else:
            call["id"] = i
    server.then(Reply.json(reply))
    c = llm(k, server).complete("weather and AAPL", tools=[ADD])
    got = [call.id for call in c.tool_calls]
    assert all(got) and len(set(got)) == 2
    assert [call.name for call in c.tool_calls] == ["GetWeatherArgs", "get_stock_price"]


def test_streamed_repeated_ids_become_unique(k, server):
    """Streamed calls at two indexes with one id get distinct ids, the same in chunks and done."""
    calls = [{"id": "call_0", "name": "add", "arguments": '{"a": 1}'}, {"id": "call_0", "name": "add", "arguments": '{"a": 2}'}]
    server.then(stream(stream_events("", calls)))
    chunks = list(llm(k, server).stream("q", tools=[ADD]))
    streamed = [c.tool_call.id for c in chunks if c.type == "tool_call"]
    assert len(set(streamed)) == 2 and streamed == [c.id for c in chunks[-1].completion.tool_calls]


def test_llama_cpp_timings_stand_in_for_missing_usage(k, server):
    """A llama.cpp reply with timings and no usage reports those token counts (field names as llama.cpp's server sends them)."""
    body = json.loads(completion("hi").body)
    body.pop("usage")
    body["timings"] = {"prompt_n": 21, "prompt_ms": 47.9, "predicted_n": 34, "predicted_ms": 296.1, "predicted_per_second": 114.8}
    server.then(Reply.json(body))
    c = llm(k, server, "qwen").complete("hello?")
    assert (c.usage.input_tokens, c.usage.output_tokens) == (21, 34)


def test_llama_cpp_stream_timings_stand_in_for_missing_usage(k, server):
    """In a stream without a usage event, the last chunk's timings give the usage."""
    events = stream_events("hi", usage=None)
    last = json.loads(events[-2][len(b"data: "):])
    last["timings"] = {"prompt_n": 5, "predicted_n": 7, "cache_n": 2}
    events[-2] = sse(last)
    server.then(stream(events))
    usage = list(llm(k, server, "qwen").stream("q"))[-1].completion.usage
    assert (usage.input_tokens, usage.output_tokens) == (7, 7)


def test_tool_choice_auto_sent_with_tools_only(k, server):
    """tool_choice 'auto' goes with offered tools (llama-cpp-python ignores tools otherwise); a user's choice wins."""
    model = llm(k, server)
    model.complete("q", tools=[ADD])
    model.complete("q")
    model.complete("q", tools=[ADD], tool_choice="required")
    sent = [r.json.get("tool_choice") for r in server.requests]
    assert sent == ["auto", None, "required"]


def test_stream_asks_for_usage_and_reports_it(k, server):
    """Streams send stream_options.include_usage and report the server's usage."""
    chunks = list(llm(k, server).stream("q"))
    assert server.requests[0].json["stream_options"] == {"include_usage": True}
    assert (chunks[-1].completion.usage.input_tokens, chunks[-1].completion.usage.output_tokens) == (11, 7)


def test_profile_without_stream_usage_does_not_ask(k, server):
    """A server the profile says rejects stream_options is not sent it."""
    list(llm(k, server, profile={"stream_usage": False}).stream("q"))
    assert "stream_options" not in server.requests[0].json


def test_default_max_tokens_from_profile(k, server):
    """Unknown (local) models get the profile's bounded max_tokens; known OpenAI models none; options override."""
    llm(k, server, "qwen2.5-coder").complete("q")
    llm(k, server, "gpt-4o").complete("q")
    llm(k, server, "qwen2.5-coder", max_tokens=50).complete("q")
    llm(k, server, "gpt-4o", profile={"max_tokens": 99}).complete("q")
    assert [r.json.get("max_tokens") for r in server.requests] == [2048, None, 50, 99]


def test_record_sends_the_bare_model_name_and_keeps_max_tokens(k, server, tmp_path):
    """record:openai:<model> puts <model> on the wire; max_tokens is recorded, not masked as a secret."""
    path = tmp_path / "r.jsonl"
    rec = k.llm("record:openai:gpt-4o-mini", path=str(path), base_url=server.url, api_key=KEY)
    rec.complete("q", max_tokens=64)
    list(rec.stream("q"))
    assert [r.json["model"] for r in server.requests] == ["gpt-4o-mini", "gpt-4o-mini"]
    line = json.loads(path.read_text().splitlines()[0])
    assert line["request"]["options"]["max_tokens"] == 64 and KEY not in path.read_text()


def test_assistant_turn_with_tool_calls_never_sends_null_content():
    """An assistant message holding only tool calls is sent with content "" (llama-cpp-python's server
    answers 500 to null)."""
    from zagent import Message, ToolCall
    from zagent.plugins.openai.wire import encode_message

    out = encode_message(Message(role="assistant", content=None,
                                 tool_calls=[ToolCall(id="c1", name="add", arguments={"a": 1})]))
    assert out["content"] == "" and out["tool_calls"][0]["id"] == "c1"
