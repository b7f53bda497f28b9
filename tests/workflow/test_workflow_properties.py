"""Property tests of the scheduler on random DAGs: every node runs once, after all its predecessors."""

import asyncio
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from zagent import Kernel
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

from .conftest import PLUGINS


def random_dag(seed, n):
    rng = random.Random(seed)
    nodes, edges = [], []
    for i in range(n):
        sources = sorted(rng.sample(range(i), min(i, rng.randint(1, 3)))) if i else []
        nodes.append({"name": f"n{i}", "inputs": [{"name": f"o{j}"} for j in sources] or [{"name": "goal"}],
                      "outputs": [{"name": f"o{i}"}]})
        edges += [{"source": f"n{j}", "target": f"n{i}"} for j in sources]
    return WorkFlowGraph.from_dict({"name": "random", "goal": "random dag", "nodes": nodes, "edges": edges})


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 40), concurrency=st.integers(1, 6))
def test_every_node_runs_once_after_its_predecessors(seed, n, concurrency):
    """On any DAG, each node runs exactly once, only after all its predecessors, with the values they made."""
    graph = random_dag(seed, n)
    finished: list[str] = []

    def make(node):
        async def agent(**inputs):
            preds = [e.source for e in graph.edges if e.target == node.name]
            assert all(p in finished for p in preds)
            assert sorted(inputs) == sorted(node.input_names)
            await asyncio.sleep(0)
            finished.append(node.name)
            return {node.outputs[0].name: node.name}
        agent.__name__ = f"agent_{node.name}"
        return agent

    for node in graph.nodes:
        node.agents = [make(node)]
    kernel = Kernel(plugins=PLUGINS, entry_points=False)
    try:
        result = WorkFlowExecutor(kernel=kernel, max_concurrency=concurrency).run(graph, {"goal": "g"})
    finally:
        kernel.close()
    assert sorted(finished) == sorted(graph.node_names) and len(finished) == n
    assert all(result.values[f"o{i}"] == f"n{i}" for i in range(n))
