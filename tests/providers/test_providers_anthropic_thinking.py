"""Anthropic extended thinking: signed thinking blocks kept, streamed as reasoning and sent back unchanged.

The streams are real API recordings (``fixtures/anthropic_thinking_streams.json``
names the public repository and file they come from), served by a loopback
Messages API server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zagent import Message, StreamInterrupted, ToolSpec
from tests.servers.anthropic_server import AnthropicServer, message
from tests.servers.loopback import Reply

KEY = "sk-ant-thinking"
FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "anthropic_thinking_streams.json").read_text())
THINKING = FIXTURE["thinking_stream"]
TOOL_USE = FIXTURE["tool_use_stream"]
SEARCH = ToolSpec(name="google_search", description="Search the web.",
                  parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})
THOUGHT = "".join(e["delta"]["thinking"] for e in THINKING if e.get("delta", {}).get("type") == "thinking_delta")
SIGNATURE = next(e["delta"]["signature"] for e in THINKING if e.get("delta", {}).get("type") == "signature_delta")
BLOCK = {"type": "thinking", "thinking": THOUGHT, "signature": SIGNATURE}


def sse(events: list[dict]) -> Reply:
    return Reply(chunks=[f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events],
                 content_type="text/event-stream")


def thinking_then_tool_use() -> list[dict]:
    """The recorded thinking block (index 0), then the recorded tool_use block moved to index 1."""
    blocks = [e for e in THINKING if e["type"] in ("content_block_start", "content_block_delta", "content_block_stop")
              and e["index"] == 0]
    tool = [dict(e, index=1) for e in TOOL_USE if e["type"].startswith("content_block") and e["index"] == 1]
    return [THINKING[0], *blocks, *tool, TOOL_USE[-2], TOOL_USE[-1]]


def tool_use_json() -> Reply:
    """The same turn as one JSON reply, as the non-streamed API answers it."""
    return Reply.json({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-3-7-sonnet-20250219",
                       "content": [BLOCK, {"type": "tool_use", "id": "toolu_01VqG2jCdyjoB9HMTFnCKeo2",
                                           "name": "google_search", "input": {"query": "Foo Fighters"}}],
                       "stop_reason": "tool_use", "stop_sequence": None,
                       "usage": {"input_tokens": 471, "output_tokens": 80}})


@pytest.fixture
def k(make_kernel):
    """A fresh kernel with the offline, anthropic, parsers and actions plugins only, closed after the test."""
    return make_kernel("zagent.plugins.offline", "zagent.plugins.anthropic", "zagent.plugins.parsers",
                       "zagent.plugins.actions", strict=False)


@pytest.fixture
def server():
    with AnthropicServer(key=KEY) as s:
        yield s


def model(k, server):
    return k.llm("anthropic:claude-3-7-sonnet-20250219", base_url=server.url, api_key=KEY, retry_backoff=0.001,
                 thinking={"type": "enabled", "budget_tokens": 1024})


def test_recorded_thinking_stream_gives_reasoning_chunks_and_signed_block(k, server):
    """thinking_delta events stream as reasoning chunks; the done message keeps the signed block."""
    server.then(sse(THINKING))
    chunks = list(model(k, server).stream("hey"))
    assert "".join(c.text for c in chunks if c.type == "reasoning") == THOUGHT
    done = chunks[-1].completion
    assert done.reasoning == THOUGHT and done.message.reasoning_blocks == [BLOCK]
    assert done.text.startswith("Hello! I'm Assistant") and THOUGHT not in done.text
    assert "".join(c.text for c in chunks if c.type == "text") == done.text


def test_declared_agent_tool_loop_sends_signed_thinking_back_unchanged(k, server):
    """Acceptance: the second turn of a tool loop carries the first turn's thinking block, byte for byte."""
    k.add_tool(lambda query: f"results for {query}", name="google_search", description="Search the web.")
    server.then(tool_use_json(), message("Foo Fighters are a rock band."))
    agent = k.agent({"type": "customize", "name": "S", "prompt": "{question}", "tools": ["google_search"],
                     "inputs": [{"name": "question"}], "outputs": [{"name": "answer"}], "parse_mode": "str"})
    agent.llm = model(k, server)
    assert agent(question="Foo Fighters?").answer == "Foo Fighters are a rock band."
    second = server.requests[1]
    assistant = [m for m in second.json["messages"] if m["role"] == "assistant"][-1]
    assert assistant["content"][0] == BLOCK
    assert json.dumps(SIGNATURE).encode() in second.body and json.dumps(THOUGHT).encode() in second.body
    assert second.json["thinking"] == {"type": "enabled", "budget_tokens": 1024}


def test_streamed_tool_turn_sends_thinking_back_unchanged(k, server):
    """Streamed: the block assembled from thinking/signature deltas goes back first in the assistant turn."""
    server.then(sse(thinking_then_tool_use()), message("done"))
    llm = model(k, server)
    first = list(llm.stream("search Foo Fighters", tools=[SEARCH]))[-1].completion
    assert first.tool_calls[0].arguments == {"query": "Foo Fighters"}
    history = [Message.user("search Foo Fighters"), first.message,
               Message.tool("results", first.tool_calls[0].id, "google_search")]
    llm.complete(history, tools=[SEARCH])
    turn = server.requests[1].json["messages"][1]
    assert turn["role"] == "assistant" and turn["content"][0] == BLOCK and turn["content"][1]["type"] == "tool_use"


def test_redacted_thinking_goes_back_unchanged(k, server):
    """A redacted_thinking block (opaque data) is kept and returned as it came."""
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr"}
    server.then(Reply.json({"type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use",
                            "content": [redacted, {"type": "tool_use", "id": "t1", "name": "google_search",
                                                   "input": {"query": "x"}}],
                            "usage": {"input_tokens": 1, "output_tokens": 1}}), message("ok"))
    llm = model(k, server)
    first = llm.complete("q", tools=[SEARCH])
    llm.complete([Message.user("q"), first.message, Message.tool("r", "t1", "google_search")], tools=[SEARCH])
    assert server.requests[1].json["messages"][1]["content"][0] == redacted


def test_stream_closed_after_stop_reason_is_complete(k, server):
    """A stream that ends after message_delta (stop reason given) but before message_stop is whole."""
    server.then(sse(THINKING[:-1]))
    done = list(model(k, server).stream("hey"))[-1].completion
    assert done.finish_reason == "stop" and done.text.endswith("best to help.")


def test_stream_closed_before_stop_reason_is_cut(k, server):
    """A stream that ends before any stop reason is still reported as interrupted."""
    server.then(sse(THINKING[:-2]))
    with pytest.raises(StreamInterrupted):
        list(model(k, server).stream("hey"))


def test_record_and_replay_keep_thinking_blocks(k, server, tmp_path):
    """record: writes the signed block; replay: gives it back, so a replayed tool loop sends it again."""
    path = tmp_path / "run.jsonl"
    server.then(tool_use_json())
    rec = k.llm("record:anthropic:claude-3-7-sonnet-20250219", path=str(path), base_url=server.url, api_key=KEY)
    rec.complete("q", tools=[SEARCH])
    assert server.requests[0].json["model"] == "claude-3-7-sonnet-20250219"
    replayed = k.llm("replay:x", path=str(path)).complete("q", tools=[SEARCH])
    assert replayed.message.reasoning_blocks == [BLOCK] and replayed.reasoning == THOUGHT
