"""A workflow whose checkpoint write fails stops (fails closed): a ``CheckpointError``, in-flight nodes
cancelled, nothing checkpointed lost, and the run resumes from its last good checkpoint once the store works."""

import asyncio

import msgspec
import pytest
from zagent import CheckpointError
from zagent.plugins.memory.errors import StoreBusy, StoreFull
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph
from zagent.plugins.workflow.result import RunState

from tests.failingstores import SHORT_WAIT, Broken, failing, locked

from .steplog_graphs import chain

N = 10
FAIL_AT = 5  # node n4's checkpoint (node n{i} writes checkpoint i + 1)


def value(i, _):
    return f"v{i}"


def counted_chain(calls, agent=value):
    def record(i, got):
        calls.append(f"n{i}")
        return agent(i, got)

    return chain(N, record)


def same_run(a, b):
    """Two results agree on everything but timings."""
    trace = [[(t.node, t.status, t.outputs, t.route, t.iteration) for t in r.trace] for r in (a, b)]
    return a.outputs == b.outputs and a.values == b.values and trace[0] == trace[1]


@pytest.fixture
def store(tmp_path):
    s = failing(str(tmp_path / "runs.db"), FAIL_AT)
    yield s
    s.close()


def test_a_failed_checkpoint_write_stops_the_run_with_a_checkpoint_error(kernel, store):
    """The run raises ``CheckpointError`` naming the run, the step, the store and the cause, and saying how to
    resume; no node after the one whose checkpoint failed runs, and nothing is written after the failure."""
    calls = []
    with pytest.raises(CheckpointError) as info:
        WorkFlowExecutor(kernel=kernel, checkpoints=store).run(counted_chain(calls), {"goal": "g"}, run_id="r1")
    error = info.value
    assert (error.run_id, error.step, error.store, error.last_step) == ("r1", FAIL_AT, store, FAIL_AT - 1)
    assert isinstance(error.__cause__, Broken) and error.cause is error.__cause__
    text = str(error)
    assert "'r1'" in text and f"checkpoint {FAIL_AT} " in text and repr(store) in text and "disk went away" in text
    assert "WorkFlowExecutor(..., checkpoints=store).resume('r1', graph=graph)" in text  # how to resume it
    assert calls == [f"n{i}" for i in range(FAIL_AT)]
    assert store.attempts == list(range(1, FAIL_AT + 1))


def test_the_store_keeps_the_last_good_checkpoint(kernel, store):
    """After a transient failure the store's latest checkpoint is still the one before it (running, the nodes
    before the failed checkpoint done): the run writes nothing more, not even its end."""
    with pytest.raises(CheckpointError):
        WorkFlowExecutor(kernel=kernel, checkpoints=store).run(counted_chain([]), {"goal": "g"}, run_id="r2")
    step, raw = store.latest("r2")
    state = msgspec.json.decode(raw, type=RunState)
    assert step == FAIL_AT - 1 and state.status == "running"
    assert sorted(state.done) == [f"n{i}" for i in range(FAIL_AT - 1)]


def test_the_run_resumes_from_the_last_good_checkpoint_once_the_store_works(kernel, store):
    """Resumed once the store works again, the run runs only the node whose checkpoint failed and those after it,
    and ends like a run that never failed."""
    with pytest.raises(CheckpointError):
        WorkFlowExecutor(kernel=kernel, checkpoints=store).run(counted_chain([]), {"goal": "g"}, run_id="r3")
    again = []
    # the form the CheckpointError names
    result = WorkFlowExecutor(kernel=kernel, checkpoints=store).resume("r3", graph=counted_chain(again))
    assert again == [f"n{i}" for i in range(FAIL_AT - 1, N)]
    assert same_run(result, WorkFlowExecutor(kernel=kernel).run(counted_chain([]), {"goal": "g"}))


def test_a_failed_last_checkpoint_stops_the_run_and_a_resume_only_finishes_it(kernel, tmp_path):
    """When only the run's end fails to save, ``arun`` raises ``CheckpointError`` for it (no result), and the
    resumed run runs no node: it only writes the end."""
    store = failing(str(tmp_path / "end.db"), N + 1)  # checkpoints 1..N are the nodes', N + 1 the end
    try:
        with pytest.raises(CheckpointError) as info:
            WorkFlowExecutor(kernel=kernel, checkpoints=store).run(counted_chain([]), {"goal": "g"}, run_id="end")
        assert info.value.step == N + 1 and store.latest("end")[0] == N
        again = []
        result = WorkFlowExecutor(kernel=kernel, checkpoints=store).run(counted_chain(again), {"goal": "g"},
                                                                        run_id="end")
        assert again == [] and result.status == "finished" and result.outputs == {f"o{N - 1}": f"v{N - 1}"}
    finally:
        store.close()


