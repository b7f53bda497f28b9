"""Round fifteen, wave two: forged approvals (a tool call run without the approval the app's rails require, or a
call run other than the one approved), on the paths next to those rounds fourteen and fifteen defended.

Attacks tried (session 2026-12-07, redteam wave two, family "forged") against the code of the wave's start: 15
attack cases and 2 guards; 9 got through (six kinds), all fixed; 6 held.

- a ``Handoffs`` group built by the app (``Handoffs(k, [front, billing])``), ``front`` asking a person before
  ``steal`` (its own ``rails.approval``), ``billing`` without rules: ``front``'s model hands over and billing's
  model calls ``steal``: GOT THROUGH (the group took the rails of the agents handing over only from the context
  it was given, so a group started without one dropped them; ``agent.chat``'s own handoffs kept them) -- fixed:
  each hop's agent keeps the rails of every agent that handed over before it (``handoff._kept_rails``)
- the same two hops down (``front`` -> ``billing`` -> ``payout``), the rule on the middle agent: GOT THROUGH
  (only the first context's rails were kept) -- fixed likewise
- a declared agent as the handoff target, its own ``agent_config.rails`` asking before ``steal``: GOT THROUGH (the
  hand-over ran it as a ReAct agent whose empty ``rails`` replaced them; its guardrails were dropped too) -- fixed
- a ReAct agent given its rails as ``agent_config={"rails": ...}`` (as declared agents and ``Agent.agent_config``
  take them), in Python or in its spec: GOT THROUGH (``run_config`` replaced them with the empty ``rails`` field)
  -- fixed: used when ``rails`` is empty; both set and different is a ``ConfigError``
- a ReAct run's store rolled back (its later steps deleted; unsigned and signed) to the step holding a call the
  person had approved and that ran, then ``approve=["c1"]`` sent again: GOT THROUGH (the call ran twice) -- fixed:
  an ``approve=`` is recorded as spent under the held call's seal, which now carries a random name
  (``seals.spend_approvals``); a later run of the same id holding the same call is approved anew (guard)
- a ReAct loop run in the app's own context (``loop.run(task, ctx=ctx)``) whose ``agent_config`` has rails: GOT
  THROUGH (the context's rails replaced the loop's approval rule) -- fixed: the loop's rails are one more layer
- arguments read differently by the person and the tool: ``"1e2"``/``1e2``/``"7"`` for an ``int``, a JSON text
  with a duplicate key (the console, an approver callback; a workflow yes matched against the call re-sent with a
  duplicate key): held (the approver sees the validated arguments the tool gets; a yes binds the arguments sent)
"""

import pytest

from zagent.plugins.react import Handoffs

from .conftest import make_kernel

pytestmark = pytest.mark.timeout(60)

STEAL = {"name": "steal", "arguments": {"path": "/etc/shadow"}}


def calls(*items):
    return {"content": None, "tool_calls": list(items)}


def transfer(to):
    return calls({"name": f"transfer_to_{to}", "arguments": {"reason": "yours"}})


class _Person:
    """The kernel's approver: answers ``answer`` and remembers the tools it was asked about."""

    def __init__(self, answer):
        self.answer, self.asked = answer, []

    def __call__(self, call, ctx):
        self.asked.append(call.name)
        return self.answer


def _agent(k, name, replies, tools=("word_count",), rails=None):
    agent = k.agent({"type": "react", "name": name, "description": name, "tools": list(tools),
                     **({"rails": rails} if rails else {})})
    agent.llm = k.llm(f"scripted:{name}", replies=replies)
    return agent


ASK_STEAL = {"approval": {"tools": ["steal"]}}


@pytest.mark.parametrize("answer", [False, True], ids=["declined", "approved"])
def test_a_handoff_group_keeps_the_approval_rule_of_the_agent_handing_over(answer):
    """Attack (got through): the app builds ``Handoffs(k, [front, billing])``; ``front`` has a person approve every
    ``steal`` (its own ``rails.approval``), ``billing`` has no rules. ``front``'s model hands over and billing's
    model calls ``steal``; it ran unasked (the group's context carried no agent's rails). Defence: the agent
    answering after a hand-over keeps the rails of the agent that handed over; the person is asked, and only a yes
    runs the call."""
    person = _Person(answer)
    k = make_kernel(config={"rails": {"approver": person}})
    try:
        front = _agent(k, "front", [transfer("billing"), "front done"], rails=ASK_STEAL)
        billing = _agent(k, "billing", [calls(STEAL), "billing done"], tools=("steal",))
        result = Handoffs(k, [front, billing], routes={"front": ["billing"]}).chat("pay me")
        assert result.answered_by == "billing"
        assert person.asked == ["steal"]
        assert k.spy.ran == (["steal"] if answer else [])
    finally:
        k.close()


