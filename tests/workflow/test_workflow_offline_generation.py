"""Workflow generation works offline with the test model, and the generator sees the whole workflow (issue 17, 12 and 14)."""

import json
import os
import subprocess
import sys

from zagent.agentkit import fields as zfields
from zagent.plugins.workflow import AgentGenerator, TaskPlanner, build_from_plan
from zagent.plugins.workflow.planner import EXAMPLE_PLAN, check_plan, parse_plan

from .replies import PLAN, fenced

GOAL = "Write a short report about bees"


def cli(*args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "ZAGENT_MODEL"}
    return subprocess.run([sys.executable, "-m", "zagent.plugins.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


def test_planner_output_has_an_item_schema(kernel):
    """The planner's sub_tasks output is an array of objects with name/description/inputs/outputs properties."""
    planner = TaskPlanner(kernel=kernel, llm="test:offline")
    schema = zfields.json_schema(planner.agent.action().output_spec)
    items = schema["properties"]["sub_tasks"]["items"]
    assert items["type"] == "object"
    assert {"name", "description", "inputs", "outputs"} <= set(items["properties"])
    assert items["required"] == ["name"]


def test_example_plan_follows_the_planning_rules():
    """The plan shown to models as the schema's example passes the planner's own checks."""
    plan = parse_plan(GOAL, EXAMPLE_PLAN)
    assert check_plan(plan) == [] and len(plan.sub_tasks) == 3


def test_offline_model_produces_a_valid_plan(kernel):
    """With the offline test model, the planner returns a plan instead of failing after retries."""
    plan = TaskPlanner(kernel=kernel, llm="test:offline").plan(GOAL)
    assert [t.name for t in plan.sub_tasks] == ["collect_facts", "write_draft", "polish"]


def test_generator_is_shown_the_whole_workflow(kernel):
    """The agent generator's prompt lists every sub-task, with the one being designed marked '>>'."""
    graph = build_from_plan(parse_plan("Write a short report on solar power", PLAN["sub_tasks"]))
    raw = {"name": "Researcher", "prompt": "Research {goal}."}
    llm = kernel.llm("scripted:gen", replies=[fenced({"generated_agents": [raw]})])
    node = graph.node("research")
    AgentGenerator(kernel=kernel, llm=llm).generate("solar report", node, graph)
    prompt = llm.requests[0].messages[-1].content
    for other in graph.nodes:
        assert other.name in prompt
    assert ">> research:" in prompt


def test_generate_then_run_offline_from_the_cli(tmp_path):
    """`zagent workflow generate` then `zagent workflow run` succeed offline, without ZAGENT_MODEL."""
    out = tmp_path / "wf.json"
    gen = cli("workflow", "generate", GOAL, "-o", str(out), "-q", cwd=tmp_path)
    assert gen.returncode == 0, gen.stderr
    data = json.loads(out.read_text())
    assert len(data["nodes"]) == 3 and all(n.get("agents") for n in data["nodes"])
    run = cli("workflow", "run", str(out), "--input", f"goal={GOAL}", "--json", "-q", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "final_text" in run.stdout
