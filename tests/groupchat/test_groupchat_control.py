"""Pause/resume/abort from other threads, checkpoints and resuming by run id, events and rails."""

import asyncio
import threading

import pytest

from zagent import ConfigError, Kernel, RunAborted
from zagent.plugins.groupchat import GroupChat

from zagent.testing import wait_until

from .conftest import PLUGINS, Echo, Events, echoes


_wait = wait_until


class Gated:
    """An async speaker whose turn n finishes only once the test allows n turns."""

    def __init__(self, name, gate):
        self.name, self.gate, self.description = name, gate, ""

    async def aspeak(self, turn):
        self.gate.started.append(turn.round)
        while self.gate.allowed < turn.round:
            await asyncio.sleep(0.001)
        self.gate.finished.append(turn.round)
        return f"{self.name} {turn.round}"


class Gate:
    def __init__(self):
        self.allowed, self.started, self.finished = 0, [], []


def test_pause_takes_effect_at_the_next_turn_boundary_and_resume_continues(kernel):
    """pause() during a turn lets that turn finish and be recorded, then waits; resume() goes on."""
    gate = Gate()
    events = Events()
    kernel.add_plugin(events)
    chat = GroupChat(kernel=kernel, agents=[Gated("A", gate), Gated("B", gate)], termination={"max_rounds": 5})

    def controller():
        gate.allowed = 2
        _wait(lambda: gate.started == [1, 2, 3], "turn 3 to start")
        chat.pause()
        gate.allowed = 3
        _wait(lambda: chat.status == "paused", "the pause")
        assert len(chat.history) == 4, "turn 3 was recorded before pausing"
        assert gate.started == [1, 2, 3], "no turn starts while paused"
        gate.allowed = 5
        chat.resume()

    thread = threading.Thread(target=controller)
    thread.start()
    result = chat.run("task")
    thread.join()
    assert result.speakers == ["A", "B", "A", "B", "A"]
    assert gate.finished == [1, 2, 3, 4, 5], "no turn lost or repeated"
    assert events.types().count("paused") == 1 and events.types().count("resumed") == 1


def test_abort_cancels_the_turn_in_flight_and_raises_with_the_history(kernel):
    """abort() ends the chat: the turn in flight is cancelled and not recorded; RunAborted carries the history."""
    gate = Gate()
    gate.allowed = 2
    chat = GroupChat(kernel=kernel, agents=[Gated("A", gate), Gated("B", gate)], termination={"max_rounds": 5})

    def controller():
        _wait(lambda: gate.started == [1, 2, 3], "turn 3 to start")
        chat.abort()

    thread = threading.Thread(target=controller)
    thread.start()
    with pytest.raises(RunAborted) as info:
        chat.run("task")
    thread.join()
    assert [m.speaker for m in info.value.trajectory] == ["user", "A", "B"]
    assert gate.finished == [1, 2] and chat.status == "aborted"


def test_abort_while_paused_ends_the_chat(kernel):
    """A paused chat can be aborted; it does not resume."""
    chat = GroupChat(kernel=kernel, agents=echoes("A", "B"), termination={"max_rounds": 5})
    chat.pause()

    def controller():
        _wait(lambda: chat.status == "paused", "the pause")
        chat.abort()

    thread = threading.Thread(target=controller)
    thread.start()
    with pytest.raises(RunAborted):
        chat.run("task")
    thread.join()
    assert len(chat.history) == 1


def test_a_chat_resumes_from_its_last_checkpoint_by_run_id(tmp_path):
    """A chat that failed in round 3 continues from its checkpoint in a new kernel, without repeating turns."""
    path = str(tmp_path / "chats.db")
    calls = []

    def say(turn):
        calls.append(turn.round)
        if turn.round == 3 and calls.count(3) == 1:
            raise RuntimeError("the process died here")
        return f"turn {turn.round}"

    with Kernel(plugins=PLUGINS, entry_points=False, strict=True) as k1:
        chat = GroupChat(kernel=k1, agents=[Echo("A", say=say), Echo("B", say=say)], termination={"max_rounds": 4},
                         checkpoints=path)
        with pytest.raises(RuntimeError):
            chat.run("task", run_id="chat-1")
    with Kernel(plugins=PLUGINS, entry_points=False, strict=True) as k2:
        chat = GroupChat(kernel=k2, agents=[Echo("A", say=say), Echo("B", say=say)], termination={"max_rounds": 4},
                         checkpoints=path)
        result = chat.run(run_id="chat-1")
    assert result.run_id == "chat-1" and result.speakers == ["A", "B", "A", "B"]
    assert calls == [1, 2, 3, 3, 4], "turns 1 and 2 were not run again"
    assert [m.content for m in result.messages] == ["task", "turn 1", "turn 2", "turn 3", "turn 4"]


