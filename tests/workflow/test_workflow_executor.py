"""WorkFlowExecutor: parallelism, values by name, retries, failure policies, resume, routing, loops, reducers."""

import asyncio

import pytest
from zagent.plugins.manager import AgentManager
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowFailed, WorkFlowGraph

from .conftest import diamond_dict, edges, node

HERE = __name__
GUARD = 10  # seconds: only a deadlock guard, never asserted on


def diamond(**agents):
    """The diamond graph with Python functions as the agents of A, B, C, D (defaults pass values on)."""
    graph = WorkFlowGraph.from_dict(diamond_dict())
    defaults = {"A": lambda goal: {"x": f"x({goal})"}, "B": lambda x: {"y": f"y({x})"},
                "C": lambda x: {"z": f"z({x})"}, "D": lambda y, z: {"out": f"{y}+{z}"}}
    defaults.update(agents)
    for n in graph.nodes:
        fn = defaults[n.name]
        fn.__name__ = f"agent_{n.name}"
        n.agents = [fn]
    return graph


def test_values_flow_by_name_along_the_edges(kernel):
    """Each node gets the values named by its inputs; the last node's outputs are the result's outputs."""
    result = WorkFlowExecutor(kernel=kernel).run(diamond(), {"goal": "g"})
    assert result.ok
    assert result.outputs == {"out": "y(x(g))+z(x(g))"}
    assert [t.node for t in result.trace][0] == "A" and result.trace[-1].node == "D"


def test_middle_nodes_of_a_diamond_run_in_parallel(kernel, events):
    """B and C both start before either ends: each waits for the other to have started."""
    b_started, c_started = asyncio.Event(), asyncio.Event()

    async def b(x):
        b_started.set()
        await asyncio.wait_for(c_started.wait(), GUARD)
        return {"y": "y"}

    async def c(x):
        c_started.set()
        await asyncio.wait_for(b_started.wait(), GUARD)
        return {"z": "z"}

    result = WorkFlowExecutor(kernel=kernel).run(diamond(B=b, C=c), {"goal": "g"})
    assert result.outputs == {"out": "y+z"}
    order = [(t, d["node"]) for t, d in events.seen if t in ("node_start", "node_end")]
    assert order.index(("node_start", "C")) < order.index(("node_end", "B"))
    assert order.index(("node_start", "B")) < order.index(("node_end", "C"))


def test_concurrency_is_bounded(kernel):
    """With max_concurrency=1 the middle nodes never overlap."""
    running, peak = [0], [0]

    async def work(out):
        running[0] += 1
        peak[0] = max(peak[0], running[0])
        await asyncio.sleep(0)
        running[0] -= 1
        return {out: out}

    async def b(x):
        return await work("y")

    async def c(x):
        return await work("z")

    WorkFlowExecutor(kernel=kernel, max_concurrency=1).run(diamond(B=b, C=c), {"goal": "g"})
    assert peak[0] == 1


def test_failed_node_is_retried(kernel, events):
    """A node failing once succeeds on its retry; the trace counts two attempts."""
    calls = []

    def c(x):
        calls.append(x)
        if len(calls) == 1:
            raise RuntimeError("flaky")
        return {"z": "z"}

    result = WorkFlowExecutor(kernel=kernel, retries=1).run(diamond(C=c), {"goal": "g"})
    assert result.ok and len(calls) == 2
    assert next(t for t in result.trace if t.node == "C").attempts == 2
    assert events.of("node_retry")[0]["node"] == "C"


def test_each_attempt_of_a_node_is_a_span_under_the_workflow(kernel):
    """node_start/node_retry pair for the failed attempt, node_start/node_end for the retry: two spans, one parent."""
    seen = []

    class Spans:
        def zagent_event(self, event):
            seen.append(event)

    kernel.add_plugin(Spans())
    calls = []

    def c(x):
        calls.append(x)
        if len(calls) == 1:
            raise RuntimeError("flaky")
        return {"z": "z"}

    WorkFlowExecutor(kernel=kernel, retries=1).run(diamond(C=c), {"goal": "g"})
    of_c = [e for e in seen if e.type.startswith("node_") and e.data.get("node") == "C"]
    assert [e.type for e in of_c] == ["node_start", "node_retry", "node_start", "node_end"]
    assert of_c[0].span_id == of_c[1].span_id != of_c[2].span_id == of_c[3].span_id
    assert of_c[1].data["outcome"] == "error" and of_c[3].data["outcome"] == "ok"
    workflow = next(e for e in seen if e.type == "workflow_start").span_id
    assert {e.parent_id for e in of_c} == {workflow}


