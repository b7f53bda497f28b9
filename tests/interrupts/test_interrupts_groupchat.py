"""zagent.interrupt in group-chat turns: the chat pauses at the turn, resumes at it (same speaker, same round)
with the answer, in a new kernel from the SQLite checkpoint; a chat inside a workflow node pauses the node."""

import pytest

import zagent
from zagent.errors import ConfigError
from zagent.plugins.groupchat import GroupChat
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

from .conftest import make_kernel, node


class Speaker:
    """A native speaker; ``ask`` makes it ask a person each turn and say the answer."""

    def __init__(self, name, ask=None):
        self.name, self.description, self.ask, self.turns = name, name, ask, []

    def speak(self, turn):
        self.turns.append(turn.round)
        if self.ask:
            return f"{self.name} heard {zagent.interrupt(self.ask)}"
        return f"{self.name} in round {turn.round}"


def chat(kernel, db, ask="What next?", **kw):
    return GroupChat(kernel=kernel, agents=[Speaker("a"), Speaker("b", ask=ask)], max_rounds=3, checkpoints=db, **kw)


def test_a_turn_that_asks_pauses_the_chat_with_its_question(kernel, db):
    """The chat ends paused at b's turn: its question (speaker, round) is on the result, the turn unrecorded."""
    result = chat(kernel, db).run("go")
    assert result.status == "paused" and result.paused and result.stopped_by == "interrupt"
    [asked] = result.interrupts
    assert (asked.speaker, asked.round, asked.question, asked.index) == ("b", 2, "What next?", 0)
    assert result.speakers == ["a"]


def test_a_paused_chat_resumes_in_a_new_kernel_at_the_same_turn(db):
    """A new kernel and GroupChat resume the checkpointed chat with the answer: b takes round 2 again and says
    the answer; round 1 is not run again."""
    k = make_kernel()
    run_id = chat(k, db).run("go").run_id
    k.close()
    k = make_kernel()
    try:
        again = chat(k, db)
        result = again.resume(run_id, answer="stop")
        assert result.status == "completed" and result.speakers == ["a", "b", "a"]
        assert [m.content for m in result.messages][2] == "b heard stop"
        assert again.agent("a").turns == [3] and again.agent("b").turns == [2]
    finally:
        k.close()


def test_aresume_of_a_chat_that_is_not_paused_is_refused(kernel, db):
    """aresume of a completed chat, or of an unknown run id, is a ConfigError saying which."""
    done = GroupChat(kernel=kernel, agents=[Speaker("a")], max_rounds=1, checkpoints=db).run("go")
    with pytest.raises(ConfigError, match="is completed; only unfinished runs resume"):
        chat(kernel, db).resume(done.run_id, answer="x")
    with pytest.raises(ConfigError, match="no group chat run 'nope'"):
        chat(kernel, db).resume("nope", answer="x")


def test_aresume_of_a_chat_paused_without_an_interrupt_is_refused(kernel, db):
    """A chat that is unfinished but not waiting on a question has nothing to answer."""
    def on_turn(message):
        raise RuntimeError("stop after the first turn")

    failing = GroupChat(kernel=kernel, agents=[Speaker("a"), Speaker("b")], max_rounds=3, checkpoints=db,
                        on_turn=on_turn)
    with pytest.raises(RuntimeError):
        failing.run("go", run_id="c1")
    with pytest.raises(ConfigError, match="not paused at an interrupt"):
        chat(kernel, db).resume("c1", answer="x")


def test_a_chat_without_a_store_cannot_be_answered(kernel):
    """aresume on a chat built without checkpoints says to give it the store."""
    with pytest.raises(ConfigError, match="has no checkpoints store"):
        GroupChat(kernel=kernel, agents=[Speaker("a")]).resume("r", answer="x")


def ask_human(question: str) -> str:
    """Ask the human a question and return the answer."""
    return zagent.interrupt(question)


def test_a_react_speakers_tool_asks_and_gets_the_answer(kernel, db):
    """A ReAct speaker's tool calling zagent.interrupt pauses the chat; resumed, the tool returns the answer to
    the model and the speaker's reply is recorded."""
    kernel.add_tool(ask_human)
    agent = kernel.agent({"type": "react", "name": "helper", "tools": ["ask_human"]})
    ask = {"tool_calls": [{"name": "ask_human", "arguments": {"question": "Budget?"}}]}
    agent.llm = kernel.llm("scripted:helper", replies=[ask, ask, "A trip for 100 euros."])
    room = GroupChat(kernel=kernel, agents=[agent], max_rounds=1, checkpoints=db)
    paused = room.run("plan a trip")
    assert [a.question for a in paused.interrupts] == ["Budget?"]
    result = room.resume(paused.run_id, answer="100 euros")
    assert result.content == "A trip for 100 euros."
    assert any("100 euros" in (m.content or "") for m in agent.llm.requests[-1].messages)


def test_a_chat_inside_a_workflow_node_pauses_the_node(kernel):
    """A group chat used as a workflow node leaves its turns' interrupts to the node: the workflow pauses, and
    on resume the chat runs again and the turn gets the answer."""
    room = GroupChat(kernel=kernel, agents=[Speaker("b", ask="Color?")], max_rounds=1, name="room")
    graph = WorkFlowGraph.from_dict({"goal": "chat in a node", "nodes": [node("talk", ["goal"], ["content"], [room])]})
    ex = WorkFlowExecutor(kernel=kernel)
    paused = ex.run(graph, {"goal": "pick"})
    assert [(a.node, a.question) for a in paused.interrupts] == [("talk", "Color?")]
    assert ex.resume(paused.run_id, graph=graph, answer="red").outputs["content"] == "b heard red"


def test_resuming_with_a_chat_that_lacks_the_waiting_speaker_is_refused(kernel, db):
    """The speaker a paused chat waits on must be one of the resuming chat's: else a ConfigError naming it."""
    run_id = chat(kernel, db).run("go").run_id
    other = GroupChat(kernel=kernel, agents=[Speaker("a"), Speaker("c")], max_rounds=3, checkpoints=db)
    with pytest.raises(ConfigError, match="no speaker 'b'"):
        other.resume(run_id, answer="x")
