"""A node run on a remote executor (a shipping test executor: JSON over the "wire", a separate worker kernel)
asks a person: the question comes back as data, the run pauses at the driver, and the resume ships the answer."""

import zagent
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

from tests.batch.shipping import ShippingExecutor

from .conftest import node


def ask_human(question: str) -> str:
    """Ask the human a question and return the answer."""
    return f"the human said {zagent.interrupt('Which color?')}"


def shipping():
    ex = ShippingExecutor()
    ex.worker.add_tool(ask_human)
    return ex


def test_a_shipped_node_pauses_and_resumes_with_the_answer(kernel, db):
    """The worker's interrupt reaches the driver as a question; resumed, the worker gets the answer."""
    kernel.add_tool(ask_human)
    spec = {"name": "Painter", "prompt": "Paint {goal}", "inputs": [{"name": "goal"}],
            "outputs": [{"name": "picture"}], "parse_mode": "str", "tools": ["ask_human"]}
    graph = WorkFlowGraph.from_dict({"goal": "paint", "nodes": [node("paint", ["goal"], ["picture"], [spec])]})
    first, second = shipping(), shipping()
    try:
        paused = WorkFlowExecutor(kernel=kernel, executor=first, checkpoints=db).run(graph, {"goal": "a wall"},
                                                                                     run_id="r")
        assert [(a.node, a.question) for a in paused.interrupts] == [("paint", "Which color?")]
        assert first.keys == ["r/paint"]
        result = WorkFlowExecutor(kernel=kernel, executor=second, checkpoints=db).resume("r", graph=graph, answer="red")
        assert result.ok and result.trace[-1].answers == ["red"] and second.keys == ["r/paint"]
    finally:
        first.worker.close()
        second.worker.close()
