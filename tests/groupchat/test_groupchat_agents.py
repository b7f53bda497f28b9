"""Speakers of every kind: declared agents, ReAct agents, names through an AgentManager, functions, files."""

import pytest

from zagent import ConfigError
from zagent.plugins.groupchat import GroupChat
from zagent.plugins.manager import AgentManager

from .conftest import Echo, request_text


def _declared(name, prompt="You are {speaker}. Task: {task}\n{transcript}"):
    return {"name": name, "description": f"the {name}", "prompt": prompt,
            "inputs": [{"name": "speaker"}, {"name": "task"}, {"name": "transcript"}],
            "outputs": [{"name": "reply"}], "parse_mode": "str"}


def test_a_declared_agent_gets_the_transcript_and_task_as_inputs(kernel):
    """A customize agent's inputs named transcript/task/speaker are filled from the turn."""
    prompts = []

    def answer(request):
        prompts.append(request_text(request))
        return f"reply {len(prompts)}"

    llm = kernel.llm("scripted:team", replies=[answer] * 2)
    chat = GroupChat(kernel=kernel, agents=[_declared("Ann"), _declared("Bob")], termination={"max_rounds": 2},
                     llm=llm)
    result = chat.run("plan a picnic")
    assert [m.content for m in result.messages] == ["plan a picnic", "reply 1", "reply 2"]
    assert "You are Bob. Task: plan a picnic" in prompts[1] and "Ann: reply 1" in prompts[1]


def test_agents_built_from_dicts_are_any_registered_type(kernel):
    """A dict with type 'react' becomes a ReActAgent that speaks through achat with the history as messages."""
    llm = kernel.llm("scripted:react", replies=["from react"])
    chat = GroupChat(kernel=kernel, agents=[{"type": "react", "name": "Rex", "description": "reacts"}],
                     termination={"max_rounds": 1}, llm=llm)
    result = chat.run("hello")
    assert type(chat.agent("Rex")).__name__ == "ReActAgent"
    assert result.content == "from react"
    sent = llm.requests[0].messages
    assert sent[-2].content == "user: hello" and "You are Rex" in sent[-1].content


def test_a_react_speaker_sees_its_own_turns_as_assistant_messages(kernel):
    """In the history given to a chat agent, its own turns are assistant messages, others' are named user ones."""
    llm = kernel.llm("scripted:react2", replies=["r1", "r2"])
    chat = GroupChat(kernel=kernel, agents=[{"type": "react", "name": "Rex"}, Echo("Eve")],
                     termination={"max_rounds": 3}, llm=llm)
    chat.run("hello")
    roles = [(m.role, m.content) for m in llm.requests[1].messages[1:-1]]
    assert roles == [("user", "user: hello"), ("assistant", "r1"), ("user", "Eve: Eve in round 2")]


def test_agents_are_found_by_name_through_an_agent_manager(kernel):
    """Names resolve through the AgentManager, which marks the agent RUNNING while it speaks."""
    manager = AgentManager(kernel=kernel)
    states = []
    ann = Echo("Ann", say=lambda turn: states.append(manager.get_state("Ann").value) or "hi")
    manager.add_agent(ann)
    chat = GroupChat(kernel=kernel, agents=["Ann"], manager=manager, termination={"max_rounds": 1})
    chat.run("task")
    assert chat.agent("Ann") is ann and states == ["running"]
    assert manager.get_state("Ann").value == "available"


def test_plain_functions_can_speak(kernel):
    """A function taking the turn is a speaker (named by its __name__)."""

    async def oracle(turn):
        return f"oracle saw {len(turn.messages)}"

    assert GroupChat(kernel=kernel, agents=[oracle], termination={"max_rounds": 1}).run("t").content == "oracle saw 1"


def test_a_declared_agent_needing_an_input_no_turn_fills_is_refused_before_the_chat_starts(kernel):
    """Required inputs other than the turn's and the chat's are a ConfigError naming them."""
    spec = {"name": "Odd", "prompt": "Use {budget}", "inputs": [{"name": "budget"}], "outputs": [{"name": "reply"}]}
    chat = GroupChat(kernel=kernel, agents=[spec], termination={"max_rounds": 1}, llm="scripted:unused")
    with pytest.raises(ConfigError, match="budget"):
        chat.run("task")


