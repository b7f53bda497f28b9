"""The built-in checkpoint store: the conformance suite, pruning by age, and resuming after a killed process."""

import os
import random
import signal
import time

import msgspec
import pytest

from memory_child import LoopState, toy_step
from zagent import Kernel
from zagent.testing.checkpoints import CheckpointStoreTests


class TestSqliteCheckpointConformance(CheckpointStoreTests):
    def make_store(self, tmp_path):
        return Kernel(plugins=["zagent.plugins.memory"], entry_points=False).memory(
            "checkpoints", path=str(tmp_path / "conformance.db"))


@pytest.fixture
def store(kernel, tmp_path):
    s = kernel.memory("checkpoints", path=str(tmp_path / "runs.db"))
    yield s
    s.close()


def test_prune_older_than_removes_stale_runs_whole(store):
    """prune(older_than=s) deletes runs whose latest checkpoint is older than s seconds."""
    store.save("old", 1, b"x")
    store.db.write(lambda c: c.execute("UPDATE checkpoints SET created = created - 3600 WHERE run_id = 'old'"))
    store.save("fresh", 1, b"y")
    assert store.prune(older_than=60) == 1
    assert [r.run_id for r in store.list()] == ["fresh"]


def test_checkpoints_and_memory_can_share_a_file(kernel, tmp_path):
    """One file can hold both long-term memory and checkpoints."""
    path = str(tmp_path / "app.db")
    mem, store = kernel.memory("sqlite", path=path), kernel.memory("checkpoints", path=path)
    store.save("r", 1, b"s")
    mem.add("a/s", {"role": "user", "content": "hi"})
    assert store.latest("r") == (1, b"s") and mem.count() == 1


def run_uninterrupted(steps):
    state = LoopState(step=0, trajectory=[])
    while state.step < steps:
        state = toy_step(state)
    return state


def test_run_killed_mid_way_resumes_from_its_latest_checkpoint(kernel, tmp_path, run_child):
    """A child killed at a random step: latest() holds at least every step it reported saved."""
    path = str(tmp_path / "runs.db")
    rng = random.Random(99)
    for round_no in range(3):
        proc = run_child("checkpoints", path, f"run{round_no}", 100000)
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        time.sleep(rng.uniform(0.05, 0.2))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        reported = [int(x) for x in proc.stdout.read().split()]
        step, raw = kernel.memory("checkpoints", path=path).latest(f"run{round_no}")
        assert step in ({reported[-1], reported[-1] + 1} if reported else {0, 1})
        assert msgspec.json.decode(raw, type=LoopState) == run_uninterrupted(step)


def test_resumed_run_finishes_with_the_same_trajectory(kernel, tmp_path, run_child):
    """Killed, then resumed by a new process from its checkpoint, a run ends as if never interrupted."""
    path = str(tmp_path / "runs.db")
    proc = run_child("checkpoints", path, "job", 100000)
    assert proc.stdout.readline().strip() == "ready"
    assert int(proc.stdout.readline()) >= 1  # at least one step saved
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    step, _ = kernel.memory("checkpoints", path=path).latest("job")
    finish = run_child("checkpoints", path, "job", step + 25)
    _, err = finish.communicate(timeout=60)
    assert finish.returncode == 0, err
    _, raw = kernel.memory("checkpoints", path=path).latest("job")
    assert msgspec.json.decode(raw, type=LoopState) == run_uninterrupted(step + 25)


# -- retention: keep_last, applied on every save --------------------------------------------------


def test_default_retention_keeps_the_last_ten_steps_of_each_run(kernel, tmp_path):
    """By default every save keeps only the newest DEFAULT_KEEP_LAST (10) steps of its own run."""
    from zagent.plugins.memory.checkpoints import DEFAULT_KEEP_LAST

    store = kernel.memory("checkpoints", path=str(tmp_path / "runs.db"))
    for step in range(1, 26):
        store.save("long", step, b"x")
    store.save("short", 1, b"y")
    assert DEFAULT_KEEP_LAST == 10
    assert store.steps("long") == list(range(16, 26)) and store.steps("short") == [1]


def test_keep_last_bounds_a_run_and_its_latest_still_resumes(kernel, tmp_path):
    """With keep_last=3 a run holds its 3 newest steps; latest() gives the last state saved."""
    store = kernel.memory("checkpoints", path=str(tmp_path / "runs.db"), keep_last=3)
    for step in range(1, 9):
        store.save("r", step, LoopState(step=step, trajectory=[str(step)]))
    assert store.steps("r") == [6, 7, 8]
    step, raw = store.latest("r")
    assert step == 8 and msgspec.json.decode(raw, type=LoopState) == LoopState(step=8, trajectory=["8"])


def test_keep_last_none_keeps_every_step(kernel, tmp_path):
    """keep_last=None turns retention off: every saved step stays."""
    store = kernel.memory("checkpoints", path=str(tmp_path / "runs.db"), keep_last=None)
    for step in range(1, 31):
        store.save("r", step, b"x")
    assert store.steps("r") == list(range(1, 31))


@pytest.mark.parametrize("bad", [0, -1, "3", 2.5, True])
def test_bad_keep_last_is_refused_before_the_file_is_made(kernel, tmp_path, bad):
    """keep_last must be None or an int >= 1; anything else is a ConfigError and no file is created."""
    from zagent import ConfigError

    with pytest.raises(ConfigError, match="keep_last"):
        kernel.memory("checkpoints", path=str(tmp_path / "runs.db"), keep_last=bad)
    assert not (tmp_path / "runs.db").exists()


def test_killed_run_keeps_a_bounded_window_ending_at_its_latest(kernel, tmp_path, run_child):
    """A child killed mid-run (default retention) leaves at most 10 consecutive steps, the last one intact."""
    path = str(tmp_path / "runs.db")
    proc = run_child("checkpoints", path, "job", 100000)
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    while int(proc.stdout.readline()) < 30:  # well past the window
        pass
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    store = kernel.memory("checkpoints", path=path)
    steps = store.steps("job")
    step, raw = store.latest("job")
    assert len(steps) == 10 and steps == list(range(step - 9, step + 1))
    assert msgspec.json.decode(raw, type=LoopState) == run_uninterrupted(step)
