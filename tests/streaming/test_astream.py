"""``astream()`` for every agent kind: text deltas, step events, partial JSON, the result last.

The survey (003), 4.3: "response_gen是一个generator每次yield一个ChatResponseChunk" (the response generator
yields one chunk at a time) and "for chunk in response.response_gen: if chunk.delta: print(chunk.delta ...)
elif chunk.tool_calls: print(→ 调用工具...)" (print each text delta as it comes, and each tool call), so that
"用户能看到'正在思考...→ 调用财报API→ 处理数据→ 生成结论'的完整链条" (the user sees the whole chain).
"""

import asyncio

import pytest

from zagent import Kernel
from zagent.plugins.groupchat import GroupChat
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

from tests.servers import openai_server
from tests.servers.loopback import Reply

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.manager", "zagent.plugins.workflow", "zagent.plugins.groupchat", "zagent.plugins.openai"]


@pytest.fixture
def k():
    kernel = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    yield kernel
    kernel.close()


def collect(stream):
    async def go():
        return [item async for item in stream]
    return asyncio.run(go())


def declared(k, llm, mode="str", outputs=("answer",)):
    agent = k.agent({"name": "Writer", "prompt": "Write about {topic}", "inputs": [{"name": "topic"}],
                     "outputs": [{"name": o} for o in outputs], "parse_mode": mode})
    agent.llm = llm
    return agent


def test_a_declared_agent_streams_text_deltas_then_its_result(k):
    """003: "每次yield一个ChatResponseChunk ... chunk.delta" (one delta at a time): a declared agent's
    ``astream`` yields the reply in pieces as the model sends them, and the ``AgentResult`` last."""
    with openai_server.OpenAIServer() as server:
        llm = k.llm("openai:gpt-test", base_url=server.url, api_key="sk-test")
        items = collect(declared(k, llm).astream(topic="tides"))
        assert server.requests[-1].json["stream"] is True
    texts = [i.text for i in items if i.type == "text"]
    assert len(texts) > 2 and "".join(texts).startswith("echo: Write about tides")
    assert items[-1].type == "result" and items[-1].result.answer == "".join(texts).strip()


def test_step_events_come_through_the_event_system(k):
    """003: the user sees the chain ("→ 调用工具 ..."): the stream carries the run's own zagent_event
    events (run_start, llm_start, llm_end, run_end), in order around the text."""
    items = collect(declared(k, k.llm("scripted:s1", replies=["two words"])).astream(topic="x"))
    kinds = [i.event.type if i.type == "event" else i.type for i in items]
    assert kinds[0] == "run_start" and kinds.index("llm_start") < kinds.index("text") < kinds.index("llm_end")
    assert kinds[-2:] == ["run_end", "result"]


def test_json_mode_streams_the_partial_object(k):
    """003: deltas as they come; for ``json`` mode the stream also gives the object written so far, growing
    field by field, before the reply is complete."""
    reply = '{"title": "Tides of the north", "answer": "The moon pulls the sea"}'
    with openai_server.OpenAIServer() as server:
        server.then(openai_server.stream_reply(reply))
        llm = k.llm("openai:gpt-test", base_url=server.url, api_key="sk-test")
        items = collect(declared(k, llm, mode="json", outputs=("title", "answer")).astream(topic="tides"))
    partials = [i.partial for i in items if i.type == "partial"]
    assert {"title": "Tides of the"} in partials or any(p.get("title", "").startswith("Tides") and "answer" not in p
                                                          for p in partials)
    assert partials[-1] == {"title": "Tides of the north", "answer": "The moon pulls the sea"}
    assert items[-1].result.answer == "The moon pulls the sea"