def test_a_second_handoff_keeps_the_approval_rule_of_the_agent_in_the_middle():
    """Attack (got through): ``front`` (no rules) hands over to ``billing`` (a person approves ``steal``), whose
    model hands over in turn to ``payout`` (no rules), whose model calls ``steal``: it ran unasked. Defence: every
    agent that handed the conversation over leaves its rails as a floor for those after it; declined, nothing
    runs."""
    person = _Person(False)
    k = make_kernel(config={"rails": {"approver": person}})
    try:
        front = _agent(k, "front", [transfer("billing"), "front done"])
        billing = _agent(k, "billing", [transfer("payout"), "billing done"], rails=ASK_STEAL)
        payout = _agent(k, "payout", [calls(STEAL), "payout done"], tools=("steal",))
        group = Handoffs(k, [front, billing, payout], routes={"front": ["billing"], "billing": ["payout"]})
        result = group.chat("pay me")
        assert result.answered_by == "payout" and person.asked == ["steal"] and k.spy.ran == []
    finally:
        k.close()


def test_a_declared_handoff_target_keeps_its_own_approval_rule():
    """Attack (got through): ``front`` (no rules) hands over to ``payout``, a declared agent whose own
    ``agent_config.rails`` has a person approve ``steal`` (as it does when run on its own); payout's model calls
    ``steal``, and it ran unasked: the hand-over ran the declared agent as a ReAct agent whose ``rails`` field
    (empty) replaced those of its config. Defence: the ReAct agent made for it keeps its rails (and guardrails);
    declined, nothing runs."""
    person = _Person(False)
    k = make_kernel(config={"rails": {"approver": person}})
    try:
        front = _agent(k, "front", [transfer("payout"), "front done"])
        payout = k.agent({"name": "payout", "description": "pays", "prompt": "Do: {task}", "inputs": [{"name": "task"}],
                          "outputs": [{"name": "answer"}], "parse_mode": "str", "tools": ["steal"],
                          "agent_config": {"rails": ASK_STEAL}})
        payout.llm = k.llm("scripted:payout", replies=[calls(STEAL), "payout done"])
        result = Handoffs(k, [front, payout]).chat("pay me")
        assert result.answered_by == "payout" and person.asked == ["steal"] and k.spy.ran == []
    finally:
        k.close()


@pytest.mark.parametrize("how", ["object", "spec"])
def test_a_react_agents_rails_given_in_agent_config_ask_the_person(how):
    """Attack (got through): the app gives a ReAct agent its rails the way declared agents and
    ``Agent.agent_config`` take them (``agent_config={"rails": {"approval": {"tools": ["steal"]}}}``, in Python
    or in the agent's spec); the model calls ``steal`` and it ran unasked: each run's settings replaced them with the
    agent's empty ``rails`` field. Defence: with ``rails`` left empty, the ``agent_config`` rails are the agent's
    rails; the person is asked and declines."""
    from zagent.plugins.react import ReActAgent

    person = _Person(False)
    k = make_kernel(config={"rails": {"approver": person}})
    try:
        llm = k.llm("scripted:a", replies=[calls(STEAL), "done"])
        if how == "object":
            agent = ReActAgent(kernel=k, name="A", tools=["steal"], agent_config={"rails": ASK_STEAL}, llm=llm)
        else:
            agent = k.agent({"type": "react", "name": "A", "tools": ["steal"], "agent_config": {"rails": ASK_STEAL}})
            agent.llm = llm
        agent.chat("go", use_react=True)
        assert person.asked == ["steal"] and k.spy.ran == []
    finally:
        k.close()


