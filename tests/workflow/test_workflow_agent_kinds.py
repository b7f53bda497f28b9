"""Any agent kind as a workflow node: ReAct (chat) agents, their tools and the run's typed deps (``deps=``)."""

from dataclasses import dataclass

import pytest
from zagent import Kernel, RunContext
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowFailed, WorkFlowGraph

from .conftest import PLUGINS, edges, node


@pytest.fixture
def kernel():
    """A fresh offline kernel with the workflow plugins and the react plugin."""
    k = Kernel(plugins=[*PLUGINS, "zagent.plugins.react"], entry_points=False, strict=True)
    yield k
    k.close()


@dataclass
class Deps:
    rows: dict


def lookup(key: str, ctx: RunContext[Deps]) -> str:
    """Look a key up in the app's table."""
    return ctx.deps.rows.get(key, "unknown")


def one_node(agent, outputs=("answer",), inputs=("goal",), description="answer the goal"):
    return WorkFlowGraph.from_dict({"name": "kinds", "goal": "test agent kinds", "nodes": [
        node("A", inputs, outputs, [agent], description=description)], "edges": []})


def test_a_react_agent_runs_as_a_workflow_node(kernel):
    """A react spec as a node's agent chats on the node's task; its reply is the node's one output
    (it used to fail with "agent has no action None")."""
    llm = kernel.llm("scripted:react-node", replies=["Paris"])
    result = WorkFlowExecutor(kernel=kernel, llm=llm).run(
        one_node({"type": "react", "name": "Rex"}), {"goal": "the capital of France"})
    assert result.ok and result.outputs == {"answer": "Paris"}
    asked = llm.requests[0].messages[-1].content
    assert "answer the goal" in asked and "goal: the capital of France" in asked


def test_a_react_node_calls_its_tools_with_the_runs_deps(kernel):
    """A react agent with tools runs its loop in the node; its tool reads ``ctx.deps`` given to ``run(deps=)``."""
    kernel.add_tool(lookup)
    llm = kernel.llm("scripted:react-tools", replies=[
        {"tool_calls": [{"name": "lookup", "arguments": {"key": "u1"}}]}, "It is Ann."])
    graph = one_node({"type": "react", "name": "Rex", "tools": ["lookup"]}, outputs=("who",))
    result = WorkFlowExecutor(kernel=kernel, llm=llm).run(graph, {"goal": "who is u1?"},
                                                          deps=Deps(rows={"u1": "Ann Lee"}))
    assert result.outputs == {"who": "It is Ann."}
    assert llm.requests[1].messages[-1].content == "Ann Lee"


def test_the_executors_deps_reach_every_run(kernel):
    """``WorkFlowExecutor(deps=...)`` is the default of each run's ``deps``."""
    kernel.add_tool(lookup)
    llm = kernel.llm("scripted:react-exec-deps", replies=[
        {"tool_calls": [{"name": "lookup", "arguments": {"key": "k"}}]}, "done"])
    graph = one_node({"type": "react", "name": "Rex", "tools": ["lookup"]})
    WorkFlowExecutor(kernel=kernel, llm=llm, deps=Deps(rows={"k": "from the executor"})).run(graph, {"goal": "g"})
    assert llm.requests[1].messages[-1].content == "from the executor"


def test_an_agents_own_deps_win_over_the_runs(kernel):
    """An agent built with its own deps keeps them inside a workflow given other deps."""
    kernel.add_tool(lookup)
    rex = kernel.agent({"type": "react", "name": "Rex", "tools": ["lookup"]}, deps=Deps(rows={"k": "own"}))
    rex.llm = kernel.llm("scripted:react-own-deps", replies=[
        {"tool_calls": [{"name": "lookup", "arguments": {"key": "k"}}]}, "done"])
    WorkFlowExecutor(kernel=kernel).run(one_node(rex), {"goal": "g"}, deps=Deps(rows={"k": "run"}))
    assert rex.llm.requests[1].messages[-1].content == "own"


