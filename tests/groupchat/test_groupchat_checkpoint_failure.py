"""A group chat whose checkpoint write fails stops (fails closed): a ``CheckpointError`` for that write,
nothing written after it, and the chat resumes from its last good checkpoint once the store works."""

import msgspec
import pytest

from zagent import CheckpointError
from zagent.plugins.groupchat import GroupChat
from zagent.plugins.groupchat.state import ChatState
from zagent.plugins.memory.errors import StoreBusy

from tests.failingstores import SHORT_WAIT, Broken, failing, locked

from .conftest import Echo, Events, echoes

ROUNDS = 10
FAIL_AT = 5  # round r's checkpoint is step r


def chat(kernel, store, agents=None):
    return GroupChat(kernel=kernel, agents=agents or echoes("A", "B"), termination={"max_rounds": ROUNDS},
                     checkpoints=store)


def said(result):
    return [(m.seq, m.speaker, m.content, m.round) for m in result.messages]


def spoken(agents):
    return sorted(t.round for a in agents for t in a.turns)


def test_a_failed_checkpoint_write_stops_the_chat_with_that_write_s_error(kernel, tmp_path):
    """A store that keeps failing: the chat raises the ``CheckpointError`` of round 5's checkpoint (naming
    the run, step, store and cause, saying how to resume), speaks no later round and tries no other write."""
    store = failing(str(tmp_path / "chats.db"), FAIL_AT, failures=99)
    agents = echoes("A", "B")
    with pytest.raises(CheckpointError) as info:
        chat(kernel, store, agents).run("talk", run_id="c1")
    error = info.value
    assert (error.run_id, error.step, error.store, error.last_step) == ("c1", FAIL_AT, store, FAIL_AT - 1)
    assert isinstance(error.__cause__, Broken)
    assert "GroupChat(..., checkpoints=store).resume('c1')" in str(error) and repr(store) in str(error)
    assert spoken(agents) == list(range(1, FAIL_AT + 1))
    assert store.attempts == list(range(1, FAIL_AT + 1))
    store.close()


def test_the_store_keeps_the_last_good_checkpoint(kernel, tmp_path):
    """After a transient failure the store's latest checkpoint is still round 4's, running: the chat writes
    no ``failed`` checkpoint after the write that failed."""
    store = failing(str(tmp_path / "chats.db"), FAIL_AT)
    with pytest.raises(CheckpointError):
        chat(kernel, store).run("talk", run_id="c2")
    step, raw = store.latest("c2")
    state = msgspec.json.decode(raw, type=ChatState)
    assert (step, state.round, state.status) == (FAIL_AT - 1, FAIL_AT - 1, "running")
    store.close()


def test_the_chat_ends_with_a_failed_groupchat_end_event(kernel, tmp_path):
    """The stopped chat still says it ended: ``groupchat_end`` with status ``failed`` and the error."""
    events = Events()
    kernel.add_plugin(events, name="test-events")
    store = failing(str(tmp_path / "chats.db"), FAIL_AT)
    with pytest.raises(CheckpointError):
        chat(kernel, store).run("talk", run_id="c3")
    (end,) = events.of("groupchat_end")
    assert end["status"] == "failed" and "CheckpointError" in end["error"]
    store.close()


def test_the_chat_resumes_from_the_last_good_checkpoint_once_the_store_works(kernel, tmp_path):
    """Resumed after a transient failure, the chat speaks round 5 again and the rounds after it, and ends
    with the messages of a chat that never failed."""
    store = failing(str(tmp_path / "chats.db"), FAIL_AT)
    with pytest.raises(CheckpointError):
        chat(kernel, store).run("talk", run_id="c4")
    again = echoes("A", "B")
    result = chat(kernel, store, again).resume("c4")  # the form the CheckpointError names
    assert spoken(again) == list(range(FAIL_AT, ROUNDS + 1))
    assert said(result) == said(chat(kernel, None).run("talk"))
    store.close()


def test_a_file_locked_by_another_writer_stops_the_chat_and_it_resumes_once_released(kernel, tmp_path):
    """Another connection takes the SQLite file's write lock during round 5: the chat stops with a
    ``CheckpointError`` caused by ``StoreBusy``; released, the chat resumes at round 5 and finishes."""
    path = str(tmp_path / "locked.db")
    store = kernel.memory("checkpoints", path=path, keep_last=None, **SHORT_WAIT)
    holder = []

    def say(turn):
        if turn.round == FAIL_AT:
            holder.append(locked(path))
        return f"said in round {turn.round}"

    with pytest.raises(CheckpointError) as info:
        chat(kernel, store, [Echo("A", say=say), Echo("B", say=say)]).run("talk", run_id="lk")
    assert isinstance(info.value.__cause__, StoreBusy) and info.value.step == FAIL_AT
    holder[0].close()
    again = echoes("A", "B")
    result = chat(kernel, store, again).run(run_id="lk")
    assert spoken(again) == list(range(FAIL_AT, ROUNDS + 1)) and result.rounds == ROUNDS