def test_chat_inputs_fill_extra_agent_inputs(kernel):
    """Inputs given to run(...) besides the task fill declared inputs of the same name."""
    llm = kernel.llm("scripted:budget", replies=[lambda request: request_text(request).split("Use ")[1][:4]])
    spec = {"name": "Odd", "prompt": "Use {budget}", "inputs": [{"name": "budget"}], "outputs": [{"name": "reply"}],
            "parse_mode": "str"}
    chat = GroupChat(kernel=kernel, agents=[spec], termination={"max_rounds": 1}, llm=llm)
    assert chat.run("task", budget="500$").content == "500$"


def test_two_agents_with_one_name_are_refused(kernel):
    """Speaker names are unique within a chat."""
    with pytest.raises(ConfigError, match="two agents"):
        GroupChat(kernel=kernel, agents=[Echo("A"), Echo("A")])


def test_a_groupchat_is_a_registered_agent_type(kernel):
    """kernel.agent({'type': 'groupchat', ...}) builds a GroupChat; acall(task=...) runs it."""
    chat = kernel.agent({"type": "groupchat", "name": "duo", "agents": [_declared("Ann"), _declared("Bob")],
                         "termination": {"max_rounds": 2}, "llm": "test:offline"})
    assert isinstance(chat, GroupChat) and chat.speakers == ["Ann", "Bob"]
    assert chat(task="anything").rounds == 2


def test_a_chat_spec_with_an_unknown_key_is_refused(kernel):
    """Chat files are validated: unknown keys are a ConfigError."""
    with pytest.raises(ConfigError, match="invalid group chat spec"):
        GroupChat.from_dict({"agents": [], "speakers": []}, kernel)


def test_a_chat_runs_one_run_at_a_time(kernel):
    """Starting a second run while one is in flight is refused."""
    import asyncio

    async def main():
        holder = {}

        async def slow(turn):
            await asyncio.sleep(0.01)
            return "ok"

        chat = GroupChat(kernel=kernel, agents=[slow], termination={"max_rounds": 1})
        first = asyncio.ensure_future(chat.arun("one"))
        await asyncio.sleep(0)
        with pytest.raises(ConfigError, match="already running"):
            await chat.arun("two")
        holder["r"] = await first
        return holder["r"]

    assert asyncio.run(main()).rounds == 1


def test_a_group_chat_can_be_the_agent_of_a_workflow_node():
    """A workflow node whose agent is a groupchat spec gets the chat's outcome under the spec's 'output' name."""
    from zagent import Kernel
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    from .conftest import PLUGINS

    with Kernel(plugins=PLUGINS + ["zagent.plugins.workflow"], entry_points=False, strict=True) as k:
        team = {"type": "groupchat", "name": "team", "output": "brief", "llm": "test:offline",
                "agents": [_declared("Ann"), _declared("Bob")], "termination": {"max_rounds": 2}}
        graph = WorkFlowGraph.from_dict({
            "name": "one", "goal": "write a brief with a team",
            "nodes": [{"name": "write", "description": "write it", "inputs": [{"name": "goal"}],
                       "outputs": [{"name": "brief"}], "agents": [team]}], "edges": []})
        result = WorkFlowExecutor(kernel=k).run(graph, {"goal": "tidal energy"})
    assert result.outputs["brief"] == "example reply"


def test_a_group_chat_can_speak_in_another_group_chat(kernel):
    """A nested chat is a speaker like any agent (through aexecute); its outcome is its turn."""
    inner = GroupChat(kernel=kernel, name="inner", agents=[Echo("X", say="x says hi")], termination={"max_rounds": 1})
    outer = GroupChat(kernel=kernel, agents=[inner, Echo("Y")], termination={"max_rounds": 2})
    result = outer.run("talk")
    assert result.speakers == ["inner", "Y"] and result.messages[1].content == "x says hi"
