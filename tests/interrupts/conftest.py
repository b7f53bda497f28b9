"""Fixtures for the interrupt tests: a fresh offline kernel per test, a SQLite checkpoint file, small graphs."""

import pytest

from zagent import Kernel

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.memory", "zagent.plugins.manager", "zagent.plugins.workflow", "zagent.plugins.groupchat"]
KEY = "interrupt-key-" + "0123456789abcdef" * 2


def make_kernel(**config):
    return Kernel(plugins=PLUGINS, entry_points=False, strict=True, config=config)


@pytest.fixture
def kernel():
    k = make_kernel()
    yield k
    k.close()


@pytest.fixture
def db(tmp_path):
    """The path of a (not yet created) SQLite checkpoint file in the test's folder."""
    return str(tmp_path / "runs.db")


def node(name, inputs, outputs, agents=(), **kw):
    return {"name": name, "inputs": [{"name": i} for i in inputs], "outputs": [{"name": o} for o in outputs],
            "agents": list(agents), **kw}


def chain_graph(*agents):
    """Nodes n0 -> n1 -> ... each with one agent function: n0 reads goal, node i writes v{i}."""
    from zagent.plugins.workflow import WorkFlowGraph

    nodes = [node(f"n{i}", ["goal" if i == 0 else f"v{i - 1}"], [f"v{i}"], [fn]) for i, fn in enumerate(agents)]
    edges = [{"source": f"n{i}", "target": f"n{i + 1}"} for i in range(len(agents) - 1)]
    return WorkFlowGraph.from_dict({"name": "chain", "goal": "test interrupts", "nodes": nodes, "edges": edges})