def test_fail_fast_cancels_running_nodes(kernel):
    """With fail_fast the first failure cancels the other running nodes and the run raises with the partial result."""
    async def b(x):
        raise RuntimeError("B broke")

    async def c(x):
        await asyncio.Event().wait()  # would never finish on its own

    with pytest.raises(WorkFlowFailed, match="B broke") as info:
        WorkFlowExecutor(kernel=kernel).run(diamond(B=b, C=c), {"goal": "g"})
    result = info.value.result
    assert result.status == "failed" and list(result.errors) == ["B"]
    assert result.node_status("C") == "cancelled" and result.node_status("D") is None


def test_continue_policy_finishes_independent_nodes(kernel):
    """With on_error='continue' independent nodes finish; dependents of the failed node are skipped."""
    def b(x):
        raise RuntimeError("B broke")

    with pytest.raises(WorkFlowFailed) as info:
        WorkFlowExecutor(kernel=kernel, on_error="continue").run(diamond(B=b), {"goal": "g"})
    result = info.value.result
    assert result.node_status("C") == "done" and result.values["z"] == "z(x(g))"
    assert result.node_status("D") == "skipped"


def test_missing_output_fails_the_node(kernel):
    """An agent that does not give a declared output fails its node with a message naming it."""
    with pytest.raises(WorkFlowFailed, match="no value for output"):
        WorkFlowExecutor(kernel=kernel).run(diamond(C=lambda x: {"other": 1}), {"goal": "g"})


def test_resume_does_not_rerun_finished_nodes(kernel, tmp_path):
    """After a failure, running again with the same run id re-runs only what did not finish."""
    calls = {"A": 0, "B": 0, "C": 0, "D": 0}
    broken = [True]

    def counted(name, out, fail=False):
        def fn(**inputs):
            calls[name] += 1
            if fail and broken[0]:
                raise RuntimeError("C is down")
            return {out: name}
        return fn

    agents = {"A": counted("A", "x"), "B": counted("B", "y"), "C": counted("C", "z", fail=True),
              "D": counted("D", "out")}
    ex = WorkFlowExecutor(kernel=kernel, checkpoints=str(tmp_path / "runs.db"), on_error="continue")
    with pytest.raises(WorkFlowFailed):
        ex.run(diamond(**agents), {"goal": "g"}, run_id="run-1")
    assert calls == {"A": 1, "B": 1, "C": 1, "D": 0}
    broken[0] = False
    result = ex.run(diamond(**agents), {"goal": "g"}, run_id="run-1")
    assert result.ok and calls == {"A": 1, "B": 1, "C": 2, "D": 1}
    assert sorted(result.resumed) == ["A", "B"]


def test_unknown_run_id_starts_a_new_run(kernel, tmp_path):
    """A run id without a checkpoint is simply a fresh run under that id."""
    ex = WorkFlowExecutor(kernel=kernel, checkpoints=str(tmp_path / "runs.db"))
    result = ex.run(diamond(), {"goal": "g"}, run_id="fresh")
    assert result.run_id == "fresh" and result.resumed == []


def test_run_id_without_a_checkpoint_store_warns_that_nothing_resumes(kernel, caplog):
    """A run id given to an executor without checkpoints runs fresh and says there was nothing to resume from."""
    result = WorkFlowExecutor(kernel=kernel).run(diamond(), {"goal": "g"}, run_id="wanted-resume")
    assert result.run_id == "wanted-resume" and result.resumed == []
    assert "no checkpoints store, so there is nothing to resume" in caplog.text


def test_missing_workflow_input_is_a_clear_error(kernel):
    """Running without a required workflow input names it."""
    from zagent import ConfigError

    with pytest.raises(ConfigError, match="needs input"):
        WorkFlowExecutor(kernel=kernel).run(diamond(), {})


