"""Round ten, model-written plans and workflows (``TaskPlanner``, ``AgentGenerator``, ``WorkFlowGraph``):
cycles, thousands of sub-tasks or agents, unknown tools, edges to nowhere, inputs read from a later node.

Each test names the attack and the defence; "got through" ones failed on the code before their fix.
"""

import json

import msgspec
import pytest

from zagent import ConfigError, Kernel
from zagent.plugins.workflow.agents import AgentGenerator
from zagent.plugins.workflow.errors import GenerationError
from zagent.plugins.workflow.graph import WorkFlowGraph, WorkFlowNode
from zagent.plugins.workflow.planner import MAX_SUB_TASKS, TaskPlanner

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.manager",
           "zagent.plugins.workflow"]
GOAL = "Write a short report on solar power"


def _kernel():
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    k.add_tool(lambda text: len(text.split()), name="word_count", description="Count words.")
    return k


def _chain(n):
    tasks = [{"name": "t0", "inputs": ["goal"], "outputs": ["o0"]}]
    return tasks + [{"name": f"t{i}", "inputs": [f"o{i - 1}"], "outputs": [f"o{i}"]} for i in range(1, n)]


def _plan(tasks):
    k = _kernel()
    return TaskPlanner(kernel=k, llm=k.llm("scripted:planner", replies=[json.dumps({"sub_tasks": tasks})])).plan(GOAL)


def test_a_plan_of_thousands_of_sub_tasks_is_refused():
    """Attack (got through): the planner's model answers 5,000 chained sub-tasks; each becomes a node whose agents
    are generated (one model call each) and run. Defence: a plan of more than ``MAX_SUB_TASKS`` sub-tasks is a
    GenerationError saying how many and asking for fewer (the generator asks again)."""
    with pytest.raises(GenerationError, match=f"more than {MAX_SUB_TASKS}"):
        _plan(_chain(5000))
    assert len(_plan(_chain(MAX_SUB_TASKS)).sub_tasks) == MAX_SUB_TASKS


def test_a_plan_reading_a_later_output_is_refused():
    """Attack (held): a cycle written as a plan: t0's output feeds t1, t1 reads t2's output, t2 reads t1's.
    Defence: each input must be the goal or an earlier output: a GenerationError naming the sub-task."""
    tasks = [{"name": "t0", "inputs": ["goal"], "outputs": ["a"]}, {"name": "t1", "inputs": ["c"], "outputs": ["b"]},
             {"name": "t2", "inputs": ["b"], "outputs": ["c"]}]
    with pytest.raises(GenerationError, match="'t1' takes c"):
        _plan(tasks)


def test_generated_agents_per_node_are_bounded():
    """Attack (got through): the agent generator answers 300 generated agents for one node; a node calls each of
    its agents in turn (300 model calls a node). Defence: more than ``MAX_NODE_AGENTS`` is a GenerationError."""
    from zagent.plugins.workflow.agents import MAX_NODE_AGENTS

    k = _kernel()
    agent = {"name": "SummaryAgent", "prompt": "Summarise {goal}", "outputs": [{"name": "o0"}]}
    reply = json.dumps({"generated_agents": [dict(agent, name=f"A{i}Agent") for i in range(300)]})
    gen = AgentGenerator(kernel=k, llm=k.llm("scripted:gen", replies=[reply]))
    node = msgspec.convert({"name": "t0", "inputs": [{"name": "goal"}], "outputs": [{"name": "o0"}]}, WorkFlowNode)
    with pytest.raises(GenerationError, match=f"more than {MAX_NODE_AGENTS}"):
        gen.generate(GOAL, node)


@pytest.mark.parametrize("tool", ["steal", "os:system", "zagent.plugins.batch:run", "word_count\u200b"])
def test_a_generated_agent_naming_a_tool_not_offered_is_refused(tool):
    """Attack (held): a generated agent's ``tool_names`` names a tool outside the generator's ``tools`` (an import
    path, a look-alike). Defence: ``repair_spec`` raises GenerationError listing the available tools."""
    k = _kernel()
    reply = json.dumps({"generated_agents": [{"name": "XAgent", "prompt": "Do {goal}", "tool_names": [tool]}]})
    gen = AgentGenerator(kernel=k, llm=k.llm("scripted:gen", replies=[reply]), tools=["word_count"])
    node = msgspec.convert({"name": "t0", "inputs": [{"name": "goal"}], "outputs": [{"name": "o0"}]}, WorkFlowNode)
    with pytest.raises(GenerationError, match="unknown tool"):
        gen.generate(GOAL, node)


@pytest.mark.parametrize("edges", [[{"source": "a", "target": "nowhere"}],
                                   [{"source": "a", "target": "b"}, {"source": "b", "target": "a"}]])
def test_a_workflow_with_an_edge_to_nowhere_or_a_cycle_does_not_validate(edges):
    """Attack (held): a model-written workflow with an edge to a missing node, or a plain cycle between two
    nodes. Defence: ``validate`` raises, naming the problem."""
    nodes = [{"name": "a", "inputs": [{"name": "goal"}], "outputs": [{"name": "x"}]},
             {"name": "b", "inputs": [{"name": "x"}], "outputs": [{"name": "y"}]}]
    with pytest.raises((ConfigError, Exception)) as info:
        WorkFlowGraph.from_dict({"name": "w", "goal": GOAL, "nodes": nodes, "edges": edges}).validate()
    assert "nowhere" in str(info.value) or "cycle" in str(info.value).lower() or "loop" in str(info.value).lower()
