"""Typed deps in group chats (``GroupChat(deps=)``, ``arun(deps=)``, a chat in a workflow node) and agent kinds
that speak without a declared action (a plain ``Agent``, a nested ``GroupChat``)."""

from dataclasses import dataclass

import pytest

from zagent import Kernel, RunContext
from zagent.plugins.actions import Agent
from zagent.plugins.groupchat import GroupChat

from .conftest import PLUGINS, Echo


@dataclass
class Deps:
    rows: dict


def lookup(key: str, ctx: RunContext[Deps]) -> str:
    """Look a key up in the app's table."""
    return ctx.deps.rows.get(key, "unknown")


def react_speaker(kernel, script):
    kernel.add_tool(lookup)
    llm = kernel.llm(f"scripted:{script}", replies=[
        {"tool_calls": [{"name": "lookup", "arguments": {"key": "k"}}]}, "found it"])
    return {"type": "react", "name": "Rex", "tools": ["lookup"]}, llm


def test_a_chats_deps_reach_a_react_speakers_tools(kernel):
    """``GroupChat(deps=...)``: the react speaker's tool reads them as ``ctx.deps``."""
    spec, llm = react_speaker(kernel, "gc-deps")
    chat = GroupChat(kernel=kernel, agents=[spec], llm=llm, max_rounds=1, deps=Deps(rows={"k": "from the chat"}))
    assert chat.run("look k up").messages[-1].content == "found it"
    assert llm.requests[1].messages[-1].content == "from the chat"


def test_arun_deps_override_the_chats(kernel):
    """``run(task, deps=...)`` gives one run its own deps; native speakers see them on ``turn.ctx``."""
    seen = []
    eve = Echo("Eve", say=lambda turn: seen.append(turn.ctx.deps) or "hi")
    chat = GroupChat(kernel=kernel, agents=[eve], max_rounds=1, deps=Deps(rows={"who": "chat"}))
    run_deps = Deps(rows={"who": "run"})
    chat.run("greet", deps=run_deps)
    chat.run("greet again")
    assert seen == [run_deps, Deps(rows={"who": "chat"})]


def test_a_declared_speaker_runs_with_the_chats_deps(kernel):
    """A speaker with ``aexecute`` gets a context carrying the chat's deps."""
    seen = []

    class Declared:
        name = "Dee"

        async def aexecute(self, action_name=None, *, inputs=None, ctx=None):
            seen.append(ctx.deps)
            return {"reply": "ok"}

    deps = Deps(rows={})
    GroupChat(kernel=kernel, agents=[Declared()], max_rounds=1, deps=deps).run("go")
    assert seen == [deps]


def test_a_group_chat_node_passes_the_workflows_deps_to_its_speakers():
    """A group chat as a workflow node: its speakers' tools read the workflow run's deps."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    k = Kernel(plugins=[*PLUGINS, "zagent.plugins.workflow"], entry_points=False, strict=True)
    try:
        spec, llm = react_speaker(k, "gc-in-wf")
        chat = GroupChat(kernel=k, agents=[spec], llm=llm, max_rounds=1, name="panel", output="answer")
        graph = WorkFlowGraph.from_dict({"name": "wf", "goal": "g", "nodes": [
            {"name": "talk", "description": "talk it over", "inputs": [{"name": "goal"}],
             "outputs": [{"name": "answer"}], "agents": ["panel"]}], "edges": []})
        graph.nodes[0].agents = [chat]
        result = WorkFlowExecutor(kernel=k).run(graph, {"goal": "look k up"}, deps=Deps(rows={"k": "from the run"}))
        assert result.outputs == {"answer": "found it"}
        assert llm.requests[1].messages[-1].content == "from the run"
    finally:
        k.close()


def test_an_agent_without_actions_speaks_by_chat(kernel):
    """A plain ``Agent`` with no action answers its turn through ``achat`` (not "no action None")."""
    llm = kernel.llm("scripted:plain-agent", replies=["plain reply"])
    plain = Agent(kernel=kernel, name="Plain", llm=llm)
    result = GroupChat(kernel=kernel, agents=[plain], max_rounds=1).run("say something")
    assert result.messages[-1].content == "plain reply"
    assert result.messages[-1].metadata["adapter"] == "chat"


def test_a_group_chat_speaks_in_another_group_chat(kernel):
    """A nested ``GroupChat`` is a speaker: it runs its own chat on the task and its outcome is the turn."""
    inner = GroupChat(kernel=kernel, agents=[Echo("Ida", say="inner says hi")], max_rounds=1, name="Inner")
    outer = GroupChat(kernel=kernel, agents=[inner], max_rounds=1, name="Outer")
    assert outer.run("discuss").messages[-1].content == "inner says hi"


@pytest.mark.parametrize("where", ["chat", "run"])
def test_deps_are_never_checkpointed(kernel, tmp_path, where):
    """The chat's checkpoint holds no trace of the deps (app objects are not data)."""
    store = kernel.memory("checkpoints", path=str(tmp_path / "c.db"))
    secret = Deps(rows={"token": "s3cr3t-value"})
    chat = GroupChat(kernel=kernel, agents=[Echo("Eve", say="hi")], max_rounds=1, checkpoints=store,
                     deps=secret if where == "chat" else None)
    result = chat.run("go", **({"deps": secret} if where == "run" else {}))
    store.close()
    assert b"s3cr3t-value" not in (tmp_path / "c.db").read_bytes()
    assert result.rounds == 1