def test_node_without_agents_cannot_run(kernel):
    """A node with no agents is reported before anything runs."""
    from zagent.plugins.workflow import WorkFlowError

    graph = WorkFlowGraph.from_dict(diamond_dict())
    with pytest.raises(WorkFlowError, match="node 'A' has no agents"):
        WorkFlowExecutor(kernel=kernel).run(graph, {"goal": "g"})


# -- agents from the manager ---------------------------------------------------------


class Counter:
    """An agent object: counts calls and how many run at once."""

    def __init__(self, name, out):
        self.name, self.out, self.calls, self.running, self.peak = name, out, 0, 0, 0

    async def aexecute(self, *, inputs, ctx=None):
        self.calls += 1
        self.running += 1
        self.peak = max(self.peak, self.running)
        await asyncio.sleep(0)
        self.running -= 1
        return {self.out: f"{self.name}:{sorted(inputs)}"}


def test_nodes_naming_a_manager_agent_use_that_instance(kernel):
    """A node listing an agent by name runs the very agent registered in the manager."""
    manager = AgentManager(kernel=kernel)
    worker = manager.add_agent(Counter("Worker", "z"))
    graph = diamond()
    graph.node("C").agents = ["Worker"]
    result = WorkFlowExecutor(kernel=kernel, manager=manager).run(graph, {"goal": "g"})
    assert worker.calls == 1 and result.values["z"] == "Worker:['x']"


def test_an_agent_shared_by_parallel_nodes_runs_one_at_a_time(kernel):
    """Two parallel nodes using one agent take turns (the agent is RUNNING for one of them)."""
    manager = AgentManager(kernel=kernel)
    shared = manager.add_agent(Counter("Shared", "y"))
    graph = diamond()
    graph.node("B").agents = ["Shared"]
    graph.node("C").agents = [Counter("Other", "z")]
    graph.node("C").outputs[0].name = "z"
    WorkFlowExecutor(kernel=kernel, manager=manager).run(graph, {"goal": "g"})
    assert shared.peak == 1


# -- routing, loops and state ------------------------------------------------------------


def pick_by_x(values):
    return "B" if values["x"] == "left" else "C"


def branching(kernel, x):
    data = diamond_dict(edges=edges(("B", "D"), ("C", "D")),
                        conditional_edges=[{"source": "A", "router": f"{HERE}:pick_by_x", "targets": ["B", "C"]}])
    data["nodes"][3]["inputs"] = [{"name": "y", "required": False}, {"name": "z", "required": False}]
    graph = WorkFlowGraph.from_dict(data)
    fns = {"A": lambda goal: {"x": x}, "B": lambda x: {"y": "went left"}, "C": lambda x: {"z": "went right"},
           "D": lambda y=None, z=None: {"out": y or z}}
    for n in graph.nodes:
        fns[n.name].__name__ = f"agent_{n.name}"
        n.agents = [fns[n.name]]
    return graph


def test_conditional_edge_runs_only_the_chosen_branch(kernel):
    """The router's choice runs; the other branch is skipped and the join still runs."""
    result = WorkFlowExecutor(kernel=kernel).run(branching(kernel, "right"), {"goal": "g"})
    assert result.node_status("B") == "skipped" and result.node_status("C") == "done"
    assert result.outputs == {"out": "went right"}
    assert next(t for t in result.trace if t.node == "A").route == ["C"]


def test_router_choosing_an_unknown_target_fails_the_node(kernel):
    """A router may only choose among its declared targets."""
    graph = branching(kernel, "left")
    graph.conditional_edges[0].router = lambda values: "Z"
    with pytest.raises(WorkFlowFailed, match="may only choose among B, C"):
        WorkFlowExecutor(kernel=kernel).run(graph, {"goal": "g"})


def approve_third(values):
    return "publish" if values["approved"] else "write"