def test_a_python_function_node_does_not_see_deps_but_a_declared_agent_does(kernel):
    """A declared agent's run context carries the workflow's deps (its tools read them)."""
    seen = []

    class Probe:
        name = "probe"

        async def aexecute(self, inputs=None, ctx=None):
            seen.append(ctx.deps)
            return {"answer": "ok"}

    deps = Deps(rows={})
    WorkFlowExecutor(kernel=kernel).run(one_node(Probe()), {"goal": "g"}, deps=deps)
    assert seen == [deps]


def test_a_react_node_with_several_outputs_reads_them_from_its_json_reply(kernel):
    """Several declared outputs: the task asks for a JSON object of them, and the reply is read as one."""
    llm = kernel.llm("scripted:react-json", replies=['Here: {"city": "Paris", "country": "France"}'])
    result = WorkFlowExecutor(kernel=kernel, llm=llm).run(
        one_node({"type": "react", "name": "Rex"}, outputs=("city", "country")), {"goal": "g"})
    assert result.outputs == {"city": "Paris", "country": "France"}
    assert "city" in llm.requests[0].messages[-1].content and "country" in llm.requests[0].messages[-1].content


def test_a_react_reply_without_the_outputs_fails_the_node_saying_so(kernel):
    """A chat agent whose reply lacks the JSON of several outputs fails its node with a WorkFlowError naming them."""
    llm = kernel.llm("scripted:react-nojson", replies=["no idea"])
    with pytest.raises(WorkFlowFailed) as info:
        WorkFlowExecutor(kernel=kernel, llm=llm).run(
            one_node({"type": "react", "name": "Rex"}, outputs=("city", "country")), {"goal": "g"})
    assert "without the JSON object of outputs city, country" in info.value.result.errors["A"]


def test_a_react_node_reads_the_outputs_of_earlier_nodes(kernel):
    """A react node after a function node gets the value the edge hands it, by name, in its task."""
    llm = kernel.llm("scripted:react-chain", replies=["summary of FACTS"])
    graph = WorkFlowGraph.from_dict({"name": "chain", "goal": "chain", "nodes": [
        node("research", ["goal"], ["facts"], ["placeholder"]),
        node("summarize", ["facts"], ["summary"], [{"type": "react", "name": "Sum"}])],
        "edges": edges(("research", "summarize"))})
    graph.nodes[0].agents = [research]
    result = WorkFlowExecutor(kernel=kernel, llm=llm).run(graph, {"goal": "g"})
    assert result.outputs == {"summary": "summary of FACTS"}
    assert "facts: FACTS about g" in llm.requests[0].messages[-1].content


def research(goal):
    return {"facts": f"FACTS about {goal}"}


def test_deps_on_a_remote_executor_are_refused_before_any_node(kernel):
    """deps cannot travel to another process: a run with deps on a non-local executor is a ConfigError."""
    from zagent.errors import ConfigError

    class Remote:
        in_process = False
        name = "remote"

        async def submit(self, unit):  # pragma: no cover - never reached
            raise AssertionError("no node may run")

    with pytest.raises(ConfigError, match="cannot reach nodes on the 'remote' executor"):
        WorkFlowExecutor(kernel=kernel, executor=Remote()).run(one_node(lambda goal: {"answer": goal}),
                                                               {"goal": "g"}, deps=Deps(rows={}))


def test_an_agent_without_actions_chats_as_a_node(kernel):
    """A plain ``Agent`` with no action answers the node's task through ``achat``."""
    from zagent.plugins.actions import Agent

    llm = kernel.llm("scripted:plain-node", replies=["plain answer"])
    result = WorkFlowExecutor(kernel=kernel).run(one_node(Agent(kernel=kernel, name="Plain", llm=llm)), {"goal": "g"})
    assert result.outputs == {"answer": "plain answer"}