def test_the_run_ends_with_a_failed_workflow_end_event(kernel, store, events):
    """The stopped run still says it ended: ``workflow_end`` with status ``failed`` and the checkpoint's error."""
    with pytest.raises(CheckpointError):
        WorkFlowExecutor(kernel=kernel, checkpoints=store).run(counted_chain([]), {"goal": "g"}, run_id="ev")
    (end,) = events.of("workflow_end")
    assert end["status"] == "failed" and "CheckpointError" in end["error"]


def _waiting_fan(width, started, failed, cancelled, swallow=False):
    """``start`` -> ``quick`` and ``width`` nodes that run until ``failed`` is set (or they are cancelled; with
    ``swallow`` they ignore it and return) -> ``join``."""
    names = ["quick"] + [f"slow{i}" for i in range(width)]
    graph = WorkFlowGraph.from_dict({
        "name": "waiting", "goal": "nodes in flight when a checkpoint fails",
        "nodes": ([{"name": "start", "inputs": [{"name": "goal"}], "outputs": [{"name": "x"}]}]
                  + [{"name": n, "inputs": [{"name": "x"}], "outputs": [{"name": f"y_{n}"}]} for n in names]
                  + [{"name": "join", "inputs": [{"name": f"y_{n}"} for n in names], "outputs": [{"name": "out"}]}]),
        "edges": ([{"source": "start", "target": n} for n in names]
                  + [{"source": n, "target": "join"} for n in names])})

    def slow(name):
        async def agent(x):
            started.append(name)
            try:
                while not failed:
                    await asyncio.sleep(0)
            except asyncio.CancelledError:
                cancelled.append(name)
                if not swallow:
                    raise
            return {f"y_{name}": x}
        return agent

    async def quick(x):
        return {"y_quick": x}

    agents = {"start": lambda goal: {"x": goal}, "quick": quick, "join": lambda **ys: {"out": len(ys)},
              **{f"slow{i}": slow(f"slow{i}") for i in range(width)}}
    for node in graph.nodes:
        fn = agents[node.name]
        fn.__name__ = f"agent_{node.name}"
        node.agents = [fn]
    return graph


def test_nodes_in_flight_are_cancelled_when_a_checkpoint_fails(kernel, tmp_path):
    """When ``quick``'s checkpoint fails while three other nodes run, those three are cancelled and have
    ended by the time the run raises; ``join`` never runs and nothing is written after the failure."""
    started, failed, cancelled = [], [], []

    async def all_started():
        while len(started) < 3:
            await asyncio.sleep(0)
        failed.append(True)  # the write raises right after this, without yielding to the other nodes

    store = failing(str(tmp_path / "fan.db"), 2, before_failing=all_started)  # step 1 is start's
    try:
        with pytest.raises(CheckpointError) as info:
            WorkFlowExecutor(kernel=kernel, checkpoints=store).run(_waiting_fan(3, started, failed, cancelled),
                                                                   {"goal": "g"}, run_id="fan")
        assert info.value.step == 2
        assert sorted(cancelled) == ["slow0", "slow1", "slow2"]
        assert store.attempts == [1, 2] and store.steps("fan") == [1]
    finally:
        store.close()


def test_a_node_that_ignores_its_cancellation_writes_no_checkpoint(kernel, tmp_path):
    """Nodes that swallow the cancellation and return their outputs anyway write no checkpoint after the one
    that failed: the store keeps the run as of the last good checkpoint."""
    started, failed, cancelled = [], [], []

    async def all_started():
        while len(started) < 2:
            await asyncio.sleep(0)
        failed.append(True)

    store = failing(str(tmp_path / "fan.db"), 2, before_failing=all_started)
    try:
        with pytest.raises(CheckpointError):
            WorkFlowExecutor(kernel=kernel, checkpoints=store).run(
                _waiting_fan(2, started, failed, cancelled, swallow=True), {"goal": "g"}, run_id="stubborn")
        assert sorted(cancelled) == ["slow0", "slow1"]
        assert store.attempts == [1, 2] and store.steps("stubborn") == [1]
    finally:
        store.close()


