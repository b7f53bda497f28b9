"""The run driver every engine runs on (``zagent.agentkit.lifecycle``), on a toy engine of counted steps."""

from __future__ import annotations

import asyncio
import threading

import msgspec
import pytest

from zagent import ConfigError, Kernel, RunAborted
from zagent.agentkit.lifecycle import NO_ANSWER, Resumable, RunDriver
from zagent.agentkit.steplog import StepLog
from zagent.errors import CheckpointError
from zagent.testing import wait_until


class Toy(msgspec.Struct):
    run_id: str
    status: str = "running"
    step: int = 0
    saves: int = 0


class Store:
    def __init__(self, fail_at=None):
        self.saved, self.fail_at = [], fail_at

    async def asave(self, run_id, step, data, *, kind, metadata):
        if step == self.fail_at:
            raise OSError("disk full")
        self.saved.append((run_id, step, kind, msgspec.json.decode(data)["status"]))

    def save(self, run_id, step, data, *, kind, metadata):
        self.saved.append((run_id, step, kind, msgspec.json.decode(data)["status"], "sync"))


class Events:
    def __init__(self):
        self.seen = []

    from zagent import hookimpl

    @hookimpl
    def zagent_event(self, event):
        self.seen.append((event.type, dict(event.data)))


class Engine(RunDriver[Toy, str], Resumable[str]):
    """Counts to ``steps``, a boundary before each step; ``held`` steps wait for an approval."""

    kind = "toy"

    def __init__(self, kernel, steps=3, store=None, gate=None):
        self.kernel, self.steps, self.store, self.gate, self.state = kernel, steps, store, gate, None
        self.approved, self.resumed_with = set(), None
        self._init_driver()

    async def arun(self, run_id="r1"):
        self.state = Toy(run_id=run_id)
        self._ctx, self._log = self.kernel.context(run_id=run_id), StepLog(small=("status", "step"))
        self._start_driver()
        try:
            return await self._drive()
        finally:
            self._stop_driver()

    async def _advance(self):
        if self._running.step >= self.steps:
            await self._end("completed", "toy_end", steps=self._running.step)
            return "done"
        await self._abortable(self.gate() if self.gate else asyncio.sleep(0))
        self._running.step += 1
        await self._checkpoint()
        return None

    def _held(self):
        return self._running.step == 1 and "c1" not in self.approved

    def _answer_calls(self, approve, deny):
        self.approved |= approve

    def _position(self):
        return {"step": self._running.step}

    def _checkpoint_store(self):
        return self.store

    def _checkpoint_payload(self):
        state = self._running
        state.saves += 1
        return state.run_id, state.saves, state, {"status": state.status}

    def _abort_error(self):
        return RunAborted("aborted", trajectory=[])

    async def _aresume_run(self, run_id, answer, approve, deny, deps, options):
        self.resumed_with = (run_id, answer, approve, deny, deps, options)
        return "resumed"


@pytest.fixture
def kernel():
    return Kernel(entry_points=False)


def _in_thread(fn):
    thread = threading.Thread(target=fn)
    thread.start()
    return thread


def test_a_held_run_waits_at_its_boundary_until_resume_approves(kernel):
    """A run held at its boundary is paused (checkpointed, ``paused`` sent) until ``resume(approve=...)``."""
    events, store = Events(), Store()
    kernel.add_plugin(events)
    engine = Engine(kernel, store=store)

    def approve():
        wait_until(lambda: engine.status == "paused", "the pause")
        engine.resume(approve=["c1"])

    thread = _in_thread(approve)
    assert asyncio.run(engine.arun()) == "done"
    thread.join()
    types = [t for t, _ in events.seen]
    assert types[types.index("paused"):types.index("paused") + 2] == ["paused", "resumed"]
    assert ("paused" in [s for *_, s in store.saved]) and store.saved[-1][3] == "completed"
    assert events.seen[-1] == ("toy_end", {"status": "completed", "steps": 3})


def test_abort_cancels_the_awaited_call_and_ends_the_run_aborted(kernel):
    """``abort()`` cancels the call in flight; the run checkpoints ``aborted`` and raises ``RunAborted``."""
    store, started = Store(), threading.Event()

    async def forever():
        started.set()
        await asyncio.sleep(3600)

    engine = Engine(kernel, store=store, gate=forever)
    thread = _in_thread(lambda: (started.wait(), engine.abort()))
    with pytest.raises(RunAborted):
        asyncio.run(engine.arun())
    thread.join()
    assert engine.status == "aborted" and store.saved[-1][3] == "aborted"


