"""CLI: zagent workflow generate / show / run, with the example workflow and a scripted model."""

import json
import os

from zagent.plugins.cli import main
from zagent.plugins.workflow import WorkFlowGraph

from .conftest import diamond_dict
from .replies import router

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "workflow_report.json")


def test_show_prints_a_text_diagram(kernel, capsys):
    """show prints every node with its inputs and outputs."""
    assert main(["workflow", "show", EXAMPLE], kernel=kernel) == 0
    out = capsys.readouterr().out
    assert "[outline] Outline the report" in out and "background, findings -> report" in out


def test_show_mermaid(kernel, capsys):
    """show --mermaid prints a Mermaid flowchart."""
    assert main(["workflow", "show", EXAMPLE, "--mermaid"], kernel=kernel) == 0
    assert capsys.readouterr().out.startswith("flowchart TD")


def test_show_reports_problems(kernel, tmp_path, capsys):
    """show of an invalid workflow exits 1 and lists its problems on stderr."""
    data = diamond_dict()
    data["nodes"][3]["inputs"].append({"name": "mystery"})
    path = tmp_path / "bad.json"
    WorkFlowGraph.from_dict(data).save(path)
    assert main(["workflow", "show", str(path)], kernel=kernel) == 1
    assert "input 'mystery' of node 'D'" in capsys.readouterr().err


def test_run_the_example_offline_with_progress(kernel, capsys):
    """run executes the example with the offline test model, progress on stderr, outputs on stdout."""
    assert main(["workflow", "run", EXAMPLE, "--input", "topic=solar power", "--json"], kernel=kernel) == 0
    captured = capsys.readouterr()
    assert list(json.loads(captured.out)) == ["report"]
    assert "+ outline: done" in captured.err and "workflow finished" in captured.err


def test_run_resumes_by_run_id(kernel, tmp_path, capsys):
    """Running again with the same --run-id and --checkpoints resumes: nothing is re-run."""
    args = ["workflow", "run", EXAMPLE, "-i", "topic=solar", "--checkpoints", str(tmp_path / "runs.db"),
            "--run-id", "r1"]
    assert main(args, kernel=kernel) == 0
    capsys.readouterr()
    assert main(args, kernel=kernel) == 0
    err = capsys.readouterr().err
    assert "resuming (4 done)" in err and "> outline" not in err


def test_generate_writes_a_runnable_workflow(kernel, tmp_path, capsys):
    """generate plans, reviews and generates agents with the given model and writes the workflow file."""
    kernel.llm("scripted:cli").replies.extend([router()] * 20)
    path = tmp_path / "wf.json"
    code = main(["workflow", "generate", "Write a short report on solar power", "-o", str(path),
                 "--model", "scripted:cli"], kernel=kernel)
    assert code == 0
    graph = WorkFlowGraph.load(path)
    assert len(graph.nodes) == 5 and all(n.agents for n in graph.nodes)
    err = capsys.readouterr().err
    assert "plan: 5 sub-tasks" in err and "review round 1: 0 suggestion(s)" in err


def test_generate_refuses_a_short_goal(kernel, tmp_path, capsys):
    """A too-short goal exits 1 with the reason."""
    code = main(["workflow", "generate", "tetris", "-o", str(tmp_path / "wf.json"), "-m", "scripted:x"],
                kernel=kernel)
    assert code == 1 and "too short" in capsys.readouterr().err
