"""Per-step CPU of a checkpointed workflow and group chat, early in a run and late (the ``flows`` part of scale.py).

A workflow: a chain of N no-op async nodes (each reads the previous node's output and appends a note to the
state field ``notes``, which has the ``append`` reducer), so one node runs at a time, each node is one
checkpoint and ``notes`` grows by one item per step. A group chat: N rounds between two async speakers (``aspeak``), one
checkpoint per round. Each runs three ways, on the same SQLite file: ``patch`` (the checkpoint store: a
step log, each step a patch and the whole state now and then), ``whole`` (the same store behind a wrapper
without ``asave_patch``: the whole state every step, as before the step log) and ``none`` (no checkpoints).
A step's CPU (``time.process_time``, so the writer thread counts) runs from one node's (turn's) start to
the next's. Printed: the median over rounds of the median CPU per step in windows around steps 1, 100 and
200 (and more for longer runs), and each window's ratio to steps 1-5 (the goal: ~1.0 for ``patch``).
No assertion: a benchmark, not a test.

    python bench/flow_steps.py [--steps 200] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time

import zagent

PLUGINS = ["zagent.plugins.memory", "zagent.plugins.manager", "zagent.plugins.workflow", "zagent.plugins.groupchat"]


class Whole:
    """The checkpoint store without ``asave_patch``: every checkpoint is written whole."""

    def __init__(self, store):
        self.store = store

    async def asave(self, *args, **kwargs):
        await self.store.asave(*args, **kwargs)

    async def alatest(self, run_id):
        return await self.store.alatest(run_id)


class Node:
    """A workflow agent that marks the CPU clock and passes a constant on."""

    def __init__(self, name, output, marks):
        self.name, self.output, self.marks = name, output, marks

    async def aexecute(self, *, inputs, ctx=None):
        self.marks.append(time.process_time())
        return {self.output: 1, "notes": f"{self.name} has passed its value on"}


class Speaker:
    """A group chat speaker that marks the CPU clock and says one short line."""

    def __init__(self, name, marks):
        self.name, self.description, self.marks = name, f"the {name}", marks

    async def aspeak(self, turn):
        self.marks.append(time.process_time())
        return f"{self.name}: noted, round {turn.round}"


def chain(n: int):
    from zagent.plugins.workflow import WorkFlowGraph

    nodes = [{"name": f"n{i}", "inputs": [{"name": f"o{i - 1}" if i else "goal"}],
              "outputs": [{"name": f"o{i}"}, {"name": "notes"}], "agents": [f"agent{i}"]} for i in range(n)]
    edges = [{"source": f"n{i - 1}", "target": f"n{i}"} for i in range(1, n)]
    return WorkFlowGraph.from_dict({"name": "chain", "goal": "measure checkpoints", "nodes": nodes, "edges": edges,
                                    "state": [{"name": "notes", "reducer": "append"}]})


async def workflow_run(k, graph, n: int, store) -> list[float]:
    from zagent.plugins.manager import AgentManager
    from zagent.plugins.workflow import WorkFlowExecutor

    marks: list[float] = []
    manager = AgentManager(kernel=k)
    for i in range(n):
        manager.add_agent(Node(f"agent{i}", f"o{i}", marks))
    result = await WorkFlowExecutor(kernel=k, manager=manager, validate=False, checkpoints=store).arun(
        graph, {"goal": "go"})
    marks.append(time.process_time())
    assert result.ok and len(result.trace) == n and len(result.values["notes"]) == n
    return marks


async def chat_run(k, n: int, store) -> list[float]:
    from zagent.plugins.groupchat import GroupChat

    marks: list[float] = []
    chat = GroupChat(kernel=k, agents=[Speaker("A", marks), Speaker("B", marks)], termination={"max_rounds": n},
                     checkpoints=store)
    result = await chat.arun("talk it over")
    marks.append(time.process_time())
    assert result.rounds == n
    return marks


def per_step(marks: list[float]) -> list[float]:
    return [(b - a) * 1e6 for a, b in zip(marks, marks[1:])]


async def measure(steps: int, rounds: int) -> None:
    tmp = tempfile.mkdtemp(prefix="zagent-flows-")
    path = os.path.join(tmp, "runs.db")
    k = zagent.Kernel(plugins=PLUGINS, entry_points=False)
    store = k.memory("checkpoints", path=path)
    stores = {"patch": store, "whole": Whole(store), "none": None}
    graph = chain(steps)
    try:
        for name, run in (("workflow", lambda s: workflow_run(k, graph, steps, s)),
                          ("groupchat", lambda s: chat_run(k, steps, s))):
            await run(store)  # warm
            costs = {variant: [] for variant in stores}
            for r in range(rounds):
                order = list(stores) if r % 2 == 0 else list(reversed(stores))
                for variant in order:
                    costs[variant].append(per_step(await run(stores[variant])))
            report(name, steps, rounds, costs)
    finally:
        store.close()
        await k.aclose()
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)


def report(name: str, steps: int, rounds: int, costs: dict[str, list[list[float]]]) -> None:
    windows = [(1, 5)] + [(k - 9, k) for k in (100, 200, 500, 1000) if k <= steps]

    def at(variant: str, lo: int, hi: int) -> float:  # median over rounds of the window's median
        return statistics.median(statistics.median(s[lo - 1:hi]) for s in costs[variant])

    first = {v: at(v, 1, 5) for v in costs}
    print(f"\n== {name}: CPU per step at step k of {steps}-step runs, checkpointed to SQLite "
          f"(µs; median of the window's steps, median of {rounds} runs)")
    print(f"{'steps':>9} {'patch':>8} {'whole':>8} {'none':>8} {'patch vs 1-5':>13} {'whole vs 1-5':>13}")
    for lo, hi in windows:
        v = {variant: at(variant, lo, hi) for variant in costs}
        print(f"{lo:>4}-{hi:<4} {v['patch']:8.0f} {v['whole']:8.0f} {v['none']:8.0f} "
              f"{v['patch'] / first['patch']:13.2f} {v['whole'] / first['whole']:13.2f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    asyncio.run(measure(a.steps, a.rounds))