def loop_graph(max_loops=5, on_max_loops=None, approve_at=3):
    data = {"name": "loop", "goal": "draft until approved",
            "nodes": [node("write", ["goal"], ["draft", "drafts"]), node("review", ["draft"], ["feedback", "approved"]),
                      node("publish", ["draft"], ["final"])],
            "edges": edges(("write", "review")),
            "conditional_edges": [{"source": "review", "router": f"{HERE}:approve_third",
                                   "targets": ["write", "publish"], "max_loops": max_loops,
                                   "on_max_loops": on_max_loops}],
            "state": [{"name": "drafts", "reducer": "append"}]}
    data["nodes"][0]["inputs"].append({"name": "feedback", "required": False})
    graph = WorkFlowGraph.from_dict(data)
    count = [0]

    def write(goal, feedback=None):
        count[0] += 1
        return {"draft": f"v{count[0]}", "drafts": f"v{count[0]}"}

    def review(draft):
        return {"feedback": f"improve {draft}", "approved": draft == f"v{approve_at}"}

    def publish(draft):
        return {"final": draft.upper()}

    for n, fn in zip(graph.nodes, (write, review, publish), strict=True):
        n.agents = [fn]
    return graph


def test_bounded_loop_repeats_until_the_router_exits(kernel, events):
    """A router sending work back upstream repeats the loop; state written each pass accumulates."""
    result = WorkFlowExecutor(kernel=kernel).run(loop_graph(), {"goal": "g"})
    assert result.outputs == {"final": "V3"}
    assert result.values["drafts"] == ["v1", "v2", "v3"]
    assert [d["iteration"] for d in events.of("workflow_loop")] == [1, 2]
    assert [(t.node, t.iteration) for t in result.trace if t.node == "write"] == [("write", 0), ("write", 1), ("write", 2)]


def test_loop_bound_reached_fails_without_an_exit(kernel):
    """Past max_loops with no on_max_loops the run fails, naming the loop and its bound."""
    with pytest.raises(WorkFlowFailed, match=r"loop review->write reached max_loops=1"):
        WorkFlowExecutor(kernel=kernel).run(loop_graph(max_loops=1), {"goal": "g"})


def test_loop_bound_reached_takes_on_max_loops(kernel):
    """Past max_loops the on_max_loops target is taken instead."""
    result = WorkFlowExecutor(kernel=kernel).run(loop_graph(max_loops=1, on_max_loops="publish"), {"goal": "g"})
    assert result.outputs == {"final": "V2"}


def longest(old, new):
    return new if len(new) > len(old or "") else old


@pytest.mark.parametrize("reducer, expected", [
    ("append", ["from B", "from C"]),
    ("merge", {"B": 1, "C": 1}),
    (f"{HERE}:longest", "from B!!"),
])
def test_state_field_merges_writes_through_its_reducer(kernel, reducer, expected):
    """Parallel writes to a state field are merged by its reducer (append, merge or custom)."""
    data = diamond_dict(state=[{"name": "notes", "reducer": reducer}])
    data["nodes"][1]["outputs"].append({"name": "notes"})
    data["nodes"][2]["outputs"].append({"name": "notes"})
    graph = WorkFlowGraph.from_dict(data)
    value = {"append": ("from B", "from C"), "merge": ({"B": 1}, {"C": 1})}.get(reducer, ("from B!!", "C"))
    fns = {"A": lambda goal: {"x": 1}, "B": lambda x: {"y": 1, "notes": value[0]},
           "C": lambda x: {"z": 1, "notes": value[1]}, "D": lambda y, z: {"out": 1}}
    for n in graph.nodes:
        fns[n.name].__name__ = f"agent_{n.name}"
        n.agents = [fns[n.name]]
    result = WorkFlowExecutor(kernel=kernel).run(graph, {"goal": "g"})
    notes = result.values["notes"]
    assert (sorted(notes) if isinstance(notes, list) else notes) == expected


def test_replace_reducer_keeps_the_last_write(kernel):
    """The replace reducer keeps the latest value written."""
    data = diamond_dict(state=[{"name": "y", "reducer": "replace"}])
    data["edges"].append({"source": "B", "target": "C"})
    data["nodes"][2]["outputs"].append({"name": "y"})
    graph = WorkFlowGraph.from_dict(data)
    fns = {"A": lambda goal: {"x": 1}, "B": lambda x: {"y": "first"}, "C": lambda x: {"z": 1, "y": "second"},
           "D": lambda y, z: {"out": y}}
    for n in graph.nodes:
        fns[n.name].__name__ = f"agent_{n.name}"
        n.agents = [fns[n.name]]
    assert WorkFlowExecutor(kernel=kernel).run(graph, {"goal": "g"}).outputs == {"out": "second"}


