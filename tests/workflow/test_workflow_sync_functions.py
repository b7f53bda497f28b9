"""Plain sync function agents run in threads, so independent nodes overlap (issue 17, item 11)."""

import threading

from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

from .conftest import edges, node


def test_independent_sync_function_nodes_run_at_the_same_time(kernel):
    """Two sync functions on parallel branches are both running at once: each waits for the other to start."""
    both_started = threading.Barrier(2, timeout=20)
    threads = []

    def left(topic):
        threads.append(threading.current_thread())
        both_started.wait()  # would time out (BrokenBarrierError) if the nodes ran one after the other
        return {"a": topic + "-left"}

    def right(topic):
        threads.append(threading.current_thread())
        both_started.wait()
        return {"b": topic + "-right"}

    def join(a, b):
        return {"out": f"{a}+{b}"}

    graph = WorkFlowGraph.from_dict({
        "name": "fan", "goal": "two branches then a join", "inputs": [{"name": "topic"}],
        "nodes": [node("L", ["topic"], ["a"]), node("R", ["topic"], ["b"]), node("J", ["a", "b"], ["out"])],
        "edges": edges(("L", "J"), ("R", "J"))})
    graph.node("L").agents = [left]
    graph.node("R").agents = [right]
    graph.node("J").agents = [join]
    result = WorkFlowExecutor(kernel=kernel).run(graph, {"topic": "x"})
    assert result.outputs["out"] == "x-left+x-right"
    assert threading.main_thread() not in threads