def test_a_react_agent_streams_tool_calls_and_text(k):
    """003: "elif chunk.tool_calls: print(→ 调用工具...)" (each tool call shows): a ReAct agent's stream has the
    tool's start and end events between the model's text."""
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    k.add_tool(add)
    agent = k.agent({"type": "react", "name": "calc", "tools": ["add"]})
    agent.llm = k.llm("scripted:s2", replies=[{"content": None, "tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
                                             "The sum is 5."])
    items = collect(agent.astream("What is 2+3?"))
    kinds = [i.event.type if i.type == "event" else i.type for i in items]
    assert kinds.index("tool_start") < kinds.index("tool_end") < kinds.index("text")
    assert "".join(i.text for i in items if i.type == "text") == "The sum is 5."
    assert items[-1].result.content == "The sum is 5."


def test_a_workflow_streams_each_nodes_text_and_events(k):
    """003: the whole chain is visible: a workflow's ``astream`` gives every node's start and end and the
    text of the agents working in them, nested calls included."""
    graph = WorkFlowGraph.from_dict({
        "name": "two", "goal": "g", "inputs": [{"name": "goal"}],
        "nodes": [{"name": "draft", "inputs": [{"name": "goal"}], "outputs": [{"name": "text"}],
                   "agents": [{"name": "D", "prompt": "{goal}", "inputs": [{"name": "goal"}],
                               "outputs": [{"name": "text"}], "parse_mode": "str"}]},
                  {"name": "polish", "inputs": [{"name": "text"}], "outputs": [{"name": "final"}],
                   "agents": [{"name": "P", "prompt": "{text}", "inputs": [{"name": "text"}],
                               "outputs": [{"name": "final"}], "parse_mode": "str"}]}],
        "edges": [{"source": "draft", "target": "polish"}]})
    llm = k.llm("scripted:s3", replies=["rough draft", "polished text"])
    items = collect(WorkFlowExecutor(kernel=k, llm=llm).astream(graph, {"goal": "g"}))
    events = [i.event for i in items if i.type == "event"]
    assert [e.data.get("node") for e in events if e.type == "node_end"] == ["draft", "polish"]
    assert "".join(i.text for i in items if i.type == "text") == "rough draftpolished text"
    assert items[-1].result.outputs["final"] == "polished text"


def test_a_group_chat_streams_each_turn(k):
    """003: the chain of a conversation: a group chat's ``astream`` gives each turn's text and events."""
    chat = GroupChat.from_dict({"name": "duo", "agents": [
        {"name": "A", "prompt": "{task} {transcript}", "inputs": [{"name": "task"}, {"name": "transcript"}],
         "outputs": [{"name": "reply"}], "parse_mode": "str"},
        {"name": "B", "prompt": "{task} {transcript}", "inputs": [{"name": "task"}, {"name": "transcript"}],
         "outputs": [{"name": "reply"}], "parse_mode": "str"}],
        "termination": {"max_rounds": 2}}, k, llm=k.llm("scripted:s4", replies=["hello there", "general kenobi"]))
    items = collect(chat.astream("greet"))
    assert "".join(i.text for i in items if i.type == "text") == "hello theregeneral kenobi"
    assert any(i.type == "event" and i.event.type.startswith("turn") for i in items)
    assert items[-1].type == "result"


class Recorder:
    def __init__(self):
        self.events = []

    def zagent_event(self, event):
        self.events.append(event)


def test_stopping_the_stream_cancels_the_run(k):
    """003: a generator the caller drives: closing it early cancels the run (its model call hangs on the
    server), which ends as ``cancelled``."""
    recorder = Recorder()
    k.add_plugin(recorder)
    with openai_server.OpenAIServer() as server:
        server.then(Reply(hang=True))
        agent = declared(k, k.llm("openai:gpt-test", base_url=server.url, api_key="sk-test", max_retries=0))

        async def go():
            stream = agent.astream(topic="x")
            async for item in stream:
                if item.type == "event" and item.event.type == "llm_start":
                    break
            await stream.aclose()

        asyncio.run(go())
    assert [e.data.get("status") for e in recorder.events if e.type == "run_end"] == ["cancelled"]


def test_the_event_observer_leaves_with_the_last_stream(k):
    """003: streaming is for who asks: after the stream the kernel has no event observer left, so later
    runs cost what they cost before."""
    collect(declared(k, k.llm("scripted:s5", replies=["done"])).astream(topic="x"))
    assert not k.hooks.active("zagent_event")


def test_an_error_of_the_run_is_raised_from_the_stream(k):
    """003: the stream is the run: a failing run raises its error from the iterator, not a silent end."""
    agent = declared(k, k.llm("scripted:s6", replies=[RuntimeError("model exploded")]))
    with pytest.raises(Exception, match="model exploded"):
        collect(agent.astream(topic="x"))


def test_the_sync_twin_streams_in_a_plain_script(k):
    """003: "for chunk in response.response_gen" (a plain for loop over the chunks): ``stream()`` gives the
    same items as ``astream()`` without an event loop of the caller's."""
    items = list(declared(k, k.llm("scripted:s7", replies=["plain loop"])).stream(topic="x"))
    assert "".join(i.text for i in items if i.type == "text") == "plain loop" and items[-1].type == "result"
