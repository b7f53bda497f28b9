"""Fixtures for workflow tests: a kernel with the plugins a workflow needs, graphs and an event recorder;
for the step-log tests a checkpoint store keeping every step (``saved_states`` is the suite's)."""

import pytest
from zagent import Kernel

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.memory",
           "zagent.plugins.manager", "zagent.plugins.workflow"]


@pytest.fixture
def kernel():
    """A fresh isolated kernel with offline providers, parsers, actions, memory, manager and workflow."""
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True,
               config={"trusted_imports": ["workflow.*", "tests.workflow.*"]})  # routers/reducers in test modules
    yield k
    k.close()


@pytest.fixture
def store(kernel, tmp_path):
    """A SQLite checkpoint store in the test's folder that keeps every step (``keep_last=None``)."""
    s = kernel.memory("checkpoints", path=str(tmp_path / "runs.db"), keep_last=None)
    yield s
    s.close()


class Events:
    """A plugin recording every event (type and data) in order."""

    def __init__(self):
        self.seen = []

    def zagent_event(self, event):
        self.seen.append((event.type, dict(event.data)))

    def of(self, type_):
        return [d for t, d in self.seen if t == type_]


@pytest.fixture
def events(kernel):
    rec = Events()
    kernel.add_plugin(rec, name="test-events")
    return rec


def node(name, inputs, outputs, agents=(), **kw):
    return {"name": name, "description": f"do {name}", "inputs": [{"name": i} for i in inputs],
            "outputs": [{"name": o} for o in outputs], "agents": list(agents), **kw}


def edges(*pairs):
    return [{"source": a, "target": b} for a, b in pairs]


def diamond_dict(**over):
    """A -> (B, C) -> D, passing x, then y and z, producing out."""
    data = {"name": "diamond", "goal": "test the diamond shape",
            "nodes": [node("A", ["goal"], ["x"]), node("B", ["x"], ["y"]), node("C", ["x"], ["z"]),
                      node("D", ["y", "z"], ["out"])],
            "edges": edges(("A", "B"), ("A", "C"), ("B", "D"), ("C", "D"))}
    data.update(over)
    return data
