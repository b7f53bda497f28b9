"""Attack: a spec's ``max_rounds`` or node count multiplies the host's per-run tool budget. A group chat's turns
and a workflow's nodes are one run: the kernel's ``tool_budget`` counts across all of them."""

import pytest

from zagent.plugins.groupchat import GroupChat
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

from .conftest import make_kernel

COUNT = {"tool_calls": [{"name": "word_count", "arguments": {"text": "a b"}}]}
BUDGET = {"rails": {"tool_budget": {"word_count": 1}}}


def declared(name, **over):
    return {"name": name, "description": "counts", "prompt": "Count: {text}\n{transcript}",
            "inputs": [{"name": "text"}, {"name": "transcript"}], "outputs": [{"name": "answer"}],
            "parse_mode": "str", "tools": ["word_count"], **over}


def over_budget(llm):
    return [m.content for r in llm.requests for m in r.messages if m.role == "tool" and "budget" in m.content]


@pytest.mark.parametrize("speaker", ["declared", "react"])
def test_group_chat_rounds_share_one_tool_budget(speaker):
    """A 4-round group chat under a kernel budget of 1 call per run makes 1 call; the other turns are refused."""
    k = make_kernel(config=BUDGET)
    agents = ([declared("Ann"), declared("Bob")] if speaker == "declared" else
              [{"type": "react", "name": n, "tools": ["word_count"]} for n in ("Ann", "Bob")])
    llm = k.llm("scripted:chat", replies=[COUNT, "done"] * 4)
    chat = GroupChat(kernel=k, agents=agents, termination={"max_rounds": 4}, llm=llm)
    result = chat.run("count", text="a b")
    assert result.rounds == 4
    assert k.spy.ran == ["word_count"] and len(set(over_budget(llm))) >= 1 and len(over_budget(llm)) == 3
    k.close()


def test_workflow_nodes_share_one_tool_budget():
    """A 3-node workflow under a kernel budget of 1 call per run makes 1 call; the other nodes are refused."""
    k = make_kernel(config=BUDGET)
    nodes = [{"name": f"n{i}", "description": "count", "inputs": [{"name": "text"}],
              "outputs": [{"name": f"a{i}"}],
              "agents": [{**declared(f"A{i}"), "prompt": "Count: {text}", "inputs": [{"name": "text"}],
                          "outputs": [{"name": f"a{i}"}]}]} for i in range(3)]
    edges = [{"source": "n0", "target": "n1"}, {"source": "n1", "target": "n2"}]
    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "count", "inputs": [{"name": "text"}], "nodes": nodes,
                                     "edges": edges})
    llm = k.llm("scripted:wf", replies=[COUNT, "done"] * 3)
    result = WorkFlowExecutor(kernel=k, llm=llm).run(graph, {"text": "a b"})
    assert result.status == "finished"
    assert k.spy.ran == ["word_count"] and len(over_budget(llm)) == 2
    k.close()


def test_a_group_chat_node_of_a_workflow_shares_the_workflow_budget():
    """A group chat run as a workflow node counts against the workflow's run: 2 chat rounds after 1 node's call
    make no more calls under a budget of 1."""
    k = make_kernel(config=BUDGET)
    llm = k.llm("scripted:nested", replies=[COUNT, "done"] * 3)
    chat = GroupChat(kernel=k, agents=[declared("Ann")], termination={"max_rounds": 2}, llm=llm, name="chat")
    first = {**declared("First"), "prompt": "Count: {text}", "inputs": [{"name": "text"}],
             "outputs": [{"name": "a0"}]}
    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "count", "inputs": [{"name": "text"}], "nodes": [
        {"name": "n0", "description": "count", "inputs": [{"name": "text"}], "outputs": [{"name": "a0"}],
         "agents": [first]},
        {"name": "n1", "description": "discuss", "inputs": [{"name": "text"}], "outputs": [{"name": "content"}],
         "agents": [chat]}], "edges": [{"source": "n0", "target": "n1"}]})
    WorkFlowExecutor(kernel=k, llm=llm).run(graph, {"text": "a b"})
    assert k.spy.ran == ["word_count"]
    k.close()


def test_two_runs_do_not_share_a_budget():
    """Two separate group chats each get their own budget of 1 (the counter is per run, not per kernel)."""
    k = make_kernel(config=BUDGET)
    for i in range(2):
        llm = k.llm(f"scripted:one{i}", replies=[COUNT, "done"])
        GroupChat(kernel=k, agents=[declared("Ann")], termination={"max_rounds": 1}, llm=llm).run("c", text="a")
    assert k.spy.ran == ["word_count", "word_count"]
    k.close()