def test_a_react_agent_with_two_different_rails_is_refused_not_merged_silently():
    """Guard: rails given both as ``rails=`` and, differently, as ``agent_config["rails"]`` are a ``ConfigError``
    naming both places (one of them was dropped unsaid before), and no tool runs."""
    from zagent.errors import ConfigError
    from zagent.plugins.react import ReActAgent

    k = make_kernel(config={"rails": {"approver": _Person(True)}})
    try:
        agent = ReActAgent(kernel=k, name="A", tools=["steal"], rails={"deny_tools": ["word_count"]},
                           agent_config={"rails": ASK_STEAL}, llm=k.llm("scripted:a", replies=[calls(STEAL), "done"]))
        with pytest.raises(ConfigError, match="agent_config"):
            agent.chat("go", use_react=True)
        assert k.spy.ran == []
    finally:
        k.close()


# -- a ReAct run rolled back to the step holding an approved call ---------------------------------------------------

KEY = "round15b-forged-" + "0123456789abcdef" * 2


def _rolled_back(tmp_path, **config):
    """Run ``r``: ``danger("/tmp/x")`` held for a person, approved by id (it runs once); the attacker then deletes
    the run's later steps from the store, so its latest step is the one holding the call again. The paths run."""
    import sqlite3

    from .test_security_round14_approvals import _call, _held, _reply, _resume

    ran, db = [], str(tmp_path / "r.db")
    run_id = _held(ran, db, [_reply(_call("/tmp/x"))], **config)
    with sqlite3.connect(db) as c:
        held_at = c.execute("SELECT max(step) FROM checkpoints WHERE run_id = ?", (run_id,)).fetchone()[0]
    assert _resume(ran, db, run_id, **config) == "completed" and ran == ["/tmp/x"]
    with sqlite3.connect(db) as c:
        c.execute("DELETE FROM checkpoints WHERE run_id = ? AND step > ?", (run_id, held_at))
    return ran, db, run_id


@pytest.mark.parametrize("config", [{}, {"checkpoint_key": KEY}], ids=["unsigned", "signed"])
def test_a_react_approval_replayed_after_a_rollback_does_not_run_the_call_twice(tmp_path, config):
    """Attack (got through): the person approved ``danger("/tmp/x")`` (``approve=["c1"]``) and it ran; the store is
    rolled back to the step holding the call (its later steps deleted: a signature or counts seal cannot tell),
    and the app's ``approve=["c1"]`` is sent again (a retried request, a replayed job). The call ran a second time
    (workflows and group chats record a yes that ran; ReAct kept no such record). Defence: each approval given by
    ``approve=`` is recorded as spent under the held call's seal, which carries a random name of its own
    (``seals.spend_approvals``); replayed, the model is told the call already ran, and it does not run again."""
    from .test_security_round14_approvals import _resume

    ran, db, run_id = _rolled_back(tmp_path, **config)
    assert _resume(ran, db, run_id, **config) == "completed"
    assert ran == ["/tmp/x"]


def test_a_later_run_of_the_same_id_and_call_is_approved_anew(tmp_path):
    """Guard: a later run given the same run id (in another store) holds the very same call at the same step; the
    person's ``approve=["c1"]`` runs it: the record of the first approval names that hold only."""
    from .test_security_round14_approvals import _call, _DecidesLater, _ops, _reply

    from zagent.plugins.react import ReActLoop

    ran = []
    for _ in range(2):
        k = _ops(ran, _DecidesLater())
        try:
            loop = ReActLoop(kernel=k, llm=k.llm("scripted:r", replies=[_reply(_call("/tmp/x")), "done"]),
                             tools=["danger"], agent_config={})
            run = k.context(run_id="ticket-7")

            async def go():
                import asyncio

                task = asyncio.ensure_future(loop.arun("clean", ctx=run))
                await loop.wait_for_status("paused")
                loop.resume(approve=["c1"])
                return await task

            import asyncio

            asyncio.run(go())
        finally:
            k.close()
    assert ran == ["/tmp/x", "/tmp/x"]


# -- arguments that read differently to the person, the digest and the tool ----------------------------------------


class _Looker:
    """The kernel's approver: remembers the arguments it was shown, approves unless one of them is ``"/"``."""

    def __init__(self):
        self.shown = []

    def __call__(self, call, ctx):
        self.shown.append(dict(call.arguments))
        return "/" not in call.arguments.values()


def _sweeper(person):
    k = make_kernel(config={"rails": {"approver": person}})
    ran = []

    def sweep(path: str, depth: int = 1) -> str:
        """Delete ``path`` down to ``depth`` levels."""
        ran.append({"path": path, "depth": depth})
        return "swept"

    k.add_tool(sweep, sensitive=True)
    return k, ran