def test_a_paused_chat_resumes_from_its_checkpoint_in_a_new_groupchat(kernel, tmp_path):
    """The checkpoint written at a pause lets another GroupChat continue the run."""
    store = kernel.memory("checkpoints", path=str(tmp_path / "c.db"))
    first = GroupChat(kernel=kernel, agents=echoes("A", "B"), termination={"max_rounds": 4}, checkpoints=store)
    first.on_turn = lambda message: first.pause() if message.round == 2 else None

    def controller():
        _wait(lambda: first.status == "paused", "the pause")
        first.abort()  # the first process goes away while paused

    thread = threading.Thread(target=controller)
    thread.start()
    with pytest.raises(RunAborted):
        first.run("task", run_id="chat-2")
    thread.join()
    raw = store.load("chat-2", store.steps("chat-2")[-2])  # the pause checkpoint, before the abort
    store.save("chat-2", 99, raw, kind="groupchat")  # pretend the process died while paused
    second = GroupChat(kernel=kernel, agents=echoes("A", "B"), termination={"max_rounds": 4}, checkpoints=store)
    result = second.run(run_id="chat-2")
    assert result.speakers == ["A", "B", "A", "B"] and result.rounds == 4


def test_a_completed_chat_does_not_resume(kernel, tmp_path):
    """Resuming a completed run is refused."""
    store = kernel.memory("checkpoints", path=str(tmp_path / "c.db"))
    chat = GroupChat(kernel=kernel, agents=echoes("A"), termination={"max_rounds": 1}, checkpoints=store)
    chat.run("task", run_id="done-1")
    with pytest.raises(ConfigError, match="completed"):
        chat.run(run_id="done-1")


def test_every_turn_is_checkpointed(kernel, tmp_path):
    """One checkpoint per turn (plus the final one), kind 'groupchat'."""
    store = kernel.memory("checkpoints", path=str(tmp_path / "c.db"))
    GroupChat(kernel=kernel, agents=echoes("A", "B"), termination={"max_rounds": 3},
              checkpoints=store).run("task", run_id="chat-3")
    assert store.steps("chat-3") == [1, 2, 3]
    assert [r.kind for r in store.list()] == ["groupchat"]


def test_each_turn_emits_turn_start_and_turn_end_with_the_chat_s_run_id(kernel):
    """turn_start/turn_end surround every turn, tagged with the chat's run id."""
    events = Events()
    kernel.add_plugin(events)
    result = GroupChat(kernel=kernel, agents=echoes("A", "B"), termination={"max_rounds": 2}).run("task")
    turns = [(t, d["round"], d["speaker"]) for t, d, _ in events.seen if t in ("turn_start", "turn_end")]
    assert turns == [("turn_start", 1, "A"), ("turn_end", 1, "A"), ("turn_start", 2, "B"), ("turn_end", 2, "B")]
    assert {r for t, _, r in events.seen if t.startswith("turn_")} == {result.run_id}
    assert events.types()[0] == "groupchat_start" and events.types()[-1] == "groupchat_end"


def test_a_speaker_s_tool_calls_go_through_the_rails(kernel):
    """A declared agent's tool call runs through the kernel's rails, with the chat's run id and the speaker."""
    seen = []

    class Rail:
        def zagent_before_tool_call(self, call, ctx):
            seen.append((call.name, ctx.run_id, ctx.agent))
            from zagent import Deny

            return Deny("not in this chat")

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    kernel.add_tool(add)
    kernel.add_plugin(Rail())
    llm = kernel.llm("scripted:calc", replies=[{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]},
                                               lambda request: request.messages[-1].content])
    calc = {"name": "Calc", "prompt": "Compute for: {transcript}", "inputs": [{"name": "transcript"}],
            "outputs": [{"name": "reply"}], "parse_mode": "str", "tools": ["add"]}
    chat = GroupChat(kernel=kernel, agents=[calc], termination={"max_rounds": 1}, llm=llm)
    result = chat.run("1+2")
    assert seen == [("add", result.run_id, "Calc")]
    assert "not in this chat" in result.content


def test_a_turn_whose_speaker_raises_still_ends_its_span_before_the_chat_s(kernel):
    """The failing turn's span gets its turn_end (outcome error) before groupchat_end, both paired by span id."""
    seen = []

    class Spans:
        def zagent_event(self, event):
            seen.append(event)

    def fail(turn):
        raise RuntimeError("speaker broke")

    kernel.add_plugin(Spans())
    chat = GroupChat(kernel=kernel, agents=[Echo("A", say=fail)], termination={"max_rounds": 2})
    with pytest.raises(RuntimeError):
        chat.run("task")
    types = [e.type for e in seen if e.type in ("groupchat_start", "turn_start", "turn_end", "groupchat_end")]
    assert types == ["groupchat_start", "turn_start", "turn_end", "groupchat_end"]
    start, end = (next(e for e in seen if e.type == t) for t in ("turn_start", "turn_end"))
    assert end.span_id == start.span_id and end.data["outcome"] == "error"
    assert next(e for e in seen if e.type == "groupchat_end").data["outcome"] == "error"
