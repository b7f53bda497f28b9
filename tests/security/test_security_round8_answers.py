"""Round eight, answers: a person's answer to a ``zagent.interrupt`` (a workflow node's or a group-chat turn's
question, a tool approval asked as one) taken only for the question it was given to.

Attacks tried (session 2026-12-06, redteam round 8) and whether they got through before this module's fixes:

- a model's own question (a tool calling ``zagent.interrupt``) worded exactly as zagent's approval question for
  ``wipe("/")``, answered yes, then ``wipe("/")`` at that position: held (the call is asked anew)
- an app tool ``confirm_deploy(target)`` asking ``"Deploy <target>?"``: the human's yes to "Deploy staging?", and on
  the node's re-run the model asks about production at that position: GOT THROUGH (production deployed) -- fixed:
  the question asked at each position is kept with the run (``interrupts.QUESTIONS``), and an answer given to
  another question is not taken: asked anew (``Asking.ask``)
- the same in a group-chat turn: GOT THROUGH -- fixed the same way
- the same on a remote executor's worker: GOT THROUGH -- fixed: the driver ships the node's record with it
  (``calls.node_payload``, ``units.run_node``) and records the question a worker asked (``NodeAttempts._run_node``)
- the human's yes to a tool approval (``wipe('/tmp/x')``), and on the re-run the model's ``confirm_deploy`` asks
  "Deploy production?" at that position: GOT THROUGH (the approval's yes deployed) -- fixed the same way
- a ``wipe`` path with a right-to-left override, bidi isolates and a zero-width space: the approval question an app
  shows held them raw (a harmless-looking path on screen): GOT THROUGH -- fixed: escaped (``asked.question_of``)
- an answer to a plain ``zagent.interrupt`` edited into an unsigned workflow store: GOT THROUGH -- documented
  (docs/security.md 11: unsigned state is data; sign checkpoints): xfail
"""

import msgspec
import pytest

import zagent
from zagent.types import ToolCall

from .conftest import make_kernel
from .test_security_holdout_approvals import kernel as wipe_kernel

pytestmark = pytest.mark.timeout(60)


# -- approvals asked as interrupts ------------------------------------------------------------------------------

ASKER = {"type": "customize", "name": "ops", "description": "cleans disks", "prompt": "Do this: {goal}",
         "inputs": [{"name": "goal"}], "outputs": [{"name": "answer"}], "tools": ["ask_user", "wipe"],
         "parse_mode": "str"}


def test_a_yes_to_the_models_look_alike_question_approves_nothing(tmp_path):
    """Attack: the model asks its own question through a tool that calls ``zagent.interrupt``, worded exactly as
    zagent's approval question for ``wipe('/')``; the human says yes (to the model's question). On the re-run the
    model calls ``wipe('/')`` at that position. Defence: that yes was not zagent's question about the call: the call
    is asked anew and does not run."""
    from zagent.plugins.actions.asked import question_of
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    runs, db = [], str(tmp_path / "runs.db")
    look_alike, _ = question_of("ops", ToolCall(id="x", name="wipe", arguments={"path": "/"}))
    graph = WorkFlowGraph.from_dict({"name": "ops", "goal": "clean up", "edges": [], "nodes": [
        {"name": "clean", "description": "clean", "inputs": [{"name": "goal"}], "outputs": [{"name": "answer"}],
         "agents": [ASKER]}]})

    def run(replies, **answer):
        k = wipe_kernel(runs)

        async def ask_user(question: str) -> str:
            """Ask the user a question."""
            return str(zagent.interrupt(question))

        k.add_tool(ask_user)
        try:
            ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:ops", replies=replies), checkpoints=db)
            return ex.resume("wf", graph=graph, **answer) if answer else ex.run(graph, {"goal": "free"}, run_id="wf")
        finally:
            k.close()

    ask = {"content": None, "tool_calls": [{"name": "ask_user", "arguments": {"question": look_alike}}]}
    first = run([ask])
    assert first.status == "paused" and first.interrupts[0].question == look_alike
    wipe = {"content": None, "tool_calls": [{"name": "wipe", "arguments": {"path": "/"}}]}
    second = run([wipe, "wiped"], answer="yes")
    assert runs == [] and second.status == "paused"


DEPLOYER = {**ASKER, "tools": ["confirm_deploy"]}


def deployer_kernel(deployed, k=None):
    """``k`` (else a new kernel) with the app's ``confirm_deploy(target)``: asks "Deploy <target>?", deploys on a
    yes."""
    k = k or make_kernel()

    async def confirm_deploy(target: str) -> str:
        """Ask the user to confirm a deployment, then deploy."""
        if zagent.interrupt(f"Deploy {target}?") == "yes":
            deployed.append(target)
            return "deployed"
        return "cancelled"

    k.add_tool(confirm_deploy)
    return k


