"""A ReAct run whose checkpoint write fails stops (fails closed): a ``CheckpointError``, the batch's other
calls cancelled, nothing written after it, and the run restores from its last good checkpoint."""

import asyncio

import msgspec
import pytest

from zagent import CheckpointError
from zagent.plugins.memory.errors import StoreBusy
from zagent.plugins.react import ReActLoop
from zagent.plugins.react.state import ReActState

from tests.failingstores import SHORT_WAIT, Broken, failing, locked

from .conftest import call

N = 6
FAIL_AT = 5  # step 3's decision (a step's decision and its call's result are one checkpoint each)


def plan(n=N):
    return [call("add", a=i, b=1) for i in range(n)] + ["done"]


def counting_add(kernel, calls, on_call=None):
    def add(a: int, b: int) -> int:
        """Add two integers."""
        calls.append(a)
        if on_call is not None:
            on_call(len(calls))
        return a + b

    kernel.add_tool(add, inline=True, override=True)


def loop_on(kernel, store, replies, name="m", **kw):
    llm = kernel.llm(f"scripted:{name}", replies=replies)
    return ReActLoop(kernel=kernel, llm=llm, tools=["add"], checkpoints=store, max_iterations=N + 5, **kw)


def test_a_failed_checkpoint_write_stops_the_run_with_a_checkpoint_error(kernel, tmp_path):
    """A store that keeps failing: the run raises ``CheckpointError`` naming the run, step, store and cause and
    saying how to restore; no call runs after it and no other write is tried."""
    store = failing(str(tmp_path / "runs.db"), FAIL_AT, failures=99)
    calls = []
    counting_add(kernel, calls)
    with pytest.raises(CheckpointError) as info:
        loop_on(kernel, store, plan()).run("count")
    error = info.value
    assert (error.step, error.store, error.last_step) == (FAIL_AT, store, FAIL_AT - 1)
    assert isinstance(error.__cause__, Broken)
    assert f"ReActLoop(kernel, ..., checkpoints=store, agent_config=...).resume({error.run_id!r})" in str(error)
    assert calls == [0, 1] and store.attempts == list(range(1, FAIL_AT + 1))
    store.close()


def test_the_error_s_resume_hint_resumes_the_run(kernel, tmp_path):
    """The form the ``CheckpointError`` names, a new loop on the store and ``resume(run_id)``, finishes the run
    from the last good checkpoint without running a call twice."""
    store = failing(str(tmp_path / "runs.db"), FAIL_AT)
    calls = []
    counting_add(kernel, calls)
    with pytest.raises(CheckpointError) as info:
        loop_on(kernel, store, plan()).run("count")
    result = loop_on(kernel, store, plan()[2:], name="again", agent_config={}).resume(info.value.run_id)
    assert result.content == "done" and calls == list(range(N))
    store.close()


def test_the_run_restores_from_the_last_good_checkpoint_once_the_store_works(kernel, tmp_path):
    """After a transient failure the store still holds checkpoint 4 (running); restored from it, the run asks
    step 3 again, runs no call twice and ends like a run that never failed."""
    store = failing(str(tmp_path / "runs.db"), FAIL_AT)
    calls = []
    counting_add(kernel, calls)
    with pytest.raises(CheckpointError) as info:
        loop_on(kernel, store, plan()).run("count")
    run_id = info.value.run_id
    step, raw = store.latest(run_id)
    assert step == FAIL_AT - 1 and msgspec.json.decode(raw, type=ReActState).status == "running"
    llm = kernel.llm("scripted:again", replies=plan()[2:])
    result = ReActLoop.restore(kernel, run_id, checkpoints=store, llm=llm, tools=["add"], agent_config={}).run()
    assert result.content == "done" and calls == list(range(N))
    clean = loop_on(kernel, None, plan(), name="clean").run("count")
    assert [m.content for m in result.state.messages] == [m.content for m in clean.state.messages]
    store.close()


def test_the_other_calls_of_a_batch_are_cancelled_when_a_checkpoint_fails(kernel, tmp_path):
    """Three calls of one reply run at once; the first's result checkpoint fails while the other two run:
    those two are cancelled and have ended when the run raises, and nothing is written after the failure."""
    started, failed, cancelled = [], [], []

    async def wait(i: int) -> int:
        """Returns at once for 0; the others would run for a minute: only being cancelled ends them in time
        (they never return on their own while the run is failing, whatever order the loop runs them in)."""
        if i:
            started.append(i)
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.append(i)
                raise
        return i

    async def others_started():
        while len(started) < 2:
            await asyncio.sleep(0)
        failed.append(True)  # the write raises right after this

    kernel.add_tool(wait, timeout=None)
    store = failing(str(tmp_path / "runs.db"), 2, before_failing=others_started)  # 1: the step's decision
    batch = {"tool_calls": [{"name": "wait", "arguments": {"i": i}} for i in range(3)]}
    llm = kernel.llm("scripted:m", replies=[batch, "done"])
    with pytest.raises(CheckpointError) as info:
        ReActLoop(kernel=kernel, llm=llm, tools=["wait"], checkpoints=store, max_tool_call_concurrency=3).run("go")
    assert info.value.step == 2 and sorted(cancelled) == [1, 2]
    assert store.attempts == [1, 2] and store.steps(info.value.run_id) == [1]
    store.close()


def test_a_file_locked_by_another_writer_stops_the_run_and_it_restores_once_released(kernel, tmp_path):
    """Another connection takes the SQLite file's write lock during call 3: the run stops with a
    ``CheckpointError`` caused by ``StoreBusy``; released, the restored run runs call 3 again and finishes."""
    path = str(tmp_path / "locked.db")
    store = kernel.memory("checkpoints", path=path, keep_last=None, **SHORT_WAIT)
    holder, calls = [], []
    counting_add(kernel, calls, on_call=lambda n: n == 3 and holder.append(locked(path)))
    with pytest.raises(CheckpointError) as info:
        loop_on(kernel, store, plan()).run("count")
    assert isinstance(info.value.__cause__, StoreBusy) and info.value.step == 6  # call 3's result
    holder[0].close()
    llm = kernel.llm("scripted:again", replies=plan()[3:])
    result = ReActLoop.restore(kernel, info.value.run_id, checkpoints=store, llm=llm, tools=["add"],
                               agent_config={}).run()
    assert result.content == "done" and calls == [0, 1, 2] + list(range(2, N))
