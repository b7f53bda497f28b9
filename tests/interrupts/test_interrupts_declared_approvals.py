"""A declared (``customize``) agent in a workflow node whose tool needs a human approval: like a ReAct agent
there, the workflow ends paused asking about the call, and resumes with the answer in a new kernel; the answer
binds to that call only. Before, the model got an "awaiting approval" blocked result and the node went on."""

import pytest

from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

from .conftest import node
from .test_interrupts_approvals import call, kernel_with_wipe

pytestmark = pytest.mark.timeout(60)


def graph():
    agent = {"type": "customize", "name": "ops", "prompt": "Free disk space: {goal}", "inputs": [{"name": "goal"}],
             "outputs": [{"name": "answer"}], "tools": ["wipe"], "parse_mode": "str"}
    return WorkFlowGraph.from_dict({"name": "ops", "goal": "clean up", "nodes": [
        node("clean", ["goal"], ["answer"], [agent], description="clean up")], "edges": []})


def run_workflow(runs, db, replies, *, resume=None, answer=None, requests=None):
    k = kernel_with_wipe(runs)
    try:
        llm = k.llm("scripted:ops", replies=replies)
        ex = WorkFlowExecutor(kernel=k, llm=llm, checkpoints=db)
        result = (ex.run(graph(), {"goal": "free disk space"}, run_id="wf1") if resume is None
                  else ex.resume(resume, graph=graph(), answer=answer))
        if requests is not None:
            requests.extend(llm.requests)
        return result
    finally:
        k.close()


def test_a_declared_agent_needing_approval_pauses_the_workflow_with_the_call(db):
    """The node's declared agent calls a sensitive tool: the workflow ends paused, asking about that call."""
    runs = []
    result = run_workflow(runs, db, [call("/tmp/cache"), "never reached"])
    assert result.status == "paused" and runs == []
    [asked] = result.interrupts
    assert asked.node == "clean" and '"ops"' in asked.question and '"wipe"' in asked.question
    assert '{"path":"/tmp/cache"}' in asked.question


def test_yes_runs_the_call_once_and_the_agent_reads_its_result(db):
    """Resumed with "yes" in a new kernel: the re-run's call runs once and the model reads its result."""
    runs, requests = [], []
    paused = run_workflow(runs, db, [call("/tmp/cache")])
    result = run_workflow(runs, db, [call("/tmp/cache"), "cleaned"], resume=paused.run_id, answer="yes",
                          requests=requests)
    assert result.ok and result.outputs == {"answer": "cleaned"} and runs == ["/tmp/cache"]
    assert "wiped /tmp/cache" in str(requests[-1].messages)


def test_no_declines_and_the_model_hears_it(db):
    """"no": the tool never runs and the model reads that a human declined the call."""
    runs, requests = [], []
    paused = run_workflow(runs, db, [call("/tmp/cache")])
    result = run_workflow(runs, db, [call("/tmp/cache"), "left alone"], resume=paused.run_id, answer="no",
                          requests=requests)
    assert result.ok and runs == [] and "a human declined the call" in str(requests[-1].messages)


def test_a_yes_for_one_call_never_approves_another(db):
    """Attack: after "yes" for /tmp/cache, the re-run's model proposes wipe("/"): asked anew, nothing ran."""
    runs = []
    paused = run_workflow(runs, db, [call("/tmp/cache")])
    again = run_workflow(runs, db, [call("/"), "never"], resume=paused.run_id, answer="yes")
    assert again.status == "paused" and runs == [] and '{"path":"/"}' in again.interrupts[0].question


def test_an_approval_does_not_carry_to_a_later_call_with_the_same_id(db):
    """Attack: approved once, the model repeats the call with the same id in its next reply: asked again."""
    runs = []
    same = {"content": None, "tool_calls": [{"id": "c1", "name": "wipe", "arguments": {"path": "/tmp/cache"}}]}
    paused = run_workflow(runs, db, [same])
    again = run_workflow(runs, db, [same, same, "never"], resume=paused.run_id, answer="yes")
    assert runs == ["/tmp/cache"] and again.status == "paused" and again.interrupts[0].index == 1


def test_outside_a_node_the_awaiting_result_stands():
    """A declared agent run on its own (no interrupt scope) keeps today's behaviour: the call is not run and
    the model reads that it awaits human approval."""
    from zagent import Kernel

    from .conftest import PLUGINS

    runs = []
    k = Kernel(plugins=[*PLUGINS, "zagent.plugins.rails"], entry_points=False, strict=True,
               config={"rails": {"approver": lambda call, ctx: None}})

    def wipe(path: str) -> str:
        """Delete everything under path."""
        runs.append(path)
        return "wiped"

    k.add_tool(wipe, sensitive=True)
    llm = k.llm("scripted:solo", replies=[call("/tmp/cache"), "waiting"])
    from zagent.plugins.actions import CustomizeAgent

    agent = CustomizeAgent.from_dict({"name": "ops", "prompt": "Free disk space: {goal}", "inputs": [{"name": "goal"}],
                                      "outputs": [{"name": "answer"}], "tools": ["wipe"], "parse_mode": "str"}, k, llm=llm)
    agent(goal="free")
    k.close()
    assert runs == [] and "awaiting human approval" in str(llm.requests[-1].messages)


def test_a_declared_group_chat_speaker_pauses_the_chat_and_yes_runs_the_call(db):
    """A declared speaker's sensitive call in a group-chat turn: the chat ends paused asking about it; a new
    kernel resumes with "yes" and the call runs once."""
    from zagent.plugins.actions import CustomizeAgent
    from zagent.plugins.groupchat import GroupChat

    spec = {"name": "ops", "description": "cleans disks", "prompt": "Do this: {task}", "inputs": [{"name": "task"}],
            "outputs": [{"name": "reply"}], "tools": ["wipe"], "parse_mode": "str"}
    runs = []

    def chat(replies, **run):
        k = kernel_with_wipe(runs)
        try:
            ops = CustomizeAgent.from_dict(spec, k, llm=k.llm("scripted:speaker", replies=replies))
            group = GroupChat(kernel=k, agents=[ops], max_rounds=1, checkpoints=db)
            return group.resume(run["resume"], answer="yes") if run else group.run("free disk space")
        finally:
            k.close()

    paused = chat([call("/tmp/cache")])
    assert paused.status == "paused" and runs == [] and paused.interrupts[0].speaker == "ops"
    result = chat([call("/tmp/cache"), "cleaned"], resume=paused.run_id)
    assert result.status == "completed" and runs == ["/tmp/cache"]