def deploy(target):
    return {"content": None, "tool_calls": [{"name": "confirm_deploy", "arguments": {"target": target}}]}


def test_a_yes_to_one_question_is_not_the_answer_to_another_asked_at_its_place(tmp_path):
    """Attack: an app tool ``confirm_deploy(target)`` asks ``zagent.interrupt(f"Deploy {target}?")``. The model
    asks about ``staging``; the human says yes. The node runs again on resume and the model now asks about
    ``production`` at that position. Defence: the yes answered "Deploy staging?", not this question: the run
    pauses on "Deploy production?" and nothing is deployed."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    deployed, db = [], str(tmp_path / "runs.db")
    graph = WorkFlowGraph.from_dict({"name": "ops", "goal": "ship", "edges": [], "nodes": [
        {"name": "ship", "description": "ship", "inputs": [{"name": "goal"}], "outputs": [{"name": "answer"}],
         "agents": [DEPLOYER]}]})

    def run(replies, **answer):
        k = deployer_kernel(deployed)
        try:
            ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:ops", replies=replies), checkpoints=db)
            return ex.resume("wf", graph=graph, **answer) if answer else ex.run(graph, {"goal": "ship"}, run_id="wf")
        finally:
            k.close()

    assert run([deploy("staging")]).interrupts[0].question == "Deploy staging?"
    again = run([deploy("production"), "shipped"], answer="yes")
    assert deployed == [] and again.status == "paused" and again.interrupts[0].question == "Deploy production?"


def test_a_yes_to_a_tool_approval_is_not_the_answer_to_a_question_asked_at_its_place(tmp_path):
    """Attack: the node's model calls the sensitive ``wipe('/tmp/x')``; the human approves it. On the re-run the
    model first calls ``confirm_deploy('production')``, whose question comes at the approval's position.
    Defence: the yes approved the wipe, it does not answer "Deploy production?": that is asked anew."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    deployed, runs, db = [], [], str(tmp_path / "runs.db")
    graph = WorkFlowGraph.from_dict({"name": "ops", "goal": "ship", "edges": [], "nodes": [
        {"name": "ship", "description": "ship", "inputs": [{"name": "goal"}], "outputs": [{"name": "answer"}],
         "agents": [{**ASKER, "tools": ["wipe", "confirm_deploy"]}]}]})

    def run(replies, **answer):
        k = deployer_kernel(deployed, wipe_kernel(runs))
        try:
            ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:ops", replies=replies), checkpoints=db)
            return ex.resume("wf", graph=graph, **answer) if answer else ex.run(graph, {"goal": "ship"}, run_id="wf")
        finally:
            k.close()

    wipe = {"content": None, "tool_calls": [{"name": "wipe", "arguments": {"path": "/tmp/x"}}]}
    assert '"wipe"' in run([wipe]).interrupts[0].question
    again = run([deploy("production"), "shipped"], answer="yes")
    assert deployed == [] and again.status == "paused" and again.interrupts[0].question == "Deploy production?"


def test_a_chat_turns_yes_is_not_the_answer_to_another_question_asked_at_its_place(tmp_path):
    """Group chat: as above, the speaker's tool asked "Deploy staging?" and got a yes; on the re-run of the turn
    the model asks about production at that position. Defence: the chat pauses on "Deploy production?"."""
    from zagent.plugins.actions import CustomizeAgent
    from zagent.plugins.groupchat import GroupChat

    deployed, db = [], str(tmp_path / "runs.db")
    spec = {**DEPLOYER, "inputs": [{"name": "task"}], "prompt": "Do this: {task}"}

    def chat(replies, **answer):
        k = deployer_kernel(deployed)
        try:
            agent = CustomizeAgent.from_dict(spec, k, llm=k.llm("scripted:ops", replies=replies))
            group = GroupChat(kernel=k, agents=[agent], max_rounds=1, checkpoints=db)
            return group.resume("gc", **answer) if answer else group.run("ship it", run_id="gc")
        finally:
            k.close()

    assert chat([deploy("staging")]).interrupts[0].question == "Deploy staging?"
    again = chat([deploy("production"), "shipped"], answer="yes")
    assert deployed == [] and again.status == "paused" and again.interrupts[0].question == "Deploy production?"


