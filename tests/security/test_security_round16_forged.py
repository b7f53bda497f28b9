"""Round sixteen: forged or replayed approvals, and edited checkpoints, state and records.

Attacks tried (session 2026-12-07, redteam round sixteen, family "forged") against the code of the round's start:
19 cases in 11 test functions, and round fifteen's strict xfail; 8 got through here and that one (three kinds),
all fixed; one new case left open (strict xfail).

- one approval sent by two resumes at once (two workers): ReAct ``approve=``, a group chat's and a workflow node's
  "yes" (a declared agent's call and a ReAct agent's): GOT THROUGH (4, the call ran twice: each resume looked for
  the record of spent approvals, then wrote it) -- fixed: ``spent.claim`` looks and records in one step (a lock,
  an ``O_EXCL`` file), used by ``react/seals.spend_approvals`` and ``actions/asked._spend``; in one process
  (threads) held but for a narrow window (4 cases)
- a store given another store's identity (round fifteen's strict xfail): an unsigned ReAct run (with unsealed counts
  accepted; ``test_security_round15_storeid``), a signed run's rows, a group chat's and a workflow's yes: GOT
  THROUGH (4) -- fixed: the user's zagent records outside the file the identity each path's store had
  (``plugins/memory/identity.py``); a file whose identity changed under its path is a ``StoreError``
- another store's pre-upgrade signed step put in place of a legacy row together with its ``legacy_steps`` mark
  (round fifteen's documented open case): GOT THROUGH (1, resumed as the run's own) -- fixed: the legacy steps a
  file held when the user's zagent gave it its identity are recorded outside it too (``identity.legacy_allowed``)
- held: a yes to call an agent as a tool approving the agent's own call sent under the approved id (declared and
  ReAct); a rolled-back held call's seal edited so its spent record is not found, then ``approve=`` replayed; another
  store's signed rows copied in and the schema set back to 4 so they are re-recorded as legacy steps; schema 4 set
  with ``store_info`` kept (a ``StoreError`` naming the file)
- OPEN (strict xfail): a store file planted with another store's identity before the user's zagent first opened it
  at its path (nothing earlier to compare); likewise legacy marks of a file given its identity elsewhere
"""
import asyncio
import os
import threading

import pytest

from zagent.agentkit import spent
from zagent.plugins.memory.checkpoints import CheckpointStore
from zagent.plugins.react import ReActLoop

from .conftest import edit_latest
from .test_security_round14_approvals import (DANGER, _call, _delete, _held, _ops, _ProcessEnds, _reply, _resume,
                                              _stop)
from .test_security_round15_storeid import _chat, _flow

pytestmark = pytest.mark.timeout(120)


# -- two resumes of one approval at once ------------------------------------------------------------------------


class _Forgets(set):
    """``spent``'s in-process record as another process sees it: it never holds this process's approvals."""

    def __contains__(self, item):
        return False

    def add(self, item):
        pass


def _racing(monkeypatch, *, processes):
    """Make the two resumes of a test meet as they record an approval as spent: each waits for the other as it
    creates the record's file (after it looked for one), so both look before either writes. ``processes``: the two
    resumes do not share the in-process record (two workers of a web app)."""
    from zagent.agentkit import privatefiles

    meet, opened = threading.Barrier(2), privatefiles.open_private

    def waiting(path, *args, **kw):
        if os.path.basename(os.path.dirname(os.fspath(path))) == "approvals-ran":
            try:
                meet.wait(timeout=2)
            except threading.BrokenBarrierError:
                pass  # the other resume did not come here (it found the approval spent, or waits for this one)
        return opened(path, *args, **kw)

    monkeypatch.setattr(privatefiles, "open_private", waiting)
    if processes:
        monkeypatch.setattr(spent, "_HERE", _Forgets())


class _WholeStates(CheckpointStore):
    """An app's checkpoint store over the same SQLite file that saves every step whole (no patches, as a store of
    your own may): nothing in it compares a step with the latest one before writing."""

    save_patch = asave_patch = None


def _whole(path):
    return _WholeStates.open(path)


def _aresume_react(ran, db, run_id):
    """``run_id`` resumed by ``aresume`` with the person's ``approve=["c1"]``, on an event loop of its own (a
    worker of its own): its status."""
    k = _ops(ran)
    try:
        loop = ReActLoop(kernel=k, llm=k.llm("scripted:r", replies=["done"]), tools=["danger"], agent_config={},
                         checkpoints=_whole(db), on_pause=_stop)
        return asyncio.run(loop.aresume(run_id, approve=["c1"])).status
    except _ProcessEnds:
        return "paused"
    finally:
        k.close()


