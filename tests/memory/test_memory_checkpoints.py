"""The checkpoint store: save/latest/load/list/delete/prune, and resuming after a killed process."""

import asyncio
import os
import random
import signal
import time

import msgspec
import pytest

from memory_child import LoopState, toy_step
from zagent import ConfigError


@pytest.fixture
def store(kernel, tmp_path):
    s = kernel.memory("checkpoints", path=str(tmp_path / "runs.db"))
    yield s
    s.close()


def test_latest_returns_the_highest_step(store):
    """latest(run_id) is (step, state bytes) of the highest step saved."""
    for step in (1, 2, 3):
        store.save("r1", step, f"state {step}".encode())
    assert store.latest("r1") == (3, b"state 3")


def test_latest_of_an_unknown_run_is_none(store):
    """A run never saved has no latest checkpoint."""
    assert store.latest("nope") is None


def test_objects_are_saved_as_msgspec_json(store):
    """A Struct or other msgspec-encodable state is stored as msgspec JSON and decodes back."""
    state = LoopState(step=2, trajectory=["a", "b"])
    store.save("r1", 2, state)
    step, raw = store.latest("r1")
    assert msgspec.json.decode(raw, type=LoopState) == state


def test_bytes_are_stored_unchanged(store):
    """A bytes state (e.g. msgpack) is stored and returned byte for byte."""
    raw = msgspec.msgpack.encode({"x": [1, 2, 3]})
    store.save("r1", 0, raw)
    assert store.load("r1", 0) == raw


def test_saving_a_step_again_replaces_it(store):
    """Saving the same (run, step) twice keeps the last one, so a retried step is harmless."""
    store.save("r1", 1, b"first try")
    store.save("r1", 1, b"second try")
    assert store.steps("r1") == [1]
    assert store.load("r1", 1) == b"second try"


def test_load_of_a_missing_step_is_none(store):
    """load() of a step never saved returns None."""
    store.save("r1", 1, b"x")
    assert store.load("r1", 2) is None


def test_list_reports_runs_by_kind(store):
    """list() gives one RunInfo per run with its last step, count and latest metadata; kind filters."""
    store.save("r1", 1, b"a", kind="react", metadata={"agent": "A"})
    store.save("r1", 2, b"b", kind="react", metadata={"agent": "A", "note": "latest"})
    store.save("w1", 5, b"c", kind="workflow")
    runs = {r.run_id: r for r in store.list()}
    assert (runs["r1"].last_step, runs["r1"].steps, runs["r1"].metadata) == (2, 2, {"agent": "A", "note": "latest"})
    assert [r.run_id for r in store.list(kind="workflow")] == ["w1"]


def test_delete_removes_one_run(store):
    """delete(run_id) removes all of that run's checkpoints and returns the count, others stay."""
    store.save("r1", 1, b"a")
    store.save("r1", 2, b"b")
    store.save("r2", 1, b"c")
    assert store.delete("r1") == 2
    assert store.latest("r1") is None
    assert store.latest("r2") == (1, b"c")


def test_prune_keep_last_keeps_the_newest_steps_of_each_run(store):
    """prune(keep_last=n) keeps each run's newest n steps."""
    for step in range(1, 6):
        store.save("r1", step, b"x")
    store.save("r2", 1, b"y")
    assert store.prune(keep_last=2) == 3
    assert store.steps("r1") == [4, 5]
    assert store.steps("r2") == [1]


def test_prune_older_than_removes_stale_runs_whole(store):
    """prune(older_than=s) deletes runs whose latest checkpoint is older than s seconds."""
    store.save("old", 1, b"x")
    store.db.write(lambda c: c.execute("UPDATE checkpoints SET created = created - 3600 WHERE run_id = 'old'"))
    store.save("fresh", 1, b"y")
    assert store.prune(older_than=60) == 1
    assert [r.run_id for r in store.list()] == ["fresh"]


def test_prune_without_a_policy_is_config_error(store):
    """prune() needs keep_last and/or older_than, and keep_last must keep at least the latest."""
    with pytest.raises(ConfigError):
        store.prune()
    with pytest.raises(ConfigError):
        store.prune(keep_last=0)


def test_bad_arguments_are_config_errors(store):
    """Empty run ids, negative steps and unencodable states are refused with ConfigError."""
    with pytest.raises(ConfigError):
        store.save("", 1, b"x")
    with pytest.raises(ConfigError):
        store.save("r", -1, b"x")
    with pytest.raises(ConfigError):
        store.save("r", 1, object())
    assert store.list() == []


def test_async_twins_match_sync(store):
    """asave/alatest/aload/alist/adelete/aprune behave like the sync methods."""

    async def scenario():
        await store.asave("r", 1, b"one", kind="toy")
        await store.asave("r", 2, b"two", kind="toy")
        latest = await store.alatest("r")
        one = await store.aload("r", 1)
        runs = await store.alist("toy")
        pruned = await store.aprune(keep_last=1)
        deleted = await store.adelete("r")
        return latest, one, [r.run_id for r in runs], pruned, deleted

    assert asyncio.run(scenario()) == ((2, b"two"), b"one", ["r"], 1, 1)


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
