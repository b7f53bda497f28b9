"""A workflow node runs its agent under the agent's own rails and settings, in the workflow's run."""

from zagent import Kernel
from zagent.testing import HookRecorder
from zagent.plugins.manager import AgentManager
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

from .conftest import PLUGINS


def ping(x: str) -> str:
    """Answer pong."""
    return "pong " + x


def test_an_agents_own_deny_rail_holds_inside_a_workflow():
    """A tool the agent's file denies is blocked when the agent runs as a workflow node, and the
    call belongs to the workflow's run."""
    k = Kernel(plugins=[*PLUGINS, "zagent.plugins.rails"], entry_points=False, strict=True)
    try:
        recorder = HookRecorder(k)
        k.add_tool(ping)
        agent = k.agent({"type": "customize", "name": "A", "prompt": "Do {goal}", "inputs": [{"name": "goal"}],
                         "outputs": [{"name": "answer"}], "parse_mode": "str", "tools": ["ping"],
                         "agent_config": {"rails": {"deny_tools": ["ping"]}}})
        agent.llm = k.llm("scripted:a", replies=[{"tool_calls": [{"name": "ping", "arguments": {"x": "1"}}]}, "ok"])
        manager = AgentManager(kernel=k)
        manager.add_agent(agent)
        graph = WorkFlowGraph.from_dict({"goal": "g", "nodes": [
            {"name": "n", "inputs": [{"name": "goal"}], "outputs": [{"name": "answer"}], "agents": ["A"]}]})
        result = WorkFlowExecutor(kernel=k, manager=manager).run(graph, {"goal": "x"})
        ends = recorder.events("tool_end")
        assert [e.data["state"] for e in ends] == ["blocked"]
        assert result.outputs["answer"] == "ok"
        assert {e.run_id for e in ends} == {result.run_id}
    finally:
        k.close()
