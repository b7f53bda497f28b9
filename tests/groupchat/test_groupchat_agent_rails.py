"""A declared speaker runs its turns under its own rails, in the chat's run."""

from zagent import Kernel
from zagent.testing import HookRecorder
from zagent.plugins.groupchat import GroupChat

from .conftest import PLUGINS


def ping(x: str) -> str:
    """Answer pong."""
    return "pong " + x


def test_a_declared_speakers_own_deny_rail_holds_in_a_group_chat():
    """A tool a CustomizeAgent's file denies stays blocked during its group chat turns."""
    k = Kernel(plugins=[*PLUGINS, "zagent.plugins.rails"], entry_points=False, strict=True)
    try:
        recorder = HookRecorder(k)
        k.add_tool(ping)
        agent = k.agent({"type": "customize", "name": "A", "prompt": "Task: {task}\n{transcript}",
                         "inputs": [{"name": "task"}, {"name": "transcript"}], "outputs": [{"name": "reply"}],
                         "parse_mode": "str", "tools": ["ping"],
                         "agent_config": {"rails": {"deny_tools": ["ping"]}}})
        agent.llm = k.llm("scripted:a", replies=[{"tool_calls": [{"name": "ping", "arguments": {"x": "1"}}]}, "hi"])
        result = GroupChat(kernel=k, agents=[agent], termination={"max_rounds": 1}).run("go")
        ends = recorder.events("tool_end")
        assert [e.data["state"] for e in ends] == ["blocked"]
        assert {e.run_id for e in ends} == {result.run_id}
        assert result.usage.calls == 2
    finally:
        k.close()