@pytest.mark.parametrize("arguments, runs", [
    ({"path": "/tmp/x", "depth": "1e2"}, {"path": "/tmp/x", "depth": 100}),
    ({"path": "/tmp/x", "depth": 1e2}, {"path": "/tmp/x", "depth": 100}),
    ({"path": "/tmp/x", "depth": "7"}, {"path": "/tmp/x", "depth": 7}),
    ('{"path": "/tmp/x", "path": "/tmp/y"}', {"path": "/tmp/y", "depth": 1}),
], ids=["exponent-text", "exponent", "number-text", "duplicate-key"])
def test_the_approver_is_shown_the_arguments_the_tool_runs_with(arguments, runs):
    """Attack (held): arguments the tool's lax validation reads otherwise than they are written (``"1e2"`` or
    ``1e2`` for an ``int``, ``"7"``, a JSON text with the key ``path`` twice), hoping the person approves one
    reading and the tool runs another. Defence: the approver is shown the arguments as validated (defaults filled
    in), which are the ones the tool gets."""
    person = _Looker()
    k, ran = _sweeper(person)
    try:
        loop_llm = k.llm("scripted:s", replies=[calls({"name": "sweep", "arguments": arguments}), "done"])
        agent = _agent(k, "ops", [], tools=("sweep",))
        agent.llm = loop_llm
        agent.chat("sweep", use_react=True)
        assert person.shown == [runs] and ran == [runs]
    finally:
        k.close()


def test_a_duplicate_key_hiding_the_root_is_shown_and_declined():
    """Attack (held): ``'{"path": "/tmp/x", "path": "/"}'`` as the call's JSON text: a display reading the first
    key would show ``/tmp/x`` while the tool reads the last. Defence: the person is shown ``"/"`` (the value the
    tool would get) and declines; nothing runs."""
    person = _Looker()
    k, ran = _sweeper(person)
    try:
        agent = _agent(k, "ops", [calls({"name": "sweep", "arguments": '{"path": "/tmp/x", "path": "/"}'}), "done"],
                       tools=("sweep",))
        agent.chat("sweep", use_react=True)
        assert person.shown == [{"path": "/", "depth": 1}] and ran == []
    finally:
        k.close()


def test_a_workflow_yes_does_not_cover_the_call_resent_with_a_duplicate_key(tmp_path):
    """Attack (held): a node's model calls ``danger("/tmp/x")``, the person answers yes; on the node's replay the
    model sends the call as JSON text ``{"path": "/tmp/x", "path": "/"}`` (reads as ``/`` to the tool), hoping the
    yes is matched on a first-key reading. Defence: the yes binds the digest of the arguments sent; these differ, so
    the call is asked about anew (its question shows ``/``) and nothing runs."""
    from .test_security_round14b_forged import _flow, _reply

    ran, db = [], str(tmp_path / "wf.db")
    first = _reply({"id": "c1", "name": "danger", "arguments": {"path": "/tmp/x"}})
    forged = _reply({"id": "c1", "name": "danger", "arguments": '{"path": "/tmp/x", "path": "/"}'})
    assert _flow(ran, db, [first]).status == "paused"
    again = _flow(ran, db, [forged, "done"], answer="yes")
    assert ran == [] and again.status == "paused"
    assert '"path":"/"' in again.interrupts[0].question.replace(" ", "")


def test_a_loop_run_in_a_callers_context_keeps_its_own_approval_rule():
    """Attack (got through): the app runs a ReAct loop whose own rails have a person approve ``steal`` inside its
    own context (``loop.run(task, ctx=ctx)``, as a tool handing work to a sub-loop does), that context carrying rails
    of its own (a deny list); the loop's model calls ``steal`` and it ran unasked: the caller's ``rails`` took the
    place of the loop's. Defence: the loop's rails are added as one more layer (rails only tighten); the person is
    asked and declines."""
    from zagent.plugins.react import ReActLoop

    person = _Person(False)
    k = make_kernel(config={"rails": {"approver": person}})
    try:
        loop = ReActLoop(kernel=k, llm=k.llm("scripted:l", replies=[calls(STEAL), "done"]), tools=["steal"],
                         agent_config={"rails": ASK_STEAL})
        loop.run("go", ctx=k.context(agent="outer", agent_config={"rails": {"deny_tools": ["word_count"]}}))
        assert person.asked == ["steal"] and k.spy.ran == []
    finally:
        k.close()
