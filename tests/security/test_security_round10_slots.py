"""Round ten: agents called as tools at the same time share one run, and so shared the slots zagent keeps a loop's
approvals in (the ids it mints for each call, the approved keys, the calls held for a person).

Attacks tried (session 2026-12-06, redteam round 10) and whether they got through before this module's fixes:

- a workflow node's ReAct agent calls two agents as tools at once; each asks for the same sensitive ``wipe("/")``
  under the model id ``c1``; the person says yes to agent A's question and no to B's: GOT THROUGH for a declared B
  (B's call took the id A's approval was bound to, so B's ``wipe`` ran unasked), also with a ReAct A -- fixed:
  ``RunContext.for_agent`` gives each nested agent its own ``ctx.frame``, where the rail, the ReAct loop and the
  declared agents' approvals keep minted ids, approved keys and held calls (``kernel/_runs/context.py``)
- the same with two ReAct agents: GOT THROUGH as a hang (A's held call recorded B's key; its run waited for ever on
  an approval it had) -- fixed the same way
- the same in a group-chat turn: GOT THROUGH like the workflow node -- fixed the same way
"""

import asyncio

import pytest

from zagent import Kernel, RunContext
from zagent.plugins.actions import CustomizeAgent
from zagent.plugins.actions.astool import agent_tool
from zagent.plugins.react import ReActAgent

from .conftest import PLUGINS

pytestmark = pytest.mark.timeout(60)

WIPE = {"content": None, "tool_calls": [{"id": "c1", "name": "wipe", "arguments": {"path": "/"}}]}
COUNT = {"content": None, "tool_calls": [{"id": "c0", "name": "count", "arguments": {"text": "a b"}}]}
BOTH = {"content": None, "tool_calls": [{"id": "p1", "name": "A", "arguments": {"task": "clean"}},
                                        {"id": "p2", "name": "B", "arguments": {"task": "clean"}}]}


class Disk:
    """What ran, and the order the attack needs: B's ``wipe`` is checked while A's approved ``wipe`` is running."""

    def __init__(self):
        self.ran = []


def kernel(disk):
    """A kernel whose approver always answers "a person decides" (``None``), with a sensitive async ``wipe`` and an
    async ``count``. A's ``wipe`` waits until B's ``wipe`` was checked (asked about or run); B's ``count`` waits
    until A's ``wipe`` runs, or, on a replay after A's yes ran (spent: not run again, round twelve), until A's model
    is asked again: B's call is checked while A's approval is in force."""
    k = Kernel(plugins=PLUGINS, entry_points=False)
    a_runs, b_checked = asyncio.Event(), asyncio.Event()

    def approver(call, ctx):
        if ctx.agent == "B":
            b_checked.set()

    k.config["rails"] = {"approver": approver}
    a_replies = []

    class ATold:
        def zagent_event(self, event):
            if event.type == "llm_start" and event.agent == "A":
                a_replies.append(event)
                if len(a_replies) == 2:  # A's wipe was settled: run, or told its yes already ran it
                    a_runs.set()

    k.add_plugin(ATold(), name="a-told")

    async def wipe(path: str, ctx: RunContext) -> str:
        """Delete everything under path."""
        disk.ran.append(ctx.agent)
        if ctx.agent == "B":
            b_checked.set()
        else:
            a_runs.set()
            await b_checked.wait()
        return "wiped"

    async def count(text: str, ctx: RunContext) -> int:
        """Count the words of a text."""
        if ctx.agent == "B":
            await a_runs.wait()
        return len(text.split())

    k.add_tool(wipe, sensitive=True)
    k.add_tool(count)
    return k


def helper(k, name, kind, replies):
    llm = k.llm(f"scripted:{name}", replies=replies * 3)
    if kind == "react":
        agent = ReActAgent(kernel=k, name=name, llm=llm, tools=["wipe", "count"])
    else:
        agent = CustomizeAgent.from_dict({"name": name, "description": "cleans", "prompt": "Do: {task}",
                                          "inputs": [{"name": "task"}], "outputs": [{"name": "answer"}],
                                          "tools": ["wipe", "count"], "parse_mode": "str"}, k, llm=llm)
    agent_tool(agent)
    return agent


