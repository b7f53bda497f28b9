"""Workflow executor overhead: a generated 1,000-node DAG of no-op agents, scheduled and run.

Each node ``n<i>`` reads the outputs of up to three random earlier nodes
(node 0 reads the workflow input ``goal``) and writes ``o<i>``; edges come from
those names (``build``-style). Every node has its own no-op agent (an object
whose ``aexecute`` returns at once), registered in an ``AgentManager``, so
what is measured is the executor: readiness tracking, the concurrency
semaphore, agent states, value passing, trace entries and events plumbing.

Prints the validation time, then the median of ``--runs`` runs: total
seconds and microseconds per node. This is a benchmark, not a test; with
``--check`` it exits 1 when a run takes 2 s or more (the acceptance budget).

``--events`` adds an event observer (every node then emits its events);
``--checkpoints PATH`` saves a checkpoint after every node (SQLite, one
transaction each: this measures the disk, not the scheduler).

Usage: ``python bench/workflow_bench.py [--nodes 1000] [--runs 5] [--events] [--checkpoints F] [--check]``
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time

from zagent import Kernel

BUDGET = 2.0
PLUGINS = ["zagent.plugins.manager", "zagent.plugins.workflow"]


class NoOp:
    """An agent whose action returns immediately."""

    def __init__(self, name: str, output: str):
        self.name, self.output = name, output

    async def aexecute(self, *, inputs, ctx=None):
        return {self.output: 1}


def make_graph(n: int, seed: int = 7):
    from zagent.plugins.workflow import WorkFlowGraph

    rng = random.Random(seed)
    nodes, edges = [], []
    for i in range(n):
        sources = sorted(rng.sample(range(i), min(i, rng.randint(1, 3)))) if i else []
        inputs = [{"name": f"o{j}"} for j in sources] or [{"name": "goal"}]
        nodes.append({"name": f"n{i}", "inputs": inputs, "outputs": [{"name": f"o{i}"}], "agents": [f"agent{i}"]})
        edges.extend({"source": f"n{j}", "target": f"n{i}"} for j in sources)
    return WorkFlowGraph.from_dict({"name": "bench", "goal": "measure the executor", "nodes": nodes, "edges": edges})


class Observer:
    """An event observer that only counts (to measure the cost of emitting)."""

    def __init__(self):
        self.count = 0

    def zagent_event(self, event):
        self.count += 1


def run_once(kernel, graph, n: int, checkpoints=None) -> float:
    from zagent.plugins.manager import AgentManager
    from zagent.plugins.workflow import WorkFlowExecutor

    manager = AgentManager(kernel=kernel)
    for i in range(n):
        manager.add_agent(NoOp(f"agent{i}", f"o{i}"))
    executor = WorkFlowExecutor(kernel=kernel, manager=manager, max_concurrency=64, validate=False,
                                checkpoints=checkpoints)

    async def go():
        started = time.perf_counter()
        result = await executor.arun(graph, {"goal": "go"})
        elapsed = time.perf_counter() - started
        assert result.ok and len(result.trace) == n, result
        return elapsed

    return asyncio.run(go())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--events", action="store_true", help="with an event observer installed")
    parser.add_argument("--checkpoints", default=None, help="checkpoint to this SQLite file after every node")
    parser.add_argument("--check", action="store_true", help=f"exit 1 if the median run takes {BUDGET} s or more")
    args = parser.parse_args()
    plugins = PLUGINS + (["zagent.plugins.memory"] if args.checkpoints else [])
    kernel = Kernel(plugins=plugins, entry_points=False)
    if args.events:
        kernel.add_plugin(Observer(), name="bench-observer")
    store = kernel.memory("checkpoints", path=args.checkpoints, synchronous="normal") if args.checkpoints else None
    graph = make_graph(args.nodes)
    started = time.perf_counter()
    graph.validate()
    print(f"validate {args.nodes} nodes, {len(graph.edges)} edges: {time.perf_counter() - started:.3f} s")
    times = [run_once(kernel, graph, args.nodes, store) for _ in range(args.runs)]
    median = statistics.median(times)
    print(f"run {args.nodes} no-op nodes: {median:.3f} s total (median of {args.runs}), "
          f"{median / args.nodes * 1e6:.0f} us per node; budget {BUDGET} s"
          + (" (with events)" if args.events else "") + (" (with checkpoints)" if args.checkpoints else ""))
    return 1 if args.check and median >= BUDGET else 0


if __name__ == "__main__":
    sys.exit(main())
