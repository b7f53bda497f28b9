"""Attack: a server returns tool calls without ids, with empty ids or with one id repeated. Each result must
still be paired with its own call, in every loop."""

import json

import pytest

from zagent import Message, ToolCall
from zagent._model.replies import unique_call_ids
from tests.servers.loopback import LoopbackServer, Reply

from .conftest import make_kernel


def calls_message(*ids):
    return Message(role="assistant", content="", tool_calls=[
        ToolCall(id=i, name="word_count", arguments={"text": " ".join(["w"] * (n + 1))}) for n, i in enumerate(ids)])


def pairs(llm):
    """(call id -> arguments' word count) as sent in the assistant message, and (tool_call_id -> result) after."""
    second = llm.requests[1].messages
    [assistant] = [m for m in second if m.tool_calls]
    asked = {c.id: len(c.arguments["text"].split()) for c in assistant.tool_calls}
    answered = {m.tool_call_id: int(m.content) for m in second if m.role == "tool"}
    return asked, answered


@pytest.mark.parametrize("ids", [("same", "same", "same"), ("", "", ""), ("a", "", "a")])
def test_react_pairs_each_result_with_its_own_call(ids):
    """ReAct: with repeated or empty ids, each call gets a unique id and its own result (not the last one)."""
    k = make_kernel()
    agent = k.agent({"type": "react", "name": "r", "tools": ["word_count"]})
    agent.llm = k.llm("scripted:ids", replies=[calls_message(*ids), "done"])
    agent.chat("count", use_react=True)
    asked, answered = pairs(agent.llm)
    assert len(asked) == 3 and asked == answered  # 1, 2, 3 words, each answered under its own id
    k.close()


@pytest.mark.parametrize("ids", [("same", "same"), ("", "")])
def test_declared_agent_pairs_each_result_with_its_own_call(ids):
    """CustomizeAction: the same pairing."""
    k = make_kernel()
    agent = k.agent({"name": "c", "prompt": "{q}", "inputs": [{"name": "q"}], "outputs": [{"name": "a"}],
                     "parse_mode": "str", "tools": ["word_count"]})
    agent.llm = k.llm("scripted:ids2", replies=[calls_message(*ids), "done"])
    agent(q="x")
    asked, answered = pairs(agent.llm)
    assert len(asked) == 2 and asked == answered
    k.close()


def test_react_over_http_with_a_server_that_repeats_ids():
    """An OpenAI-compatible server answering two calls with the same id, non-streamed: each result is right."""
    def reply(request):
        body = request.json
        if body["messages"][-1]["role"] == "tool":
            return Reply.json({"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "done"}, "finish_reason": "stop"}]})
        calls = [{"id": "call_0", "type": "function", "function": {"name": "word_count",
                                                                   "arguments": json.dumps({"text": t})}}
                 for t in ("one", "one two")]
        return Reply.json({"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": calls},
             "finish_reason": "tool_calls"}]})

    k = make_kernel(plugins=["zagent.plugins.openai"])
    with LoopbackServer(reply) as server:
        agent = k.agent({"type": "react", "name": "r", "tools": ["word_count"]})
        agent.llm = k.llm("openai:gpt-4o-mini", base_url=server.url, api_key="sk-test-key")
        agent.chat("count", use_react=True)
        sent = server.requests[1].json["messages"]
    [assistant] = [m for m in sent if m.get("tool_calls")]
    asked = {c["id"]: len(json.loads(c["function"]["arguments"])["text"].split()) for c in assistant["tool_calls"]}
    answered = {m["tool_call_id"]: int(m["content"]) for m in sent if m["role"] == "tool"}
    assert len(asked) == 2 and asked == answered
    k.close()


def test_unique_call_ids_keeps_good_ids_and_replaces_bad_ones():
    """Good ids are kept as they are (same list back); missing, empty and repeated ones get fresh unique ids."""
    good = [ToolCall(id="a", name="t"), ToolCall(id="b", name="t")]
    assert unique_call_ids(good) is good
    fixed = unique_call_ids([ToolCall(id="a", name="t"), ToolCall(id="a", name="t"), ToolCall(id="", name="t")])
    assert fixed[0].id == "a" and len({c.id for c in fixed}) == 3 and all(c.id for c in fixed)
