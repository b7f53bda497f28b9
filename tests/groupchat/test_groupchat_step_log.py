"""Group chat checkpoints as a step log: each turn saved as its change, the whole state now and then, read back whole."""

import os
import pathlib
import signal
import subprocess
import sys
import threading

import msgspec
import pytest

from zagent.plugins.groupchat import GroupChat
from zagent.plugins.groupchat.state import ChatState
from zagent.testing import wait_until

from tests.failingstores import FullOnly

from .conftest import Echo, echoes

CHILD = str(pathlib.Path(__file__).with_name("groupchat_child.py"))
ROUNDS = 60


def rows(store, run_id):
    return store.db.read(lambda c: c.execute(
        "SELECT step, patch FROM checkpoints WHERE run_id = ? ORDER BY step", (run_id,)).fetchall())


def cut(store, run_id, step):
    """Drop every checkpoint after ``step``: the file as a process that died right after writing it left it."""
    store.db.write(lambda c: c.execute("DELETE FROM checkpoints WHERE run_id = ? AND step > ?", (run_id, step)))


def chat(kernel, store, agents=None, rounds=ROUNDS, **kw):
    return GroupChat(kernel=kernel, agents=agents or echoes("A", "B", "C"), termination={"max_rounds": rounds},
                     checkpoints=store, **kw)


def said(result):
    """A chat's messages without their timings."""
    return [(m.seq, m.speaker, m.content, m.round) for m in result.messages]


@pytest.fixture
def store(kernel, tmp_path):
    s = kernel.memory("checkpoints", path=str(tmp_path / "chats.db"), keep_last=None)
    yield s
    s.close()


def test_most_checkpoints_of_a_long_chat_are_patches(kernel, store):
    """A 60-round chat writes patches between occasional full saves; its first and last checkpoints are full."""
    chat(kernel, store).run("talk", run_id="long")
    saved = rows(store, "long")
    assert len(saved) == ROUNDS and saved[0][1] == 0 and saved[-1][1] == 0
    assert sum(is_patch for _, is_patch in saved) > 0.8 * len(saved)


def test_every_checkpoint_reads_back_as_the_state_it_saved(kernel, store, saved_states):
    """Each step loaded back equals the chat's state when it was saved, messages posted from outside included;
    the checkpoint of a pause is a full save."""
    group = chat(kernel, store)

    def on_turn(message):
        if message.round == 20:
            group.post("a human says hi")
        if message.round == 30:
            group.pause()
            threading.Timer(0.05, group.resume).start()

    group.on_turn = on_turn
    group.run("talk", run_id="spied")
    saved = rows(store, "spied")
    assert [step for step, _ in saved] == sorted(step for _, step in saved_states), "every save landed"
    paused = [step for step, _ in saved if b'"status":"paused"' in saved_states[("spied", step)]]
    assert len(paused) == 1 and dict(saved)[paused[0]] == 0
    for step, _ in saved:
        rebuilt = msgspec.json.decode(store.load("spied", step), type=ChatState)
        assert rebuilt == msgspec.json.decode(saved_states[("spied", step)], type=ChatState), step


def test_a_chat_cut_after_a_patch_resumes_and_ends_like_an_uninterrupted_one(kernel, store):
    """Resumed from a patch checkpoint halfway, a chat runs no turn that checkpoint holds again and ends with
    the same messages as a chat that never stopped."""
    first = echoes("A", "B", "C")
    clean = chat(kernel, store, first).run("talk", run_id="cut")
    step = next(s for s, is_patch in rows(store, "cut") if is_patch and s >= ROUNDS // 2)
    cut(store, "cut", step)
    again = echoes("A", "B", "C")
    result = chat(kernel, store, again).run(run_id="cut")
    assert sorted(t.round for a in again for t in a.turns) == list(range(step + 1, ROUNDS + 1))
    assert said(result) == said(clean)


def test_killed_mid_chat_resumes_without_rerunning_checkpointed_turns(kernel, tmp_path):
    """SIGKILL while round 25 of 40 is spoken (the latest checkpoint a patch): the chat resumed in another
    process runs rounds 1-24 never again, round 25 again (it was never recorded), the rest once."""
    db, log = str(tmp_path / "chats.db"), tmp_path / "turns.log"
    proc = subprocess.Popen([sys.executable, CHILD, db, str(log), "40", "25"], stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: log.exists() and "25" in log.read_text().split() or proc.poll() is not None,
                   "round 25 to start", polls=60000)
        assert proc.poll() is None, proc.stderr.read()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        proc.stderr.close()
    store = kernel.memory("checkpoints", path=db, keep_last=None)
    assert rows(store, "killed-chat")[-1] == (24, 1)  # 24 turns saved, the latest as a patch

    def say(turn):
        with open(log, "a") as f:
            f.write(f"{turn.round}\n")
        return f"{'AB'[(turn.round - 1) % 2]} in round {turn.round}"

    result = chat(kernel, store, [Echo("A", say=say), Echo("B", say=say)], rounds=40).run(run_id="killed-chat")
    assert log.read_text().split() == [str(r) for r in range(1, 26)] + [str(r) for r in range(25, 41)]
    assert [m.content for m in result.messages[1:]] == [f"{'AB'[(r - 1) % 2]} in round {r}" for r in range(1, 41)]
    store.close()


def test_a_store_without_save_patch_gets_every_checkpoint_whole(kernel):
    """Every checkpoint written to a store that takes no patches is the whole state, and a chat resumes from it."""
    store = FullOnly()
    clean = chat(kernel, store, rounds=20).run("talk", run_id="r")
    states = [msgspec.json.decode(raw, type=ChatState) for raw in store.saved["r"].values()]
    assert [len(s.messages) for s in states] == list(range(2, 22))
    for step in range(11, 21):
        del store.saved["r"][step]
    again = echoes("A", "B", "C")
    result = chat(kernel, store, again, rounds=20).run(run_id="r")
    assert sorted(t.round for a in again for t in a.turns) == list(range(11, 21))
    assert said(result) == said(clean)


def test_a_resumed_chat_numbers_its_checkpoints_after_the_latest_one(kernel, store):
    """A chat resumed from a checkpoint stored under a higher step than its state says (copied by hand) saves
    its next turns after that step, so its patches land and its latest checkpoint is its end."""
    chat(kernel, store, rounds=10).run("talk", run_id="moved")
    cut(store, "moved", 5)
    store.save("moved", 50, store.load("moved", 5), kind="groupchat")
    result = chat(kernel, store, rounds=10).run(run_id="moved")
    assert [step for step, _ in rows(store, "moved")][-5:] == [51, 52, 53, 54, 55]
    assert msgspec.json.decode(store.latest("moved")[1], type=ChatState).round == 10 == result.rounds
