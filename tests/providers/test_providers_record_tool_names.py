"""record:/replay: wrap a provider through the same tool-name mapping as a direct call (``srv.lookup`` -> ``srv_lookup``)."""

from __future__ import annotations

import json

import pytest

from zagent import Message, ToolCall, ToolSpec
from tests.servers.openai_server import OpenAIServer, completion, stream_reply

KEY = "sk-names-test"
LOOKUP = ToolSpec(name="srv.lookup", description="Look a word up.",
                  parameters={"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]})
HISTORY = [Message.user("define cat"),
           Message.assistant(tool_calls=[ToolCall(id="c0", name="srv.lookup", arguments={"word": "dog"})]),
           Message.tool("a pet", "c0", "srv.lookup")]
WIRE_CALL = {"id": "c1", "name": "srv_lookup", "arguments": '{"word": "cat"}'}


@pytest.fixture
def k(make_kernel):
    """A fresh kernel with the offline and openai plugins only, closed after the test."""
    return make_kernel("zagent.plugins.offline", "zagent.plugins.openai", strict=False)


def _wire_names(body: dict) -> tuple[list[str], str]:
    return [t["function"]["name"] for t in body["tools"]], body["messages"][1]["tool_calls"][0]["function"]["name"]


def test_record_sends_the_same_wire_names_as_a_direct_call(k, tmp_path):
    """Through record:, a dotted tool reaches the server as 'srv_lookup', exactly like a direct openai: call."""
    with OpenAIServer(key=KEY) as server:
        server.then(completion(tool_calls=[WIRE_CALL]), completion(tool_calls=[WIRE_CALL]))
        k.llm("openai:gpt-4o-mini", base_url=server.url, api_key=KEY).complete(HISTORY, tools=[LOOKUP])
        rec = k.llm("record:openai:gpt-4o-mini", path=str(tmp_path / "r.jsonl"), base_url=server.url, api_key=KEY)
        rec.complete(HISTORY, tools=[LOOKUP])
        direct, recorded = (json.loads(r.body) for r in server.requests)
    assert _wire_names(recorded) == _wire_names(direct) == (["srv_lookup"], "srv_lookup")


def test_recorded_tool_call_maps_back_and_replays_with_the_registered_name(k, tmp_path):
    """The server's 'srv_lookup' call comes back as 'srv.lookup' from record:, in the file, and from replay:."""
    path = tmp_path / "r.jsonl"
    with OpenAIServer(key=KEY) as server:
        server.then(completion(tool_calls=[WIRE_CALL]))
        rec = k.llm("record:openai:gpt-4o-mini", path=str(path), base_url=server.url, api_key=KEY)
        reply = rec.complete(HISTORY, tools=[LOOKUP])
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("srv.lookup", {"word": "cat"})]
    line = json.loads(path.read_text())
    assert line["completion"]["message"]["tool_calls"][0]["name"] == "srv.lookup"
    assert [t["name"] for t in line["request"]["tools"]] == ["srv.lookup"]
    replayed = k.llm("replay:r", path=str(path)).complete(HISTORY, tools=[LOOKUP])
    assert replayed.tool_calls[0].name == "srv.lookup"


def test_recorded_stream_maps_names_both_ways(k, tmp_path):
    """A streamed call through record: sends 'srv_lookup' and yields tool-call chunks named 'srv.lookup'."""
    path = tmp_path / "s.jsonl"
    with OpenAIServer(key=KEY) as server:
        server.then(stream_reply("", tool_calls=[WIRE_CALL]))
        rec = k.llm("record:openai:gpt-4o-mini", path=str(path), base_url=server.url, api_key=KEY)
        chunks = list(rec.stream(HISTORY, tools=[LOOKUP]))
        sent = json.loads(server.requests[0].body)
    assert _wire_names(sent) == (["srv_lookup"], "srv_lookup")
    assert [c.tool_call.name for c in chunks if c.type == "tool_call"] == ["srv.lookup"]
    assert chunks[-1].completion.tool_calls[0].name == "srv.lookup"
    replayed = list(k.llm("replay:s", path=str(path)).stream(HISTORY, tools=[LOOKUP]))
    assert replayed[-1].completion.tool_calls[0].name == "srv.lookup"


def test_replay_uses_the_recorded_profile(k, tmp_path):
    """replay: reports the profile the recorded model had, so agents pick the same strategies offline."""
    path = tmp_path / "p.jsonl"
    with OpenAIServer(key=KEY) as server:
        rec = k.llm("record:openai:gpt-4o-mini", path=str(path), base_url=server.url, api_key=KEY,
                    profile={"native_tools": False})
        rec.complete("hi")
    profile = k.llm("replay:p", path=str(path)).profile
    assert (profile.native_tools, profile.json_schema_output) == (False, True)