def test_a_file_locked_by_another_writer_stops_the_run_and_it_resumes_once_released(kernel, tmp_path):
    """Another connection holds the SQLite file's write lock from node n4 on: the run stops with a
    ``CheckpointError`` caused by ``StoreBusy``; released, the run resumes at n4 and finishes."""
    path = str(tmp_path / "locked.db")
    store = kernel.memory("checkpoints", path=path, keep_last=None, **SHORT_WAIT)
    holder = []

    def agent(i, got):
        if i == 4:
            holder.append(locked(path))
        return f"v{i}"

    with pytest.raises(CheckpointError) as info:
        WorkFlowExecutor(kernel=kernel, checkpoints=store).run(counted_chain([], agent), {"goal": "g"},
                                                               run_id="lk")
    assert isinstance(info.value.__cause__, StoreBusy) and info.value.step == 5
    holder[0].close()
    again = []
    result = WorkFlowExecutor(kernel=kernel, checkpoints=store).run(counted_chain(again), {"goal": "g"},
                                                                    run_id="lk")
    assert again == [f"n{i}" for i in range(4, N)] and result.outputs == {f"o{N - 1}": f"v{N - 1}"}


def test_a_full_file_stops_the_run_and_it_resumes_once_there_is_room(kernel, tmp_path):
    """A file that reaches its size limit mid-run stops the run with a ``CheckpointError`` caused by
    ``StoreFull``; reopened without the limit, the run resumes after its last checkpoint and finishes."""
    path = str(tmp_path / "full.db")
    small = kernel.memory("checkpoints", path=path, keep_last=None, max_bytes=256 * 1024)
    big = "x" * 8000  # each node's output: the file fills within the chain

    with pytest.raises(CheckpointError) as info:
        WorkFlowExecutor(kernel=kernel, checkpoints=small).run(counted_chain([], lambda i, _: big + str(i)),
                                                               {"goal": "g"}, run_id="full")
    assert isinstance(info.value.__cause__, StoreFull)
    last = small.latest("full")[0]
    assert last == info.value.step - 1 == info.value.last_step
    small.close()
    roomy = kernel.memory("checkpoints", path=path, keep_last=None)
    again = []
    result = WorkFlowExecutor(kernel=kernel, checkpoints=roomy).run(
        counted_chain(again, lambda i, _: big + str(i)), {"goal": "g"}, run_id="full")
    assert again == [f"n{i}" for i in range(last, N)] and result.outputs == {f"o{N - 1}": big + str(N - 1)}


def test_an_inner_runs_checkpoint_error_stops_the_workflow_without_retrying_the_node(kernel, tmp_path):
    """A node whose agent raises ``CheckpointError`` (its own checkpointed run stopped) is not retried and not
    marked failed: the workflow raises that error, its store keeps the node unfinished, and a resume runs the
    node again and finishes like a run that never failed."""
    calls = []
    broken = CheckpointError("inner run 'r/n4' could not write checkpoint 3", run_id="r/n4", step=3)

    def agent(i, got):
        if i == 4 and calls.count("n4") == 1:
            raise broken
        return value(i, got)

    store = str(tmp_path / "inner.db")
    with pytest.raises(CheckpointError) as info:
        WorkFlowExecutor(kernel=kernel, checkpoints=store, retries=2).run(counted_chain(calls, agent),
                                                                          {"goal": "g"}, run_id="inner")
    assert info.value is broken
    assert calls == [f"n{i}" for i in range(5)]  # n4 once: not retried
    saved = kernel.memory("checkpoints", path=store)
    try:
        state = msgspec.json.decode(saved.latest("inner")[1], type=RunState)
    finally:
        saved.close()
    assert state.status == "running" and "n4" not in state.done
    assert [t.node for t in state.trace if t.status == "failed"] == []
    result = WorkFlowExecutor(kernel=kernel, checkpoints=store).run(counted_chain(calls, agent), {"goal": "g"},
                                                                    run_id="inner")
    assert calls[5:] == [f"n{i}" for i in range(4, N)]
    assert same_run(result, WorkFlowExecutor(kernel=kernel).run(counted_chain([]), {"goal": "g"}))
