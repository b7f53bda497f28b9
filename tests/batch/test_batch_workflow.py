"""Workflows on executors: node runs handed over as units, and batches of whole workflow runs."""

import pathlib

import pytest
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph, WorkFlowFailed

from .shipping import ShippingExecutor

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "workflow_report.json"


def test_node_runs_go_to_the_executor_and_match_local(kernel):
    """Each node run is one unit (key run_id/node) shipped with its agents' specs; outputs equal the local run."""
    graph = WorkFlowGraph.load(EXAMPLE)
    local = WorkFlowExecutor(kernel=kernel).run(graph, {"topic": "tides"})
    ex = ShippingExecutor()
    shipped = WorkFlowExecutor(kernel=kernel, executor=ex).run(graph, {"topic": "tides"})
    assert shipped.outputs == local.outputs and shipped.values == local.values
    assert shipped.usage == local.usage and local.usage.calls == len(graph.nodes)
    assert sorted(k.split("/", 1)[1] for k in ex.keys) == sorted(graph.node_names)


def test_lost_node_run_is_retried(kernel):
    """A node whose remote worker was lost runs again (even with retries=0); the run finishes."""
    graph = WorkFlowGraph.load(EXAMPLE)
    ex = ShippingExecutor()
    result = WorkFlowExecutor(kernel=kernel, executor=ex, retries=0)
    ex.lose = {"run-x/outline": 1}
    done = result.run(graph, {"topic": "tides"}, run_id="run-x")
    assert done.ok and ex.keys.count("run-x/outline") == 2


def test_callable_agents_cannot_run_remotely(kernel):
    """A node whose agent is a Python function fails on a remote executor with an error naming the agent."""
    def shout(text):
        return {"loud": text.upper()}

    graph = WorkFlowGraph.from_dict({"name": "fn", "goal": "shout a text", "inputs": [{"name": "text"}],
                                     "nodes": [{"name": "n", "inputs": [{"name": "text"}],
                                                "outputs": [{"name": "loud"}], "agents": [shout]}]})
    assert WorkFlowExecutor(kernel=kernel).run(graph, {"text": "hi"}).outputs == {"loud": "HI"}
    with pytest.raises(WorkFlowFailed, match="agent 'shout' of node 'n' is a Python object"):
        WorkFlowExecutor(kernel=kernel, executor=ShippingExecutor()).run(graph, {"text": "hi"})


def test_batch_of_workflow_runs_local_equals_shipped(kernel):
    """Kernel.batch(graph, inputs) runs the whole graph per item; shipped items give the local results."""
    graph = WorkFlowGraph.load(EXAMPLE)
    inputs = [{"id": t, "topic": t} for t in ("tides", "bees", "glass")]
    local = kernel.batch(graph, inputs).results
    shipped = kernel.batch(graph, inputs, executor=ShippingExecutor()).results
    assert [(r["output"], r["usage"]) for r in local] == [(r["output"], r["usage"]) for r in shipped]
    assert all(r["ok"] and r["output"]["report"] and r["usage"]["calls"] == 4 for r in local)


def test_workflow_run_command_takes_an_executor(kernel, capsys):
    """``zagent workflow run --executor NAME`` hands the nodes to that executor; an unknown name is an error."""
    from zagent.plugins.cli import main

    assert main(["workflow", "run", str(EXAMPLE), "-i", "topic=tides", "-q", "--executor", "local"], kernel=kernel) == 0
    assert "## report" in capsys.readouterr().out
    assert main(["workflow", "run", str(EXAMPLE), "-i", "topic=tides", "-q", "--executor", "nope"], kernel=kernel) == 1
    assert "unknown executor 'nope'" in capsys.readouterr().err


def test_shipped_workflow_carries_no_secret(kernel):
    """An inline agent's API key in a workflow never goes into the payload a remote worker gets."""
    data = WorkFlowGraph.load(EXAMPLE).to_dict()
    data["nodes"][0]["agents"][0]["llm_config"] = {"model": "openai:gpt-x", "api_key": "sk-very-secret"}
    job = WorkFlowGraph.from_dict(data).batch_job(kernel)
    _, payload = job.unit("k1", {"topic": "x"}).remote_parts("ray")
    assert "sk-very-secret" not in repr(payload)
    assert payload["graph"]["nodes"][0]["agents"][0]["llm_config"] == {"model": "openai:gpt-x"}


def test_checkpoints_stay_with_the_driver_and_resume_after_lost_workers(kernel, tmp_path):
    """Nodes lost past their retries fail the run; the driver's checkpoints resume it without re-running done nodes."""
    graph = WorkFlowGraph.load(EXAMPLE)
    db = tmp_path / "runs.db"
    lost = ShippingExecutor(lose={"run-z/background": 3})
    with pytest.raises(WorkFlowFailed, match="UnitLost"):
        WorkFlowExecutor(kernel=kernel, executor=lost, checkpoints=str(db), on_error="continue").run(
            graph, {"topic": "tides"}, run_id="run-z")
    again = ShippingExecutor()
    result = WorkFlowExecutor(kernel=kernel, executor=again, checkpoints=str(db)).run(
        graph, {"topic": "tides"}, run_id="run-z")
    assert result.ok and "outline" in result.resumed and "run-z/outline" not in again.keys
    assert "run-z/background" in again.keys
