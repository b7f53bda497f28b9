"""A state reducer that raises fails its node and the run; it is never swallowed into a ``finished`` run."""

import pytest
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowFailed, WorkFlowGraph

from .conftest import diamond_dict

HERE = __name__


def broken_reducer(old, new):
    raise ValueError("cannot merge these notes")


def graph_with_reducer(reducer):
    data = diamond_dict(state=[{"name": "notes", "reducer": reducer}])
    data["nodes"][1]["outputs"].append({"name": "notes"})
    graph = WorkFlowGraph.from_dict(data)
    fns = {"A": lambda goal: {"x": 1}, "B": lambda x: {"y": 1, "notes": "from B"},
           "C": lambda x: {"z": 1}, "D": lambda y, z: {"out": 1}}
    for n in graph.nodes:
        fns[n.name].__name__ = f"agent_{n.name}"
        n.agents = [fns[n.name]]
    return graph


def test_a_raising_reducer_fails_the_run_naming_the_field(kernel):
    """Seed 003 (langgraph): "状态更新不是赋值...而是“归约”reduce。每次节点输出新消息系统自动调用add_messages
    合并到现有状态" (a state update is a reduce: each node's output is merged into the state by the reducer).
    A reducer that raises is that merge failing: the writing node fails, the run is ``failed`` (not
    ``finished``), and the error names the state field and the reducer's own error."""
    with pytest.raises(WorkFlowFailed) as info:
        WorkFlowExecutor(kernel=kernel).run(graph_with_reducer(f"{HERE}:broken_reducer"), {"goal": "g"})
    result = info.value.result
    assert result.status == "failed"
    assert "B" in result.errors
    assert "notes" in result.errors["B"] and "cannot merge these notes" in result.errors["B"]


def test_a_builtin_reducer_refusing_a_value_fails_the_node(kernel):
    """Seed 003 (langgraph): "强制所有状态变更走归约函数" (every state change goes through the reducer).
    The built-in ``merge`` reducer given a non-dict raises; the node that wrote it is failed, and nodes
    downstream of it do not run."""
    with pytest.raises(WorkFlowFailed) as info:
        WorkFlowExecutor(kernel=kernel).run(graph_with_reducer("merge"), {"goal": "g"})
    result = info.value.result
    assert result.status == "failed" and "notes" in result.errors["B"]
    assert "D" not in {e.node for e in result.trace if e.status == "done"}
