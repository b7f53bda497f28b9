"""Attack: a model names a tool it was not offered. Every loop kind gets a ``blocked`` result, never the tool."""

import pytest

from zagent import ToolCall
from zagent.plugins.groupchat import GroupChat
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

from .conftest import declared, make_kernel, Observer

STEAL = {"tool_calls": [{"name": "steal", "arguments": {"path": "/etc/shadow"}}]}


def tool_messages(llm):
    return [m for r in llm.requests for m in r.messages if m.role == "tool"]


def test_declared_agent_cannot_run_a_tool_it_was_not_offered(kernel):
    """CustomizeAgent offered word_count: the model's call of steal is blocked and the tool never runs."""
    observer = Observer()
    kernel.add_plugin(observer, name="observer")
    agent = kernel.agent(declared())
    agent.llm = kernel.llm("scripted:declared", replies=[STEAL, "done"])
    result = agent(text="a b")
    assert kernel.spy.ran == []
    [blocked] = result.tool_results
    assert blocked.state == "blocked" and "tool 'steal' was not offered to this agent" in blocked.content
    assert "word_count" in blocked.content  # the model is told what it may call
    assert "was not offered" in tool_messages(agent.llm)[0].content  # the model saw why
    assert observer.results[0].state == "blocked" and observer.events[0]["state"] == "blocked"  # rails observe


def test_declared_agent_still_runs_its_offered_tool(kernel):
    """The scope lets the offered tool through (no false block)."""
    agent = kernel.agent(declared())
    agent.llm = kernel.llm("scripted:ok", replies=[{"tool_calls": [{"name": "word_count",
                                                                      "arguments": {"text": "a b c"}}]}, "3"])
    assert agent(text="a b c").tool_results[0].state == "success" and kernel.spy.ran == ["word_count"]


def test_declared_agent_without_tools_cannot_run_any(kernel):
    """An agent offered no tools gets every tool call blocked."""
    agent = kernel.agent(declared(tools=()))
    agent.llm = kernel.llm("scripted:none", replies=[STEAL, "done"])
    assert agent(text="x").tool_results[0].state == "blocked" and kernel.spy.ran == []


def test_prompt_mode_agent_cannot_run_a_tool_it_was_not_offered(kernel):
    """The same in <tool_call> text mode (a model without native tools)."""
    agent = kernel.agent(declared())
    agent.llm = kernel.llm("scripted:text", replies=[STEAL, "done"], profile={"native_tools": False})
    assert agent(text="x").tool_results[0].state == "blocked" and kernel.spy.ran == []


def test_react_agent_cannot_run_a_tool_it_was_not_offered(kernel):
    """ReAct agent offered word_count: steal is blocked, recorded as a blocked step, and the model is told."""
    agent = kernel.agent({"type": "react", "name": "helper", "tools": ["word_count"]})
    agent.llm = kernel.llm("scripted:react", replies=[STEAL, "done"])
    response = agent.chat("read the secret", use_react=True)
    assert kernel.spy.ran == []
    [step] = [s for s in response.steps if s.tool]
    assert step.is_blocked and "was not offered" in step.reason
    assert "was not offered" in tool_messages(agent.llm)[0].content


def test_react_agent_with_tool_retrieval_is_scoped_to_the_turns_selection(kernel):
    """With more tools than tool_limit, only the tools selected for the turn may run."""
    for i in range(3):
        kernel.add_tool(lambda text: text, name=f"echo{i}", description=f"echo number {i}")
    agent = kernel.agent({"type": "react", "name": "picky", "tools": ["echo0", "echo1", "echo2", "word_count"],
                          "tool_limit": 1, "pinned_tools": ["word_count"]})
    call = {"tool_calls": [{"name": "echo2", "arguments": {"text": "x"}}]}
    agent.llm = kernel.llm("scripted:retrieval", replies=[call, "done"])
    response = agent.chat("count words", use_react=True)
    offered = [t.name for t in agent.llm.requests[0].tools or []]
    assert "echo2" not in offered  # tool_limit=1 with word_count pinned
    [step] = [s for s in response.steps if s.tool]
    assert step.is_blocked and "was not offered" in step.reason


def test_workflow_node_agent_cannot_run_a_tool_it_was_not_offered(kernel):
    """A workflow node's agent offered word_count cannot run steal."""
    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "count the words", "inputs": [{"name": "text"}], "nodes": [{
        "name": "count", "description": "count", "inputs": [{"name": "text"}], "outputs": [{"name": "answer"}],
        "agents": [declared()]}], "edges": []})
    llm = kernel.llm("scripted:wf", replies=[STEAL, "done"])
    result = WorkFlowExecutor(kernel=kernel, llm=llm).run(graph, {"text": "a b"})
    assert result.status == "finished" and kernel.spy.ran == []
    assert "was not offered" in tool_messages(llm)[0].content