def _achat(ran, db, answer):
    """Group chat ``ticket-7`` resumed with ``answer`` by ``aresume`` on an event loop of its own."""
    from zagent.plugins.actions import CustomizeAgent
    from zagent.plugins.groupchat import GroupChat

    k = _ops(ran)
    try:
        agent = CustomizeAgent.from_dict(DANGER, k, llm=k.llm("scripted:ops", replies=[_delete("/tmp/x"), "done"]))
        return asyncio.run(GroupChat(kernel=k, agents=[agent], max_rounds=1, checkpoints=_whole(db)).aresume(
            "ticket-7", answer=answer))
    finally:
        k.close()


def _graph(agent):
    from zagent.plugins.workflow import WorkFlowGraph

    return WorkFlowGraph.from_dict({"name": "ops", "goal": "clean up", "inputs": [{"name": "task"}], "edges": [],
                                    "nodes": [{"name": "clean", "description": "clean", "inputs": [{"name": "task"}],
                                               "outputs": [{"name": "answer"}], "agents": [agent]}]})


REACT_OPS = {"type": "react", "name": "ops", "description": "cleans", "tools": ["danger"]}


def _react_flow(ran, db, replies, answer=None):
    """Workflow run ``ticket-7`` whose node's agent is a ReAct agent (its held call asked by ``arun_asking``):
    started (``answer`` None) or resumed with ``answer`` by ``aresume`` on an event loop of its own."""
    from zagent.plugins.workflow import WorkFlowExecutor

    k = _ops(ran)
    try:
        ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:ops", replies=list(replies)), checkpoints=_whole(db))
        if answer is None:
            return ex.run(_graph(REACT_OPS), {"task": "free disk"}, run_id="ticket-7")
        return asyncio.run(ex.aresume("ticket-7", graph=_graph(REACT_OPS), answer=answer))
    finally:
        k.close()


def _aflow(ran, db, answer):
    """Workflow run ``ticket-7`` resumed with ``answer`` by ``aresume`` on an event loop of its own."""
    from zagent.plugins.workflow import WorkFlowExecutor

    k = _ops(ran)
    try:
        ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:ops", replies=[_delete("/tmp/x"), "done"]),
                              checkpoints=_whole(db))
        return asyncio.run(ex.aresume("ticket-7", graph=_graph(DANGER), answer=answer))
    finally:
        k.close()


