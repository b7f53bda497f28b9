"""A ReAct agent in a workflow node or a group-chat turn whose tool needs a human approval: the composite run
ends paused with a question naming the call (never waits for ever), and resumes with the answer in a new
kernel; the answer binds to that call only (attacks: another call proposed on the re-run, a vague answer)."""

import pytest

from zagent.plugins.groupchat import GroupChat
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

from .conftest import PLUGINS, node

pytestmark = pytest.mark.timeout(60)  # a run that waits for ever fails here instead of hanging the suite


def call(path):
    return {"content": None, "tool_calls": [{"name": "wipe", "arguments": {"path": path}}]}


def kernel_with_wipe(runs):
    """A fresh kernel whose approver always answers "later" and a sensitive ``wipe`` tool recording its runs."""
    from zagent import Kernel

    k = Kernel(plugins=[*PLUGINS, "zagent.plugins.rails"], entry_points=False, strict=True,
               config={"rails": {"approver": lambda call, ctx: None}})

    def wipe(path: str) -> str:
        """Delete everything under path."""
        runs.append(path)
        return f"wiped {path}"

    k.add_tool(wipe, sensitive=True)
    return k


def graph():
    return WorkFlowGraph.from_dict({"name": "ops", "goal": "clean up", "nodes": [
        node("clean", ["goal"], ["answer"], [{"type": "react", "name": "ops", "tools": ["wipe"]}],
             description="clean up")], "edges": []})


def run_workflow(runs, db, replies, *, resume=None, answer=None):
    k = kernel_with_wipe(runs)
    try:
        ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:ops", replies=replies), checkpoints=db)
        if resume is None:
            return ex.run(graph(), {"goal": "free disk space"}, run_id="wf1")
        return ex.resume(resume, graph=graph(), answer=answer)
    finally:
        k.close()


def test_a_workflow_node_needing_approval_pauses_the_run_with_the_call(db):
    """The node's ReAct agent waits on approval: the workflow ends paused (checkpointed), asking about the call."""
    runs = []
    result = run_workflow(runs, db, [call("/tmp/cache"), "never reached"])
    assert result.status == "paused" and runs == []
    [asked] = result.interrupts
    assert asked.node == "clean"
    assert '"wipe"' in asked.question and '{"path":"/tmp/cache"}' in asked.question and "answer yes" in asked.question


def test_resume_with_yes_runs_the_call_once_in_a_new_kernel(db):
    """Resumed from the checkpoint in a new kernel with "yes", the re-run proposes the same call: it runs once."""
    runs = []
    paused = run_workflow(runs, db, [call("/tmp/cache")])
    result = run_workflow(runs, db, [call("/tmp/cache"), "cleaned"], resume=paused.run_id, answer="yes")
    assert result.ok and result.outputs == {"answer": "cleaned"} and runs == ["/tmp/cache"]


def test_resume_with_no_declines_the_call(db):
    """"no" declines: the tool never runs, the model hears that a human declined, the node finishes."""
    runs = []
    paused = run_workflow(runs, db, [call("/tmp/cache")])
    k = kernel_with_wipe(runs)
    llm = k.llm("scripted:ops-no", replies=[call("/tmp/cache"), "not cleaned"])
    result = WorkFlowExecutor(kernel=k, llm=llm, checkpoints=db).resume(paused.run_id, graph=graph(), answer="no")
    k.close()
    assert result.ok and result.outputs == {"answer": "not cleaned"} and runs == []
    assert "declined" in llm.requests[-1].messages[-1].content


@pytest.mark.parametrize("answer", ["yes please", "sure", "", None, 1, {"yes": True}])
def test_an_answer_that_is_not_a_plain_yes_declines(db, answer):
    """Anything but yes/y/approve/allow/ok/true (or True) declines: a vague or odd answer never approves."""
    runs = []
    paused = run_workflow(runs, db, [call("/")])
    result = run_workflow(runs, db, [call("/"), "left alone"], resume=paused.run_id, answer=answer)
    assert result.ok and runs == []


def test_a_yes_for_one_call_never_approves_another(db):
    """Attack: on the re-run the model proposes wipe("/") instead of the call the human approved; the old
    "yes" is not used for it: the run pauses again asking about "/", and nothing ran."""
    runs = []
    paused = run_workflow(runs, db, [call("/tmp/cache")])
    again = run_workflow(runs, db, [call("/"), "never"], resume=paused.run_id, answer="yes")
    assert again.status == "paused" and runs == []
    [asked] = again.interrupts
    assert '{"path":"/"}' in asked.question and asked.index == 1
    final = run_workflow(runs, db, [call("/"), "done"], resume=paused.run_id, answer="no")
    assert final.ok and runs == []


def test_two_calls_waiting_are_asked_one_after_the_other(db):
    """Two sensitive calls in one reply: two questions in turn, each answered, each call bound to its answer."""
    runs = []
    both = {"content": None, "tool_calls": [{"name": "wipe", "arguments": {"path": "/a"}},
                                            {"name": "wipe", "arguments": {"path": "/b"}}]}
    first = run_workflow(runs, db, [both])
    assert [a.index for a in first.interrupts] == [0] and "/a" in first.interrupts[0].question
    second = run_workflow(runs, db, [both], resume="wf1", answer="yes")
    assert second.status == "paused" and "/b" in second.interrupts[0].question and runs == []
    done = run_workflow(runs, db, [both, "a wiped, b kept"], resume="wf1", answer="no")
    assert done.ok and runs == ["/a"]