def test_arun_in_async_code(kernel):
    """arun works inside a running event loop (here one started by asyncio.run)."""
    result = asyncio.run(WorkFlowExecutor(kernel=kernel).arun(diamond(), {"goal": "g"}))
    assert result.ok


def test_checkpoint_is_saved_after_each_node(kernel, tmp_path):
    """The checkpoint store holds one step per finished node, plus the final state."""
    store = kernel.memory("checkpoints", path=str(tmp_path / "runs.db"))
    WorkFlowExecutor(kernel=kernel, checkpoints=store).run(diamond(), {"goal": "g"}, run_id="steps")
    assert store.steps("steps") == [1, 2, 3, 4, 5]
    [info] = store.list(kind="workflow")
    assert info.run_id == "steps" and info.metadata == {"workflow": "diamond", "status": "finished"}


def test_run_interrupted_inside_a_loop_resumes_at_the_same_pass(kernel, tmp_path):
    """A failure on the second pass of a loop resumes there: finished work and the loop count are kept."""
    graph = loop_graph()
    write, review, _publish = (n.agents[0] for n in graph.nodes)
    calls = {"write": 0, "review": 0}
    down = [True]

    def counted_write(goal, feedback=None):
        calls["write"] += 1
        return write(goal, feedback)

    def flaky_review(draft):
        calls["review"] += 1
        if draft == "v2" and down[0]:
            raise RuntimeError("reviewer is down")
        return review(draft)

    graph.node("write").agents = [counted_write]
    graph.node("review").agents = [flaky_review]
    ex = WorkFlowExecutor(kernel=kernel, checkpoints=str(tmp_path / "runs.db"))
    with pytest.raises(WorkFlowFailed, match="reviewer is down"):
        ex.run(graph, {"goal": "g"}, run_id="loop-1")
    assert calls == {"write": 2, "review": 2}
    down[0] = False
    result = ex.run(graph, {"goal": "g"}, run_id="loop-1")
    assert result.outputs == {"final": "V3"} and result.values["drafts"] == ["v1", "v2", "v3"]
    assert calls == {"write": 3, "review": 4}


def test_run_events_frame_the_node_events(kernel, events):
    """workflow_start and workflow_end frame the run's node events."""
    WorkFlowExecutor(kernel=kernel).run(diamond(), {"goal": "g"}, run_id="ev-1")
    types = [t for t, _ in events.seen if t.startswith(("workflow_", "node_"))]
    assert types[0] == "workflow_start" and types[-1] == "workflow_end"
    assert types.count("node_end") == 4 and events.of("workflow_end")[0]["status"] == "finished"


def test_node_waiting_too_long_for_a_busy_agent_fails(kernel):
    """A node whose agent stays RUNNING elsewhere past agent_timeout fails with the agent's name."""
    manager = AgentManager(kernel=kernel)
    manager.add_agent(Counter("Busy", "z"))
    manager.acquire("Busy")  # someone else is using it and does not give it back
    graph = diamond()
    graph.node("C").agents = ["Busy"]
    ex = WorkFlowExecutor(kernel=kernel, manager=manager, agent_timeout=0.01)
    with pytest.raises(WorkFlowFailed, match="agent 'Busy' stayed running"):
        ex.run(graph, {"goal": "g"})


def test_a_workflow_cancelled_from_outside_cancels_its_nodes_and_ends_cancelled(kernel, events):
    """A run whose task is cancelled (``wait_for``, a task group) cancels the nodes still running before the cancel
    returns (none goes on calling models or tools), and sends ``workflow_end`` with status ``cancelled``."""
    started, ended = [], []

    async def b(x):
        started[0].set()
        try:
            await asyncio.Event().wait()
        finally:
            ended.append("B")

    async def main():
        started.append(asyncio.Event())
        task = asyncio.ensure_future(WorkFlowExecutor(kernel=kernel).arun(diamond(B=b), {"goal": "g"}))
        await started[0].wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return list(ended)

    assert asyncio.run(main()) == ["B"]
    end = events.of("workflow_end")
    assert len(end) == 1 and end[0]["status"] == end[0]["outcome"] == "cancelled"
