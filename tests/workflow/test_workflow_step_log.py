"""Workflow checkpoints as a step log: each node saved as its change, the whole state now and then, read back whole."""

import os
import pathlib
import signal
import subprocess
import sys

import msgspec
import pytest
from zagent.plugins.workflow import WorkFlowExecutor
from zagent.plugins.workflow.result import RunState
from zagent.testing import wait_until

from tests.failingstores import FullOnly

from .steplog_graphs import chain, fan, looping

CHILD = str(pathlib.Path(__file__).with_name("workflow_child.py"))
N = 60


def rows(store, run_id):
    return store.db.read(lambda c: c.execute(
        "SELECT step, patch FROM checkpoints WHERE run_id = ? ORDER BY step", (run_id,)).fetchall())


def cut(store, run_id, step):
    """Drop every checkpoint after ``step``: the file as a process that died right after writing it left it."""
    store.db.write(lambda c: c.execute("DELETE FROM checkpoints WHERE run_id = ? AND step > ?", (run_id, step)))


def counted(graph, calls):
    """``graph`` with each agent appending its node's name to ``calls`` when it runs."""
    for node in graph.nodes:
        def wrapper(_fn=node.agents[0], _name=node.name, **inputs):
            calls.append(_name)
            return _fn(**inputs)

        wrapper.__name__ = node.agents[0].__name__
        node.agents = [wrapper]
    return graph


def same_run(a, b):
    """Two results agree on everything but timings."""
    trace = [[(t.node, t.status, t.outputs, t.route, t.iteration) for t in r.trace] for r in (a, b)]
    return a.outputs == b.outputs and a.values == b.values and trace[0] == trace[1]


GRAPHS = {"chain": lambda: (chain(N, lambda i, v: i), {"goal": "g"}),
          "fan": lambda: (fan(30), {"goal": "g"}),
          "loop": lambda: (looping(25), {"goal": "g", "passes": 25})}


def test_most_checkpoints_of_a_long_run_are_patches(kernel, store):
    """A 60-node run writes patches between occasional full saves; its first and last checkpoints are full."""
    graph, inputs = GRAPHS["chain"]()
    WorkFlowExecutor(kernel=kernel, checkpoints=store).run(graph, inputs, run_id="long")
    saved = rows(store, "long")
    assert len(saved) == N + 1 and saved[0][1] == 0 and saved[-1][1] == 0
    assert sum(is_patch for _, is_patch in saved) > 0.8 * len(saved)


@pytest.mark.parametrize("shape", sorted(GRAPHS))
def test_every_checkpoint_reads_back_as_the_state_it_saved(kernel, store, saved_states, shape):
    """Each step loaded back (a full save with the patches after it applied) equals the run's state when that
    step was saved: in a chain, with 30 nodes finishing concurrently, and round a loop that resets nodes."""
    graph, inputs = GRAPHS[shape]()
    WorkFlowExecutor(kernel=kernel, checkpoints=store).run(graph, inputs, run_id=shape)
    saved = rows(store, shape)
    assert [step for step, _ in saved] == [step for run_id, step in sorted(saved_states)], "every save landed"
    assert any(is_patch for _, is_patch in saved)
    for step, _ in saved:
        rebuilt = msgspec.json.decode(store.load(shape, step), type=RunState)
        assert rebuilt == msgspec.json.decode(saved_states[(shape, step)], type=RunState), step


@pytest.mark.parametrize("shape", ["chain", "loop"])
def test_a_run_cut_after_a_patch_resumes_and_ends_like_an_uninterrupted_one(kernel, store, shape):
    """Resumed from a patch checkpoint halfway, a run re-runs no node that checkpoint holds and ends with the
    same outputs, values and trace as a run that never stopped."""
    graph, inputs = GRAPHS[shape]()
    first = []
    clean = WorkFlowExecutor(kernel=kernel, checkpoints=store).run(counted(graph, first), inputs, run_id=shape)
    step = next(s for s, is_patch in rows(store, shape) if is_patch and s >= len(first) // 2)
    cut(store, shape, step)
    graph, inputs = GRAPHS[shape]()
    again = []
    result = WorkFlowExecutor(kernel=kernel, checkpoints=store).run(counted(graph, again), inputs, run_id=shape)
    assert again == first[step:], "the nodes the checkpoint holds did not run again"
    assert same_run(result, clean)


def test_killed_mid_run_resumes_without_rerunning_checkpointed_nodes(kernel, tmp_path):
    """SIGKILL while node 25 of a 40-node chain runs (the latest checkpoint a patch): the resumed run, in
    another process, runs each of nodes 0-24 never again, node 25 again (its result was never saved), the rest once."""
    db, log = str(tmp_path / "runs.db"), tmp_path / "nodes.log"
    proc = subprocess.Popen([sys.executable, CHILD, db, str(log), "40", "25"], stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: log.exists() and "n25" in log.read_text().split() or proc.poll() is not None,
                   "node 25 to start", polls=60000)
        assert proc.poll() is None, proc.stderr.read()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        proc.stderr.close()
    store = kernel.memory("checkpoints", path=db, keep_last=None)
    assert rows(store, "killed-run")[-1] == (25, 1)  # 25 nodes saved, the latest as a patch

    def agent(i, value):
        with open(log, "a") as f:
            f.write(f"n{i}\n")
        return f"v{i}"

    result = WorkFlowExecutor(kernel=kernel, checkpoints=store).run(chain(40, agent), {"goal": "g"},
                                                                    run_id="killed-run")
    assert log.read_text().split() == [f"n{i}" for i in range(26)] + [f"n{i}" for i in range(25, 40)]
    assert result.outputs == {"o39": "v39"} and len(result.resumed) == 25
    store.close()


def test_a_store_without_save_patch_gets_every_checkpoint_whole(kernel):
    """Every checkpoint written to a store that takes no patches is the whole state, and a run resumes from it."""
    graph, inputs = GRAPHS["chain"]()
    store = FullOnly()
    clean = WorkFlowExecutor(kernel=kernel, checkpoints=store).run(graph, inputs, run_id="r")
    states = [msgspec.json.decode(raw, type=RunState) for raw in store.saved["r"].values()]
    assert [len(s.done) for s in states] == list(range(1, N + 1)) + [N]
    for step in range(31, N + 2):
        del store.saved["r"][step]
    again = []
    result = WorkFlowExecutor(kernel=kernel, checkpoints=store).run(counted(GRAPHS["chain"]()[0], again), inputs,
                                                                    run_id="r")
    assert again == [f"n{i}" for i in range(30, N)] and same_run(result, clean)
