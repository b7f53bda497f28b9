"""Tool names a provider refuses on the wire (``server.tool``) are renamed for the request and mapped back."""

import json

from zagent import Kernel, Message, ToolCall

from tests.servers.openai_server import OpenAIServer, completion


def test_dotted_tool_name_is_renamed_on_the_wire_and_back():
    """A 'time.now' tool reaches OpenAI as 'time_now', and the model's call comes back as 'time.now'."""
    k = Kernel(["zagent.plugins.openai"], entry_points=False)

    def now(zone: str) -> str:
        """The time."""
        return "12:00"

    k.add_tool(now, name="time.now")
    with OpenAIServer(key="sk-test") as server:
        server.then(completion(tool_calls=[{"id": "c1", "name": "time_now", "arguments": '{"zone": "UTC"}'}]))
        llm = k.llm("openai:gpt-test", base_url=server.url + "/v1", api_key="sk-test")
        history = [Message.user("time?"),
                   Message.assistant(tool_calls=[ToolCall(id="c0", name="time.now", arguments={"zone": "CET"})]),
                   Message.tool("11:00", "c0", "time.now")]
        reply = llm.complete(history, tools=k.tools())
        sent = json.loads(server.requests[-1].body)
    assert [t["function"]["name"] for t in sent["tools"]] == ["time_now"]
    assert sent["messages"][1]["tool_calls"][0]["function"]["name"] == "time_now"
    assert reply.tool_calls[0].name == "time.now"
    assert k.run_tool(reply.tool_calls[0]).content == "12:00"


def test_valid_names_are_sent_unchanged():
    """Names the provider accepts are not touched (no renaming work for the common case)."""
    from zagent.providerkit import WireNames
    from zagent.types import LLMRequest, ToolSpec

    request = LLMRequest(model="m", messages=[Message.user("x")], tools=[ToolSpec(name="add")])
    assert WireNames.for_request(request, r"^[A-Za-z0-9_-]{1,64}$") is None


def test_colliding_sanitized_names_stay_unique():
    """Two names that sanitize alike ('a.b', 'a_b') get distinct wire names that map back."""
    from zagent.providerkit import WireNames
    from zagent.types import LLMRequest, ToolSpec

    request = LLMRequest(model="m", messages=[], tools=[ToolSpec(name="a_b"), ToolSpec(name="a.b")])
    names = WireNames.for_request(request, r"^[A-Za-z0-9_-]{1,64}$")
    assert names.to_wire == {"a_b": "a_b", "a.b": "a_b_2"}
    assert names.from_wire["a_b_2"] == "a.b"