def test_without_a_workflow_the_loop_still_waits_for_resume(db):
    """Outside a node or turn nothing changes: the loop pauses on approval and resume(approve=...) goes on."""
    import asyncio

    runs = []
    k = kernel_with_wipe(runs)
    agent = k.agent({"type": "react", "name": "ops", "tools": ["wipe"]})
    agent.llm = k.llm("scripted:solo", replies=[call("/tmp"), "done"])
    loop = agent.loop()

    async def scenario():
        run = asyncio.ensure_future(loop.arun("clean"))
        await loop.wait_for_status("paused")
        loop.resume(approve=list(loop.state.awaiting_approval))
        return await run

    from zagent import run_sync

    assert run_sync(scenario()).content == "done" and runs == ["/tmp"]
    k.close()


def test_a_group_chat_turn_needing_approval_pauses_the_chat_and_resumes(db):
    """A ReAct speaker whose tool waits on approval: the chat ends paused asking about the call; a new kernel
    resumes it with "yes" and the call runs once."""
    runs = []
    k = kernel_with_wipe(runs)
    ops = k.agent({"type": "react", "name": "ops", "tools": ["wipe"]})
    ops.llm = k.llm("scripted:chat-ops", replies=[call("/tmp/cache")])
    paused = GroupChat(kernel=k, agents=[ops], max_rounds=1, checkpoints=db).run("free disk space")
    k.close()
    assert paused.status == "paused" and runs == []
    [asked] = paused.interrupts
    assert asked.speaker == "ops" and '{"path":"/tmp/cache"}' in asked.question
    k = kernel_with_wipe(runs)
    ops = k.agent({"type": "react", "name": "ops", "tools": ["wipe"]})
    ops.llm = k.llm("scripted:chat-ops-2", replies=[call("/tmp/cache"), "cleaned"])
    result = GroupChat(kernel=k, agents=[ops], max_rounds=1, checkpoints=db).resume(paused.run_id, answer="yes")
    k.close()
    assert result.status == "completed" and runs == ["/tmp/cache"]
    assert result.messages[-1].content == "cleaned"


def test_a_group_chat_speaker_gets_no_approval_from_an_answer_to_another_call(db):
    """Attack, group chat: the re-run's call differs from the approved one: asked again, nothing runs."""
    runs = []
    k = kernel_with_wipe(runs)
    ops = k.agent({"type": "react", "name": "ops", "tools": ["wipe"]})
    ops.llm = k.llm("scripted:chat-a", replies=[call("/tmp/cache")])
    paused = GroupChat(kernel=k, agents=[ops], max_rounds=1, checkpoints=db).run("free disk space")
    ops.llm = k.llm("scripted:chat-b", replies=[call("/"), "never"])
    again = GroupChat(kernel=k, agents=[ops], max_rounds=1, checkpoints=db).resume(paused.run_id, answer="yes")
    k.close()
    assert again.status == "paused" and runs == [] and '{"path":"/"}' in again.interrupts[0].question


def test_an_agent_called_as_a_tool_in_a_node_pauses_the_node_too(db):
    """A node's ReAct agent calls a worker agent as a tool; the worker's sensitive call waits on approval: the
    workflow pauses asking about the worker's call (not an error result), and "yes" runs it on resume."""
    runs = []

    def build(worker_replies, boss_replies):
        k = kernel_with_wipe(runs)
        worker = k.agent({"type": "react", "name": "worker", "tools": ["wipe"]})
        worker.llm = k.llm("scripted:worker", replies=worker_replies)
        worker.as_tool()
        boss = {"type": "react", "name": "boss", "tools": ["worker"]}
        g = WorkFlowGraph.from_dict({"name": "ops", "goal": "clean up", "nodes": [
            node("clean", ["goal"], ["answer"], [boss], description="clean up")], "edges": []})
        return k, g, WorkFlowExecutor(kernel=k, llm=k.llm("scripted:boss", replies=boss_replies), checkpoints=db)

    ask_worker = {"content": None, "tool_calls": [{"name": "worker", "arguments": {"task": "wipe the cache"}}]}
    k, g, ex = build([call("/tmp/cache")], [ask_worker])
    paused = ex.run(g, {"goal": "free disk space"}, run_id="wf2")
    k.close()
    assert paused.status == "paused" and runs == []
    assert "agent \"worker\"" in paused.interrupts[0].question and "/tmp/cache" in paused.interrupts[0].question
    k, g, ex = build([call("/tmp/cache"), "wiped"], [ask_worker, "the worker wiped the cache"])
    result = ex.resume("wf2", graph=g, answer="yes")
    k.close()
    assert result.ok and result.outputs == {"answer": "the worker wiped the cache"} and runs == ["/tmp/cache"]