def _both(*attempts):
    """Run ``attempts`` in two threads at once; their outcomes (a result or the exception raised)."""
    out = [None, None]

    def go(i):
        try:
            out[i] = attempts[i]()
        except BaseException as exc:  # noqa: BLE001 - recorded, the test reads it
            out[i] = exc

    threads = [threading.Thread(target=go, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out


@pytest.mark.parametrize("processes", [False, True], ids=["threads", "processes"])
def test_a_react_approval_sent_twice_at_once_runs_its_call_once(tmp_path, monkeypatch, processes):
    """Attack (got through as ``processes``): the person's ``approve=["c1"]`` reaches the app twice at once (a
    double click, a retried request on a second worker); both resume the run. Each looked for the record of spent
    approvals, found none, recorded it and ran ``danger``: twice. (``threads`` shared the in-process record: held
    but for a narrow window.) Defence: an approval is claimed, looked up and recorded in one step (``spent.claim``:
    a lock, an ``O_EXCL`` file); the loser tells the model the yes was used."""
    ran, db = [], str(tmp_path / "r.db")
    run_id = _held(ran, db, [_reply(_call("/tmp/x"))])
    _racing(monkeypatch, processes=processes)
    _both(lambda: _aresume_react(ran, db, run_id), lambda: _aresume_react(ran, db, run_id))
    assert ran == ["/tmp/x"]


@pytest.mark.parametrize("processes", [False, True], ids=["threads", "processes"])
@pytest.mark.parametrize("engine", [(_chat, _achat), (_flow, _aflow), (_react_flow, None)],
                         ids=["groupchat", "workflow", "workflow-react-node"])
def test_a_yes_given_twice_at_once_runs_its_call_once(tmp_path, monkeypatch, engine, processes):
    """Attack (got through as ``processes``): as above for a group chat turn and a workflow node (a declared agent's
    call, a ReAct agent's) waiting on the person's yes to ``danger("/tmp/x")``: two resumes with "yes" at once both
    found the yes unspent (``_bound``) and ran the call. Defence: the yes is claimed as its call is about to run
    (``asked._spend``); the resume that loses gives the model ``ran_result``, not the call."""
    ran, db = [], str(tmp_path / "one.db")
    start, resume = engine
    assert start(ran, db, [_delete("/tmp/x")]).status == "paused"
    _racing(monkeypatch, processes=processes)
    if resume is None:
        _both(*[lambda: start(ran, db, [_delete("/tmp/x"), "done"], answer="yes")] * 2)
    else:
        _both(lambda: resume(ran, db, "yes"), lambda: resume(ran, db, "yes"))
    assert ran == ["/tmp/x"]


# -- an approval of one call reaching another -------------------------------------------------------------------


def _helper_run(ran, db, kind, replies, run_id=None, approve=("c1",)):
    """Kernel with a sensitive ``danger`` and agent ``helper`` (declared or ReAct, offered ``danger``) as a tool
    that needs a person's yes; process one runs until the person is asked about ``helper`` (its run id), process two
    resumes ``run_id`` with ``approve``, ``helper``'s model sending ``replies``. The approver decides later."""
    from zagent.plugins.actions import CustomizeAgent
    from zagent.plugins.react import ReActAgent

    k = _ops(ran, rails={"approval": {"tools": ["helper"]}})
    try:
        llm = k.llm("scripted:h", replies=list(replies))
        if kind == "declared":
            agent = CustomizeAgent.from_dict({**DANGER, "name": "helper"}, k, llm=llm)
        else:
            agent = ReActAgent(kernel=k, name="helper", description="helps", tools=["danger"], llm=llm)
        agent.as_tool()
        call = _reply({"id": "c1", "name": "helper", "arguments": {"task": "free disk"}})
        loop = ReActLoop(kernel=k, llm=k.llm("scripted:o", replies=[call] if run_id is None else ["fine", "fine"]),
                         tools=["helper"], agent_config={}, checkpoints=k.memory("checkpoints", path=db),
                         on_pause=_stop)
        if run_id is None:
            with pytest.raises(_ProcessEnds):
                loop.run("go")
            return loop.state.run_id
        try:
            return loop.resume(run_id, approve=list(approve)).status
        except _ProcessEnds:
            return "paused"
    finally:
        k.close()


@pytest.mark.parametrize("kind", ["declared", "react"])
def test_a_yes_to_call_an_agent_does_not_approve_the_agents_own_calls(tmp_path, kind):
    """Attack (held): the person approves calling agent ``helper`` (``approve=["c1"]``); ``helper``'s model then
    calls the sensitive ``danger("/")`` under the very id ``c1`` the person approved. Defence: an approval names
    the call's minted id, tool and arguments, in the frame of the agent asked; ``helper``'s call is its own, asked
    anew (and, with no one to resume ``helper``, not run)."""
    ran, db = [], str(tmp_path / "r.db")
    run_id = _helper_run(ran, db, kind, [])
    _helper_run(ran, db, kind, [_reply(_call("/")), "done"], run_id)
    assert ran == []


# -- edited checkpoints: a spent approval's seal, a store's schema ----------------------------------------------


def test_a_rolled_back_held_calls_seal_edited_does_not_make_a_replayed_approve_run_it(tmp_path):
    """Attack (held): ``danger("/tmp/x")`` approved by ``approve=["c1"]`` ran; the unsigned store is rolled back to
    the step holding it and the held call's seal edited (one character), so that its record of spent approvals
    (named by the seal) is not found; the app's ``approve=["c1"]`` is sent again. Defence: a call whose seal does
    not hold is no longer awaiting (``restoring``): the replayed ``approve=`` approves nothing, the rail asks anew."""
    from .test_security_round15b_forged import _rolled_back

    ran, db, run_id = _rolled_back(tmp_path)

    def reseal(state):
        seal = state["held_seals"]["c1"]
        state["held_seals"]["c1"] = seal[:-1] + ("0" if seal[-1] != "0" else "1")

    edit_latest(db, run_id, reseal)
    assert _resume(ran, db, run_id) == "paused"
    assert ran == ["/tmp/x"]


def _schema_4(path):
    """The attacker brings ``path`` back to schema 4 (no identity, no legacy marks), so the next open migrates it
    again: the signed steps it then holds are recorded as steps the store held before store identities."""
    import sqlite3

    with sqlite3.connect(path) as c:
        c.execute("DROP TABLE store_info")
        c.execute("DROP TABLE legacy_steps")
        c.execute("PRAGMA user_version = 4")
    c.close()


def test_a_signed_step_copied_from_another_store_then_the_schema_downgraded_is_refused(tmp_path):
    """Attack (held): tenant one's signed ``ticket-7`` holds ``danger("/")``; its rows (signed after store
    identities, bound to store one) are put in place of tenant two's, and two's file brought back to schema 4 so
    that the migration records them as legacy steps (accepted with a signature naming no store). Two's person
    approves ``c1``. Defence: a legacy step is accepted only with a MAC made without any store; these name store
    one: refused, ``"/"`` does not run."""
    from .test_security_round14_approvals import KEY, _refusals
    from .test_security_round15_storeid import _copy_rows, _held_as, _resume_react

    ran, one, two = [], str(tmp_path / "one.db"), str(tmp_path / "two.db")
    _held_as(ran, one, "/", checkpoint_key=KEY)
    _held_as(ran, two, "/tmp/x", checkpoint_key=KEY)
    _copy_rows(one, two)
    _schema_4(two)
    errors = _refusals(lambda: _resume_react(ran, two, checkpoint_key=KEY))
    assert ran == []
    assert any("does not match its signature" in e for e in errors), errors


def test_a_store_brought_back_to_schema_4_with_its_identity_kept_is_refused_saying_so(tmp_path):
    """Attack (held): the attacker sets the file's ``PRAGMA user_version`` back to 4 but keeps ``store_info`` (so
    the migration cannot make it again). Defence: the file is refused as a ``StoreError`` naming it and saying its
    version was set back (not the old "check the path, its directory and permissions"); no call runs."""
    import sqlite3

    from zagent.plugins.memory.errors import StoreError

    from .test_security_round15_storeid import _held_as, _resume_react

    ran, db = [], str(tmp_path / "r.db")
    _held_as(ran, db, "/tmp/x")
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA user_version = 4")
    c.close()
    with pytest.raises(StoreError, match="r.db.*version was set back by hand.*Restore the file"):
        _resume_react(ran, db)
    assert ran == []


# -- a store given another store's identity (round fifteen's open case) ------------------------------------------


def _give_identity(source, target):
    """The attacker writes store ``source``'s identity (it is no secret: it is in the file) into ``target``."""
    import sqlite3

    with sqlite3.connect(source) as c:
        theirs = c.execute("SELECT value FROM store_info WHERE name = 'store_id'").fetchone()[0]
    c.close()
    with sqlite3.connect(target) as c:
        c.execute("UPDATE store_info SET value = ? WHERE name = 'store_id'", (theirs,))
    c.close()


def test_a_signed_runs_rows_copied_with_the_other_stores_identity_are_refused(tmp_path):
    """Attack (got through): signed stores; tenant one's ``ticket-7`` holds ``danger("/")``. Its rows (signatures
    and seals bound to store one) are put in place of tenant two's, and one's identity written into two's
    ``store_info``: every signature and seal holds in two, and two's person's ``approve=["c1"]`` ran ``"/"``.
    Defence: the identity two's file had at its path is recorded outside the file; it changed, so the store is
    refused (``StoreError``)."""
    from zagent.plugins.memory.errors import StoreError

    from .test_security_round14_approvals import KEY
    from .test_security_round15_storeid import _copy_rows, _held_as, _resume_react

    ran, one, two = [], str(tmp_path / "one.db"), str(tmp_path / "two.db")
    _held_as(ran, one, "/", checkpoint_key=KEY)
    _held_as(ran, two, "/tmp/x", checkpoint_key=KEY)
    _copy_rows(one, two)
    _give_identity(one, two)
    with pytest.raises(StoreError, match="remove the record"):
        _resume_react(ran, two, checkpoint_key=KEY)
    assert ran == []


def test_a_store_deleted_and_made_again_at_its_path_is_used(tmp_path):
    """Guard (no attack): a store file deleted and a new one made at its path (a new identity) opens, and so does a
    store moved to a path no store had; the new store's held call runs on its person's approval."""
    from .test_security_round15_storeid import _held_as, _resume_react

    ran, db, moved = [], str(tmp_path / "r.db"), str(tmp_path / "moved.db")
    _held_as(ran, db, "/tmp/old")
    os.remove(db)
    _held_as(ran, db, "/tmp/x")
    os.replace(db, moved)
    assert _resume_react(ran, moved) == "completed"
    assert ran == ["/tmp/x"]


@pytest.mark.xfail(strict=True, reason="open: a store file planted with another store's identity before this user's "
                                       "zagent first opened it at its path has no earlier identity to compare")
def test_a_store_planted_with_another_stores_identity_before_its_first_open_is_refused(tmp_path):
    """Attack (open): the attacker makes tenant two's store file before the app first opens it, with tenant one's
    identity in it; the app's runs in two are then bound to one's identity, and one's held call copied into two
    runs on two's person's approval. Wanted: refused. (Telling it from a store file moved or copied whole, which
    keeps its identity, needs a record of which path each identity belongs to.)"""
    import shutil

    from .test_security_round15_storeid import ACCEPT, _copy_latest, _held_as, _resume_react

    ran, one, two = [], str(tmp_path / "one.db"), str(tmp_path / "two.db")
    _held_as(ran, one, "/")
    shutil.copy(one, two)
    import sqlite3

    with sqlite3.connect(two) as c:
        c.execute("DELETE FROM checkpoints")
    c.close()
    _held_as(ran, two, "/tmp/x")
    _copy_latest(one, two)
    try:
        _resume_react(ran, two, **ACCEPT)
    except Exception:  # noqa: BLE001 - a refusal is the defence
        pass
    assert ran == []


@pytest.mark.parametrize("engine", [_chat, _flow], ids=["groupchat", "workflow"])
def test_a_yes_does_not_run_a_call_asked_in_a_store_whose_identity_was_copied(tmp_path, engine):
    """Attack (got through): unsigned stores, the app accepting unsealed counts; tenant one's ``ticket-7`` (a group
    chat turn, a workflow node) waits on the person's yes to ``danger("/")``; its paused state is saved as tenant
    two's only step and one's identity written into two's ``store_info``; two's person says "yes". ``"/"`` ran.
    Defence: two's identity changed under its path: the store is refused (``StoreError``)."""
    from zagent.plugins.memory.errors import StoreError

    from .test_security_round15_storeid import ACCEPT, _copy_latest

    ran, one, two = [], str(tmp_path / "one.db"), str(tmp_path / "two.db")
    assert engine(ran, one, [_delete("/")], **ACCEPT).status == "paused"
    assert engine(ran, two, [_delete("/tmp/x")], **ACCEPT).status == "paused"
    _copy_latest(one, two, only=True)
    _give_identity(one, two)
    with pytest.raises(StoreError, match="another store's file"):
        engine(ran, two, [_delete("/"), "done"], answer="yes", **ACCEPT)
    assert ran == []


def test_another_stores_legacy_step_and_its_legacy_mark_written_in_after_the_upgrade_are_refused(tmp_path,
                                                                                                  monkeypatch):
    """Attack (got through): signed stores (one key for every tenant) of zagent 4, both upgraded; tenant one's
    ``ticket-7`` (held ``danger("/")``, signed without a store) is put in place of two's rows, and one's
    ``legacy_steps`` marks in place of two's; two's person approves ``c1``. One's state was resumed as two's run
    (its transcript and counts; its held call, sealed without a store, asked anew). Defence: the user's zagent
    records, outside the file, the legacy steps the file held when it gave it its identity
    (``identity.legacy_allowed``); a mark not there vouches for nothing: ``CheckpointError``."""
    import sqlite3

    from .test_security_round14_approvals import KEY, _refusals
    from .test_security_round15_legacy import _old_held_run, _upgraded
    from .test_security_round15_storeid import RUN, _copy_rows, _resume_react

    ran, one, two = [], str(tmp_path / "one.db"), str(tmp_path / "two.db")
    _old_held_run(monkeypatch, ran, (one, "/"), (two, "/tmp/x"))
    _upgraded(one)
    assert _upgraded(two)
    _copy_rows(one, two)
    with sqlite3.connect(two) as c:
        c.execute("ATTACH DATABASE ? AS src", (one,))
        c.execute("DELETE FROM main.legacy_steps WHERE run_id = ?", (RUN,))
        c.execute("INSERT INTO main.legacy_steps SELECT * FROM src.legacy_steps WHERE run_id = ?", (RUN,))
    c.close()
    errors = _refusals(lambda: _resume_react(ran, two, checkpoint_key=KEY))
    assert ran == []
    assert any("not a step the store held" in e for e in errors), errors