def test_an_abort_can_save_without_awaiting(kernel):
    """``abort_saves_sync``: the aborted checkpoint is written whole by the store's ``save``, nothing awaited."""
    store, started = Store(), threading.Event()

    async def forever():
        started.set()
        await asyncio.sleep(3600)

    class Sync(Engine):
        abort_saves_sync = True

    engine = Sync(kernel, store=store, gate=forever)
    engine.approved.add("c1")
    thread = _in_thread(lambda: (started.wait(), engine.abort()))
    with pytest.raises(RunAborted):
        asyncio.run(engine.arun())
    thread.join()
    assert store.saved == [("r1", 1, "toy", "aborted", "sync")]


def test_after_a_failed_checkpoint_nothing_more_is_written(kernel):
    """A save that fails is a ``CheckpointError``; later saves of the run are skipped (it fails closed)."""
    store = Store(fail_at=2)
    engine = Engine(kernel, steps=5, store=store)
    engine.approved.add("c1")
    with pytest.raises(CheckpointError):
        asyncio.run(engine.arun())
    asyncio.run(_save_again(engine))
    assert [s for _, s, *_ in store.saved] == [1]


async def _save_again(engine):
    await engine._checkpoint()


def test_resume_with_a_run_id_goes_to_the_engine_with_every_keyword(kernel):
    """``resume(run_id, ...)`` and ``aresume`` hand the run id, answer, approvals, deps and options on."""
    engine = Engine(kernel)
    assert engine.resume("r9", answer="yes", approve=("c1",), deps=1, graph="g") == "resumed"
    assert engine.resumed_with == ("r9", "yes", ["c1"], [], 1, {"graph": "g"})
    assert asyncio.run(engine.aresume("r8")) == "resumed"
    assert engine.resumed_with[1] is NO_ANSWER


def test_resume_without_a_run_id_refuses_an_answer(kernel):
    """An answer (or deps) without a run id is a ``ConfigError``: only a checkpointed run takes one."""
    with pytest.raises(ConfigError, match="needs the run id"):
        Engine(kernel).resume(answer="yes")


def test_an_engine_without_calls_to_approve_refuses_approve(kernel):
    """The default ``_answer_calls`` refuses approvals: that engine answers them with ``answer=``."""

    class Plain(Engine):
        _answer_calls = RunDriver._answer_calls

    engine = Plain(kernel)
    engine.state = Toy(run_id="r")
    with pytest.raises(ConfigError, match="answer='yes'"):
        engine.resume(approve=["c1"])


def test_a_resumable_without_live_runs_asks_for_the_run_id():
    """``Resumable`` alone (an engine whose runs are not held here) needs the run id to resume."""
    with pytest.raises(ConfigError, match="give the run id"):
        Resumable().resume()


def test_an_error_goes_to_on_failure_which_may_end_the_run_with_a_result(kernel):
    """A step's error reaches ``_on_failure``: its result ends the run, ``None`` raises the error."""

    class Failing(Engine):
        async def _advance(self):
            raise ValueError("step broke")

        async def _on_failure(self, exc):
            return "paused" if self.paused_instead else None

    engine = Failing(kernel)
    engine.approved.add("c1")
    engine.paused_instead = True
    assert asyncio.run(engine.arun()) == "paused"
    engine.paused_instead = False
    with pytest.raises(ValueError, match="step broke"):
        asyncio.run(engine.arun())


def test_a_run_cancelled_from_outside_sends_its_end_event_and_saves_nothing_more(kernel):
    """A run whose task is cancelled (not ``abort()``: ``wait_for``, a task group) sends its end event with status
    ``cancelled`` (observers close its span and log rows), writes no checkpoint for it, and stays cancelled."""
    events, store = Events(), Store()
    kernel.add_plugin(events)

    started = []

    async def forever():
        started[0].set()
        await asyncio.sleep(3600)

    engine = Engine(kernel, store=store, gate=forever)
    engine.approved.add("c1")

    async def main():
        started.append(asyncio.Event())
        task = asyncio.ensure_future(engine.arun())
        await started[0].wait()
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())
    assert events.seen[-1] == ("toy_end", {"status": "cancelled"})
    assert store.saved == []