@pytest.mark.parametrize("speaker", [declared("Ann"), {"type": "react", "name": "Ann", "tools": ["word_count"]}])
def test_group_chat_speaker_cannot_run_a_tool_it_was_not_offered(kernel, speaker):
    """Declared and ReAct speakers in a group chat cannot run a tool they were not offered."""
    if speaker.get("type") != "react":
        speaker = {**speaker, "prompt": "Task: {text}\n{transcript}", "inputs": [{"name": "text"},
                                                                                {"name": "transcript"}]}
    llm = kernel.llm(f"scripted:chat-{speaker.get('type', 'customize')}", replies=[STEAL, "done"])
    chat = GroupChat(kernel=kernel, agents=[speaker], termination={"max_rounds": 1}, llm=llm)
    chat.run("count", text="a b")
    assert kernel.spy.ran == []
    assert "was not offered" in tool_messages(llm)[0].content


def test_tools_in_another_toolset_are_not_reachable_by_name(kernel):
    """Tools of an MCP-like server (``srv.*`` in toolset srv) are out of reach of an agent not offered them."""
    kernel.add_tool(lambda cmd: kernel.spy.ran.append("srv.shell") or "ran", name="srv.shell", toolset="srv",
                    description="run a command on the server")
    agent = kernel.agent(declared())
    agent.llm = kernel.llm("scripted:mcp", replies=[{"tool_calls": [{"name": "srv.shell",
                                                                       "arguments": {"cmd": "id"}}]}, "done"])
    assert agent(text="x").tool_results[0].state == "blocked" and kernel.spy.ran == []


def test_direct_embedding_call_is_unscoped(kernel):
    """The embedding app may still run any tool directly, outside any agent."""
    assert kernel.run_tool({"name": "steal", "arguments": {"path": "p"}}).state == "success"


def test_the_scope_is_a_set_lookup_on_the_run_context(kernel):
    """A context with offered_tools blocks other names in Kernel.arun_tool itself (the one tool path)."""
    ctx = kernel.context(agent="a", offered_tools=frozenset({"word_count"}))
    assert kernel.run_tool(ToolCall(id="1", name="steal", arguments={"path": "p"}), ctx).state == "blocked"
    assert kernel.run_tool(ToolCall(id="2", name="word_count", arguments={"text": "a"}), ctx).state == "success"


def test_a_nested_agent_gets_its_own_offered_set(kernel):
    """``RunContext.for_agent`` starts unscoped, so a nested agent's loop sets its own tools, not the caller's."""
    outer = kernel.context(agent="outer", offered_tools=frozenset({"steal"}))
    inner = outer.for_agent("inner", {})
    assert inner.offered_tools is None and outer.offered_tools == frozenset({"steal"})
    agent = kernel.agent(declared())
    agent.llm = kernel.llm("scripted:nested", replies=[STEAL, "done"])
    from zagent import run_sync

    result = run_sync(agent.aexecute(inputs={"text": "x"}, ctx=outer))
    assert result.tool_results[0].state == "blocked" and kernel.spy.ran == []
    assert outer.offered_tools == frozenset({"steal"})  # the caller's scope is left as it was


def test_deny_everything_rail_blocks_every_source():
    """A rail plugin denying everything blocks direct calls, declared, ReAct, workflow and group chat calls."""
    from zagent import Deny

    class DenyAll:
        def zagent_before_tool_call(self, call, ctx):
            return Deny("nothing runs here")

    k = make_kernel()
    k.add_plugin(DenyAll(), name="deny-all")
    count = {"tool_calls": [{"name": "word_count", "arguments": {"text": "a b"}}]}
    assert k.run_tool({"name": "word_count", "arguments": {"text": "a"}}).state == "blocked"
    agent = k.agent(declared())
    agent.llm = k.llm("scripted:d1", replies=[count, "done"])
    assert agent(text="a").tool_results[0].state == "blocked"
    react = k.agent({"type": "react", "name": "r", "tools": ["word_count"]})
    react.llm = k.llm("scripted:d2", replies=[count, "done"])
    assert [s.is_blocked for s in react.chat("x", use_react=True).steps if s.tool] == [True]
    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "count the words", "inputs": [{"name": "text"}], "nodes": [{
        "name": "count", "description": "count", "inputs": [{"name": "text"}], "outputs": [{"name": "answer"}],
        "agents": [declared("Wf")]}], "edges": []})
    WorkFlowExecutor(kernel=k, llm=k.llm("scripted:d3", replies=[count, "done"])).run(graph, {"text": "a"})
    speaker = {**declared("Ann"), "prompt": "Task: {text}\n{transcript}",
               "inputs": [{"name": "text"}, {"name": "transcript"}]}
    GroupChat(kernel=k, agents=[speaker], termination={"max_rounds": 1},
              llm=k.llm("scripted:d4", replies=[count, "done"])).run("t", text="a")
    assert k.spy.ran == []
    k.close()