def test_a_yes_is_not_the_answer_to_another_question_on_a_remote_worker(tmp_path):
    """As above, with the node run on a remote executor's worker (JSON over the wire, another kernel): the
    worker's tool asks "Deploy staging?", gets a yes, and on the re-run asks "Deploy production?" at that
    position. Defence: the driver ships the questions asked so far; the worker asks the new one anew."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    from tests.batch.shipping import ShippingExecutor

    deployed, targets, db = [], ["staging", "production"], str(tmp_path / "runs.db")

    def confirm_deploy() -> str:
        """Ask the user to confirm the deployment, then deploy."""
        target = targets[0]  # what the model picked this time
        if zagent.interrupt(f"Deploy {target}?") == "yes":
            deployed.append(target)
        return "done"

    spec = {"name": "Shipper", "prompt": "Ship {goal}", "inputs": [{"name": "goal"}], "outputs": [{"name": "out"}],
            "parse_mode": "str", "tools": ["confirm_deploy"]}
    graph = WorkFlowGraph.from_dict({"name": "ops", "goal": "ship", "edges": [], "nodes": [
        {"name": "ship", "description": "ship", "inputs": [{"name": "goal"}], "outputs": [{"name": "out"}],
         "agents": [spec]}]})
    k = make_kernel()
    k.add_tool(confirm_deploy)
    first, second = ShippingExecutor(), ShippingExecutor()
    try:
        for worker in (first, second):
            worker.worker.add_tool(confirm_deploy)
        paused = WorkFlowExecutor(kernel=k, executor=first, checkpoints=db).run(graph, {"goal": "it"}, run_id="r")
        assert paused.interrupts[0].question == "Deploy staging?"
        targets.pop(0)
        again = WorkFlowExecutor(kernel=k, executor=second, checkpoints=db).resume("r", graph=graph, answer="yes")
        assert deployed == [] and again.status == "paused" and again.interrupts[0].question == "Deploy production?"
    finally:
        first.worker.close()
        second.worker.close()
        k.close()


def test_a_workflow_approval_question_shows_bidi_and_invisible_characters_escaped(tmp_path):
    """Attack: the model's ``wipe`` path carries a right-to-left override, isolates and a zero-width space, so an
    app showing ``result.interrupts[0].question`` in its UI renders a harmless-looking path. Defence: the question
    zagent writes has them escaped (``\\u202e``), so the person reads the characters the call will get."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    runs, path = [], "/\u2066\u202e/x/pmt\u2069\u200b"
    graph = WorkFlowGraph.from_dict({"name": "ops", "goal": "clean up", "edges": [], "nodes": [
        {"name": "clean", "description": "clean", "inputs": [{"name": "goal"}], "outputs": [{"name": "answer"}],
         "agents": [{**ASKER, "tools": ["wipe"]}]}]})
    k = wipe_kernel(runs)
    ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:ops", replies=[
        {"content": None, "tool_calls": [{"name": "wipe", "arguments": {"path": path}}]}]),
        checkpoints=str(tmp_path / "runs.db"))
    question = ex.run(graph, {"goal": "free"}, run_id="wf").interrupts[0].question
    assert not any(c in question for c in "\u2066\u202e\u2069\u200b") and "\\u202e" in question
    k.close()


@pytest.mark.xfail(strict=True, reason="an unsigned checkpoint is data anyone who can write the store may edit "
                                       "(docs/security.md 11, 'What checkpoints do not protect'): an answer to a "
                                       "plain zagent.interrupt edited in is taken; sign checkpoints "
                                       "(checkpoint_key) so an edited answer is refused")
def test_an_answer_edited_into_an_unsigned_store_for_an_interrupt_never_asked_is_not_taken(tmp_path):
    """Attack: a workflow ``draft`` -> ``review`` (asks "Deploy?") crashed in ``draft``; the unsigned store gets
    ``answers: {"review": ["yes"]}``; the run is resumed. The review node must ask its question, not take the
    edited yes."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    db, deployed, fail = str(tmp_path / "runs.db"), [], [True]

    def draft(goal):
        if fail[0]:
            raise RuntimeError("crash")
        return {"plan": "p"}

    def review(plan):
        ok = zagent.interrupt("Deploy?")
        if ok == "yes":
            deployed.append(plan)
        return {"done": ok}

    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "goal"}], "nodes": [
        {"name": "draft", "description": "d", "inputs": [{"name": "goal"}], "outputs": [{"name": "plan"}],
         "agents": [draft]},
        {"name": "review", "description": "r", "inputs": [{"name": "plan"}], "outputs": [{"name": "done"}],
         "agents": [review]}], "edges": [{"source": "draft", "target": "review"}]})
    k = make_kernel()
    store = k.memory("checkpoints", path=db)
    ex = WorkFlowExecutor(kernel=k, checkpoints=store, retries=0)
    assert ex.run(graph, {"goal": "g"}, run_id="wf").status == "failed"
    step, raw = store.latest("wf")
    state = msgspec.json.decode(raw)
    state["answers"] = {"review": ["yes"]}
    store.save("wf", step + 1, msgspec.json.encode(state), kind=store.list()[0].kind)
    fail[0] = False
    result = ex.run(graph, {"goal": "g"}, run_id="wf")
    assert deployed == [] and result.status == "paused"
    k.close()
