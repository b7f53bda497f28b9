"""Round ten: an approval is tied to the tool it was asked about (round nine, in one process); does that survive a
checkpoint restored by another process?

Attacks tried (session 2026-12-06, redteam round 10) and whether they got through before this module's fixes. Each
"process" is a fresh kernel reading the run from the SQLite store; the app registers ``danger`` again:

- ReAct: paused awaiting a person about ``danger`` (``r10tools.delete``); restored where ``danger`` is another
  function (``r10tools.shred``) and resumed with ``approve=[id]``: GOT THROUGH (``shred`` ran) -- fixed: the state
  keeps the identity of each held call's tool (``ReActState.held_tools``: toolset, handler module and name), and a
  restore where another tool has the name asks again (``plugins/react/restoring.py``)
- a workflow node's sensitive call answered "yes" in a resume whose ``danger`` is ``shred``: GOT THROUGH (the yes,
  bound to the name and arguments, ran ``shred``) -- fixed: a question's digest binds the tool's identity too
  (``plugins/actions/asked.py``)
- held (still runs): the same function registered again after the restart, in both.
"""

import pytest

from zagent.plugins.react import ReActLoop

from .conftest import make_kernel

pytestmark = pytest.mark.timeout(60)

TOOLS = """
RAN = []
def delete(path: str) -> str:
    'Delete a path.'
    RAN.append(('delete', path))
    return 'deleted'
def shred(path: str) -> str:
    'Shred a path.'
    RAN.append(('shred', path))
    return 'shredded'
"""
CALL = {"content": None, "tool_calls": [{"id": "c1", "name": "danger", "arguments": {"path": "/tmp/x"}}]}


@pytest.fixture
def tools(tmp_path, monkeypatch, forget_modules):
    forget_modules.append("r10tools")
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "r10tools.py").write_text(TOOLS)
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    import r10tools

    return r10tools


def process(tools, fn):
    """A new process's kernel: ``danger`` is ``tools.<fn>`` (sensitive), the approver says "a person decides"."""
    k = make_kernel(config={"rails": {"approver": lambda call, ctx: None}})
    k.add_tool(getattr(tools, fn), name="danger", sensitive=True)
    return k


def paused_react(tools, db):
    """Process one: a ReAct run paused awaiting a person about ``danger("/tmp/x")`` (``delete``), checkpointed, then
    cut off (the process ends); its run id."""
    from .test_security_round7_approvals import Cut, _cut

    k = process(tools, "delete")
    loop = ReActLoop(kernel=k, llm=k.llm("scripted:one", replies=[CALL]), tools=["danger"], agent_config={},
                     checkpoints=k.memory("checkpoints", path=db), on_pause=_cut)
    try:
        with pytest.raises(Cut):
            loop.run("clean up")
        return loop.state.run_id
    finally:
        k.close()


def resumed_react(tools, db, run_id, fn):
    """Process two: ``danger`` is ``tools.<fn>``; the run continued with the held call approved (``approve=``), as
    the person answered process one's question; the approver's questions of this process are returned."""
    from .test_security_round7_approvals import Cut, _cut

    asked = []
    k = make_kernel(config={"rails": {"approver": lambda call, ctx: asked.append(call.name)}})
    k.add_tool(getattr(tools, fn), name="danger", sensitive=True)
    loop = ReActLoop(kernel=k, llm=k.llm("scripted:two", replies=["done"]), tools=["danger"], agent_config={},
                     checkpoints=k.memory("checkpoints", path=db), on_pause=_cut)
    try:
        return loop.resume(run_id, approve=["c1"]).status, asked
    except Cut:
        return "paused", asked
    finally:
        k.close()


def test_an_approval_after_a_restart_does_not_run_another_function_under_the_name(tools, tmp_path):
    """Attack: restored by a process whose ``danger`` is ``shred``, the call the person was asked about (``delete``)
    is approved. Defence: the call was held for another tool, so it is asked again (the approver says "later": the
    run pauses); ``shred`` never runs on ``delete``'s approval."""
    db = str(tmp_path / "runs.db")
    run_id = paused_react(tools, db)
    result, asked = resumed_react(tools, db, run_id, "shred")
    assert tools.RAN == [] and asked == ["danger"] and result == "paused"


def test_the_same_function_registered_again_keeps_the_approval(tools, tmp_path):
    """The app registers the same ``delete`` as ``danger`` after the restart: the approval runs it, unasked, once."""
    db = str(tmp_path / "runs.db")
    run_id = paused_react(tools, db)
    result, asked = resumed_react(tools, db, run_id, "delete")
    assert tools.RAN == [("delete", "/tmp/x")] and asked == [] and result == "completed"


OPS = {"type": "customize", "name": "ops", "description": "cleans", "prompt": "Do this: {goal}",
       "inputs": [{"name": "goal"}], "outputs": [{"name": "answer"}], "tools": ["danger"], "parse_mode": "str"}
NODE_CALL = {"content": None, "tool_calls": [{"name": "danger", "arguments": {"path": "/tmp/x"}}]}


def workflow(tools, db, fn, answer=None):
    """A process whose ``danger`` is ``tools.<fn>`` running (or, with ``answer``, resuming) a one-node workflow."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    k = process(tools, fn)
    graph = WorkFlowGraph.from_dict({"name": "ops", "goal": "clean up", "edges": [], "nodes": [
        {"name": "clean", "description": "clean", "inputs": [{"name": "goal"}], "outputs": [{"name": "answer"}],
         "agents": [OPS]}]})
    try:
        ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:ops", replies=[NODE_CALL, "done"]), checkpoints=db)
        return ex.resume("wf", graph=graph, answer=answer) if answer else ex.run(graph, {"goal": "x"}, run_id="wf")
    finally:
        k.close()


def test_a_workflow_yes_after_a_restart_does_not_run_another_function_under_the_name(tools, tmp_path):
    """Attack: the node asked about ``danger("/tmp/x")`` (``delete``); the resume answering "yes" runs in a process
    whose ``danger`` is ``shred``. Defence: the yes was for another tool's call, so the node asks anew (the same
    words: the person decides about the code there now); ``shred`` never ran."""
    db = str(tmp_path / "runs.db")
    assert workflow(tools, db, "delete").status == "paused"
    again = workflow(tools, db, "shred", answer="yes")
    assert tools.RAN == [] and again.status == "paused" and "danger" in again.interrupts[0].question


def test_a_workflow_yes_after_a_restart_runs_the_same_function(tools, tmp_path):
    """The same ``delete`` registered again: the yes runs it, once, and the node finishes."""
    db = str(tmp_path / "runs.db")
    assert workflow(tools, db, "delete").status == "paused"
    assert workflow(tools, db, "delete", answer="yes").status == "finished"
    assert tools.RAN == [("delete", "/tmp/x")]