def boss(disk, kinds):
    """The kernel and agent ``P`` (ReAct), which calls agents A (``wipe``) and B (``count``, then ``wipe``) at once."""
    k = kernel(disk)
    helper(k, "A", kinds[0], [WIPE, "A done"])
    helper(k, "B", kinds[1], [COUNT, WIPE, "B done"])
    return k, ReActAgent(kernel=k, name="P", llm=k.llm("scripted:p", replies=[BOTH, "P done"] * 3), tools=["A", "B"])


def in_workflow(disk, kinds, db, answer=None):
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    k, p = boss(disk, kinds)
    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "clean", "inputs": [{"name": "task"}], "edges": [],
                                     "nodes": [{"name": "n", "description": "clean", "inputs": [{"name": "task"}],
                                                "outputs": [{"name": "answer"}], "agents": [p]}]})
    try:
        ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:wf", replies=["x"]), checkpoints=db)
        return ex.resume("wf", graph=graph, answer=answer) if answer else ex.run(graph, {"task": "clean"}, run_id="wf")
    finally:
        k.close()


def in_group_chat(disk, kinds, db, answer=None):
    from zagent.plugins.groupchat import GroupChat

    k, p = boss(disk, kinds)
    try:
        chat = GroupChat(kernel=k, agents=[p], max_rounds=1, checkpoints=db)
        return chat.resume("gc", answer=answer) if answer else chat.run("clean up", run_id="gc")
    finally:
        k.close()


def answer_a_only(run, kinds, tmp_path):
    """Run, then answer each question: yes when agent A asks, no when B does. What ran, and the questions' askers."""
    disk, db, asked = Disk(), str(tmp_path / "runs.db"), []
    result = run(disk, kinds, db)
    for _ in range(6):
        if result.status != "paused":
            break
        who = "A" if result.interrupts[0].question.startswith('agent "A"') else "B"
        asked.append(who)
        result = run(disk, kinds, db, answer="yes" if who == "A" else "no")
    return result, disk.ran, asked


KINDS = [("declared", "declared"), ("react", "declared"), ("react", "react"), ("declared", "react")]


@pytest.mark.parametrize("kinds", KINDS, ids="-".join)
def test_a_yes_to_one_agent_called_as_a_tool_does_not_cover_its_siblings_call_in_a_node(kinds, tmp_path):
    """Attack: the person approves A's ``wipe("/")``; B, running beside A in the same node, makes the identical call
    under the same model id while A's approval is in force. Defence: each nested agent keeps its minted ids and
    approvals in its own ``ctx.frame``: B is asked (and declined), A's yes runs A's call, and the run ends."""
    result, ran, asked = answer_a_only(in_workflow, kinds, tmp_path)
    assert "B" not in ran and ran.count("A") == 1
    assert result.status == "finished" and asked.count("B") == 1 and asked[0] == "A"


@pytest.mark.parametrize("kinds", KINDS[:3], ids="-".join)
def test_a_yes_to_one_agent_called_as_a_tool_does_not_cover_its_siblings_call_in_a_chat_turn(kinds, tmp_path):
    """Attack: the same in a group chat whose speaker calls both agents. Defence: as in a node."""
    result, ran, asked = answer_a_only(in_group_chat, kinds, tmp_path)
    assert "B" not in ran and ran.count("A") == 1
    assert result.status == "completed" and asked.count("B") == 1


def test_a_nested_agents_approvals_stay_out_of_its_callers_slots():
    """A nested agent's context (``for_agent``) has a frame of its own; the run's stash (budgets, answers) and a tool
    call's context (``for_call``) stay shared, and a top-level context's frame is its stash (``ctx.stash[...]``)."""
    k = Kernel(plugins=PLUGINS, entry_points=False)
    ctx = k.context()
    nested = ctx.for_agent("A", {})
    assert ctx.frame is ctx.stash and nested.stash is ctx.stash
    assert nested.frame is not ctx.frame and ctx.for_agent("B", {}).frame is not nested.frame
    assert nested.for_call("c1").frame is nested.frame
    k.close()
