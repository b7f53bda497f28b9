"""The ollama provider against a loopback /api/chat server."""

from __future__ import annotations

import pytest

from zagent import Kernel, Message, ProviderError, StreamInterrupted, ToolCall, ToolSpec
from zagent.plugins.ollama.provider import host_url
from tests.servers.loopback import Reply
from tests.servers.ollama_server import OllamaServer, reply, stream_lines, stream_reply

ADD = ToolSpec(name="add", description="Add.", parameters={"type": "object", "properties": {"a": {"type": "integer"}}})


@pytest.fixture
def k(make_kernel):
    """A fresh kernel with the ollama plugin only, closed after the test."""
    return make_kernel("zagent.plugins.ollama", strict=False)


@pytest.fixture
def server():
    with OllamaServer() as s:
        yield s


def model(k, server, name="llama3.2", **options):
    return k.llm(f"ollama:{name}", base_url=server.url, retry_backoff=0.001, **options)


def test_completion_and_usage(k, server):
    """A reply gives the text and usage from prompt_eval_count/eval_count."""
    c = model(k, server).complete("hi")
    assert (c.text, c.finish_reason, c.usage.input_tokens, c.usage.output_tokens) == ("echo: hi", "stop", 26, 4)
    assert server.requests[0].json["stream"] is False


def test_sampling_options_go_into_options(k, server):
    """temperature and other sampling settings are sent in Ollama's options object; format stays top-level."""
    model(k, server, temperature=0, num_ctx=4096).complete("hi", seed=1, response_format={"type": "json_object"})
    body = server.requests[0].json
    assert body["options"] == {"temperature": 0, "num_ctx": 4096, "seed": 1}
    assert body["format"] == "json"


def test_tools_out_and_calls_in(k, server):
    """Tools go out as functions; tool calls come back with object arguments and generated ids."""
    server.then(reply("", tool_calls=[{"name": "add", "arguments": {"a": 2}}]))
    c = model(k, server).complete("add", tools=[ADD])
    assert server.requests[0].json["tools"][0]["function"]["name"] == "add"
    (call,) = c.tool_calls
    assert (call.name, call.arguments, c.finish_reason) == ("add", {"a": 2}, "tool_calls") and call.id


def test_tool_results_go_back_with_tool_name(k, server):
    """Assistant tool calls go back with object arguments, and tool results with the tool's name."""
    history = [Message.user("add"), Message.assistant(None, [ToolCall(id="c", name="add", arguments={"a": 1})]),
               Message.tool("1", "c", "add")]
    model(k, server).complete(history)
    sent = server.requests[0].json["messages"]
    assert sent[1]["tool_calls"] == [{"function": {"name": "add", "arguments": {"a": 1}}}]
    assert sent[2] == {"role": "tool", "content": "1", "tool_name": "add"}


def test_ndjson_stream(k, server):
    """Streaming reads NDJSON: text deltas, whole tool calls, and usage from the done object."""
    server.then(stream_reply("hello world", tool_calls=[{"name": "add", "arguments": {"a": 3}}]))
    chunks = list(model(k, server).stream("x", tools=[ADD]))
    assert "".join(c.text for c in chunks if c.type == "text") == "hello world"
    assert [c.tool_call.arguments for c in chunks if c.type == "tool_call"] == [{"a": 3}]
    assert chunks[-1].completion.usage.input_tokens == 26


def test_unknown_model_error(k, server):
    """A 404 names the status and Ollama's message."""
    with pytest.raises(ProviderError, match="model 'missing' not found") as info:
        model(k, server, name="missing").complete("hi")
    assert info.value.status == 404


def test_stream_without_done_is_interrupted(k, server):
    """An NDJSON stream that ends before its done object raises StreamInterrupted with the partial text."""
    server.then(Reply(chunks=stream_lines("abcdef")[:2], end="close", content_type="application/x-ndjson"))
    with pytest.raises(StreamInterrupted) as info:
        list(model(k, server).stream("x"))
    assert info.value.partial == "abcdef"


def test_ollama_host_forms(monkeypatch):
    """OLLAMA_HOST may be host:port, a bare host (port 11434) or a URL (its scheme's port); 0.0.0.0 means this machine."""
    assert host_url("0.0.0.0") == "http://127.0.0.1:11434"
    assert host_url("example.com:8080") == "http://example.com:8080"
    assert host_url("https://ollama.example.com") == "https://ollama.example.com"
    assert host_url(None) == "http://127.0.0.1:11434"


def test_ollama_host_from_environment(k, server, monkeypatch):
    """Without base_url the server comes from OLLAMA_HOST."""
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{server.port}")
    assert k.llm("ollama:llama3.2").complete("env").text == "echo: env"


# -- thinking models (issue 16) -------------------------------------------------------------

def test_thinking_field_is_reasoning_not_text():
    """/api/chat's message.thinking fills reasoning; the answer text is only content."""
    from tests.servers.ollama_server import final

    with OllamaServer() as server:
        body = final("Hello! How can I assist you today?")
        body["message"]["thinking"] = 'Okay, the user said "hello". I should greet them.'
        server.then(Reply.json(body))
        k = Kernel(plugins=["zagent.plugins.ollama"], entry_points=False)
        c = k.llm("ollama:qwen3", base_url=server.url).complete("hello")
        assert c.text == "Hello! How can I assist you today?" and c.reasoning.startswith("Okay, the user")
        k.close()


def test_streamed_thinking_arrives_as_reasoning_chunks():
    """Streamed thinking deltas are reasoning chunks, never text. The deltas ("Need", " to", " comply") are
    gpt-oss:20b's first ones as recorded in attogram/ollama-bash-lib demos/ollama_generate_stream_json.md
    (an /api/generate stream, top-level "thinking"); /api/chat carries the same deltas in message.thinking."""
    import json as _json

    lines = [{"model": "qwen3", "message": {"role": "assistant", "content": "", "thinking": t}, "done": False}
             for t in ("Need", " to", " comply")]
    lines += [{"model": "qwen3", "message": {"role": "assistant", "content": "Fluffy"}, "done": False},
              {"model": "qwen3", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
               "prompt_eval_count": 3, "eval_count": 9}]
    with OllamaServer() as server:
        server.then(Reply(chunks=[_json.dumps(x).encode() + b"\n" for x in lines], content_type="application/x-ndjson"))
        k = Kernel(plugins=["zagent.plugins.ollama"], entry_points=False)
        chunks = list(k.llm("ollama:qwen3", base_url=server.url).stream("rabbit"))
        assert "".join(c.text for c in chunks if c.type == "reasoning") == "Need to comply"
        assert "".join(c.text for c in chunks if c.type == "text") == "Fluffy" == chunks[-1].completion.text
        assert chunks[-1].completion.reasoning == "Need to comply"
        k.close()


def test_repeated_streamed_ids_become_unique():
    """Two streamed calls carrying one id get distinct ids."""
    import json as _json

    call = {"id": "call_x", "function": {"name": "add", "arguments": {"a": 1}}}
    lines = [{"model": "m", "message": {"role": "assistant", "content": "", "tool_calls": [call]}, "done": False},
             {"model": "m", "message": {"role": "assistant", "content": "", "tool_calls": [call]}, "done": False},
             {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"}]
    with OllamaServer() as server:
        server.then(Reply(chunks=[_json.dumps(x).encode() + b"\n" for x in lines], content_type="application/x-ndjson"))
        k = Kernel(plugins=["zagent.plugins.ollama"], entry_points=False)
        done = list(k.llm("ollama:m", base_url=server.url).stream("q", tools=[ADD]))[-1].completion
        assert len({c.id for c in done.tool_calls}) == 2
        k.close()


def test_the_model_s_own_sampling_settings_are_in_its_llm_start_event(make_kernel, server):
    """Settings given when the model was built (Ollama keeps them in options; num_predict is max_tokens) are what
    llm_start reports, so traces show them; a call's own temperature wins."""
    seen = []

    class Watch:
        def zagent_event(self, event):
            if event.type == "llm_start":
                seen.append(event.data)

    k = make_kernel("zagent.plugins.ollama", Watch(), strict=False)
    llm = model(k, server, temperature=0.2, num_predict=30)
    llm.complete("hi")
    llm.complete("hi", temperature=0.9)
    assert [(d.get("temperature"), d.get("max_tokens")) for d in seen] == [(0.2, 30), (0.9, 30)]
