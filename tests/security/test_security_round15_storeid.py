"""Round fifteen, runs of one id in two checkpoint stores: an app names runs itself (``ticket-7``) with one store
per tenant (or per user); a state of tenant one's run is copied into tenant two's store under the same id.

Attacks tried (session 2026-12-07) and whether they got through before this module's fix:

- ReAct: tenant one's held ``danger("/")`` saved as tenant two's next step, tenant two's person approving ``c1``
  (round fourteen's open xfail), also where the app accepts unsealed counts; a budget spent in tenant two reset by
  tenant one's fresh state; a signed run's whole step log copied over: GOT THROUGH (4: seals named the run id and
  step only, signatures the run id, step and kind only)
- the same for a group chat and a workflow node waiting on the person's yes, with and without unsealed counts
  accepted: GOT THROUGH (4: the record of the call asked and the yes named the run id and position only)
- fixed: each checkpoint store has an identity of its own, kept in its file (``store_info``, made with
  ``new_call_id`` once, on an older zagent's file at its first open); held calls' seals, counts seals, a yes's
  binding and a signed store's signatures name it (``zagent.agentkit.signing.store_identity``, ``Signer.within``)
- whoever can write the whole file can write its identity too (copy tenant one's into tenant two's store): open
  here (strict xfail), closed in round sixteen: the user's zagent records outside the file the identity each path's
  file had (``plugins/memory/identity.py``), and a file whose identity changed under its path is refused

Guards: the file copied whole (a backup restored, a store moved) keeps its identity and resumes its held run; a
file of schema 4 gets an identity on its first open and keeps it.
"""
import asyncio
import shutil
import sqlite3

import pytest

from zagent.errors import ProviderError
from zagent.plugins.memory.errors import StoreError

from .conftest import make_kernel
from .test_security_round14_approvals import (DANGER, KEY, _DecidesLater, _ProcessEnds, _call, _count, _delete,
                                              _loop, _ops, _refusals, _reply, _stop)

pytestmark = pytest.mark.timeout(60)

RUN = "ticket-7"
ACCEPT = {"accept_unsealed_counts": True}


def _held_as(ran, db, path, **config):
    """Run ``ticket-7`` (ReAct) pausing on ``danger(path)`` held as ``c1``, checkpointed to ``db``."""
    from zagent.plugins.react import ReActLoop

    k = _ops(ran, **config)
    try:
        loop = ReActLoop(kernel=k, llm=k.llm("scripted:r", replies=[_reply(_call(path))]), tools=["danger"],
                         agent_config={}, checkpoints=k.memory("checkpoints", path=db), on_pause=_stop)
        with pytest.raises(_ProcessEnds):
            asyncio.run(loop.arun("clean up", ctx=k.context(run_id=RUN)))
    finally:
        k.close()


def _copy_latest(source, target, *, only=False):
    """The attacker: run ``ticket-7``'s latest state in store ``source`` saved, unchanged, as its next step in store
    ``target`` (``only``: as its only step there)."""
    k = make_kernel()
    try:
        _, raw = k.memory("checkpoints", path=source).latest(RUN)
        store = k.memory("checkpoints", path=target)
        step = store.latest(RUN)[0] + 1
        with sqlite3.connect(source) as c:
            kind = c.execute("SELECT kind FROM checkpoints WHERE run_id = ? LIMIT 1", (RUN,)).fetchone()[0]
        if only:
            store.delete(RUN)
        store.save(RUN, step, raw, kind=kind)
    finally:
        k.close()


def _copy_rows(source, target):
    """The attacker: every row of run ``ticket-7`` in ``source`` (states, patches, signatures) put in place of its
    rows in ``target``."""
    with sqlite3.connect(target) as c:
        c.execute("ATTACH DATABASE ? AS src", (source,))
        c.execute("DELETE FROM main.checkpoints WHERE run_id = ?", (RUN,))
        c.execute("INSERT INTO main.checkpoints SELECT * FROM src.checkpoints WHERE run_id = ?", (RUN,))


def _resume_react(ran, db, asked=None, **config):
    """``ticket-7`` of ``db`` resumed with the person's ``approve=["c1"]``: its status (``"paused"``: it asks)."""
    k = _ops(ran, asked, **config)
    try:
        return _loop(k, db, ["done"]).resume(RUN, approve=["c1"]).status
    except _ProcessEnds:
        return "paused"
    finally:
        k.close()


# -- ReAct -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("config", [{}, ACCEPT], ids=["sealed-counts", "accept-unsealed-counts"])
def test_a_react_call_held_in_another_store_under_the_same_run_id_does_not_run(tmp_path, config):
    """Attack (unsigned stores): tenant one's ``ticket-7`` holds ``danger("/")``, tenant two's ``danger("/tmp/x")``;
    one's latest state is saved as two's next step and two's person approves ``c1`` (the app may accept unsealed
    counts, so only the held call's seal stands between). Defence: the seals name the store: refused, or the call is
    asked about again; ``"/"`` does not run."""
    ran, one, two = [], str(tmp_path / "one.db"), str(tmp_path / "two.db")
    _held_as(ran, one, "/")
    _held_as(ran, two, "/tmp/x")
    _copy_latest(one, two)
    asked = _DecidesLater()
    errors = _refusals(lambda: _resume_react(ran, two, asked, **config))
    assert ran == []
    if config:
        assert asked.calls == [("danger", {"path": "/"})]  # a new question, not the old yes
    else:
        assert any("another store" in e for e in errors), errors


def _budget_run(db, replies):
    """Run ``ticket-7`` of ``db`` (ReAct, a budget of 2 ``word_count`` calls) until its model fails."""
    from zagent.plugins.react import ReActLoop

    k = make_kernel(config={"rails": {"tool_budget": {"word_count": 2}}})
    try:
        loop = ReActLoop(kernel=k, llm=k.llm("scripted:b", replies=replies), tools=["word_count"], agent_config={},
                         checkpoints=k.memory("checkpoints", path=db))
        with pytest.raises(ProviderError):
            asyncio.run(loop.arun("count", ctx=k.context(run_id=RUN)))
    finally:
        k.close()


def test_a_react_budget_spent_is_not_reset_by_a_fresh_state_of_the_same_id_from_another_store(tmp_path):
    """Attack (unsigned stores): tenant two's ``ticket-7`` spent its budget of 2 ``word_count`` calls; tenant one's
    fresh ``ticket-7`` state (its counts sealed, valid there) is saved as two's only step, and two's run resumed.
    Defence: counts sealed for another store are no seal here (``CheckpointError`` saying so); nothing runs."""
    from zagent.plugins.react import ReActLoop

    one, two = str(tmp_path / "one.db"), str(tmp_path / "two.db")
    _budget_run(one, [ProviderError("down", provider="scripted")])
    _budget_run(two, [_count(1), _count(2), ProviderError("down", provider="scripted")])
    _copy_latest(one, two, only=True)
    k = make_kernel(config={"rails": {"tool_budget": {"word_count": 2}}})
    try:
        loop = ReActLoop(kernel=k, llm=k.llm("scripted:b", replies=[_count(3), _count(4), "done"]),
                         tools=["word_count"], agent_config={}, checkpoints=k.memory("checkpoints", path=two))
        errors = _refusals(lambda: loop.resume(RUN))
        assert k.spy.ran == []
        assert any("another store" in e for e in errors), errors
    finally:
        k.close()


def test_a_signed_runs_step_log_copied_from_another_store_is_refused(tmp_path):
    """Attack (signed stores, one ``checkpoint_key`` for every tenant): every row of tenant one's ``ticket-7``
    (held ``danger("/")``, signatures and all) put in place of tenant two's; two's person approves ``c1``.
    Defence: a signature names the store too: ``CheckpointError``; ``"/"`` does not run."""
    ran, one, two = [], str(tmp_path / "one.db"), str(tmp_path / "two.db")
    _held_as(ran, one, "/", checkpoint_key=KEY)
    _held_as(ran, two, "/tmp/x", checkpoint_key=KEY)
    _copy_rows(one, two)
    errors = _refusals(lambda: _resume_react(ran, two, checkpoint_key=KEY))
    assert ran == []
    assert any("copied from another store" in e for e in errors), errors


# -- group chats and workflows ------------------------------------------------------------------------------


def _chat(ran, db, replies, answer=None, **config):
    """Group chat ``ticket-7`` of one declared speaker ``ops`` (its ``danger`` needs a person's yes)."""
    from zagent.plugins.actions import CustomizeAgent
    from zagent.plugins.groupchat import GroupChat

    k = _ops(ran, **config)
    try:
        agent = CustomizeAgent.from_dict(DANGER, k, llm=k.llm("scripted:ops", replies=list(replies)))
        group = GroupChat(kernel=k, agents=[agent], max_rounds=1, checkpoints=db)
        return group.resume(RUN, answer=answer) if answer is not None else group.run("free disk", run_id=RUN)
    finally:
        k.close()


def _flow(ran, db, replies, answer=None, **config):
    """Workflow run ``ticket-7``: one node whose agent ``ops`` may call ``danger`` (a person's yes first)."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    graph = WorkFlowGraph.from_dict({"name": "ops", "goal": "clean up", "inputs": [{"name": "task"}], "edges": [],
                                     "nodes": [{"name": "clean", "description": "clean", "inputs": [{"name": "task"}],
                                                "outputs": [{"name": "answer"}], "agents": [DANGER]}]})
    k = _ops(ran, **config)
    try:
        ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:ops", replies=list(replies)), checkpoints=db)
        if answer is None:
            return ex.run(graph, {"task": "free disk"}, run_id=RUN)
        return ex.resume(RUN, graph=graph, answer=answer)
    finally:
        k.close()


@pytest.mark.parametrize("config", [{}, ACCEPT], ids=["sealed-counts", "accept-unsealed-counts"])
@pytest.mark.parametrize("engine", [_chat, _flow], ids=["groupchat", "workflow"])
def test_a_yes_does_not_run_a_call_asked_in_another_store_under_the_same_run_id(tmp_path, engine, config):
    """Attack (unsigned stores): tenant one's ``ticket-7`` (a group chat, a workflow node) waits on the person's yes
    to ``danger("/")``, tenant two's on ``danger("/tmp/x")``; one's paused state (question and sealed record of the
    call asked, valid for its run) is saved as two's only step; two's person says "yes". Defence: the record and
    the yes name the store: refused, or asked anew; ``"/"`` does not run."""
    ran, one, two = [], str(tmp_path / "one.db"), str(tmp_path / "two.db")
    assert engine(ran, one, [_delete("/")], **config).status == "paused"
    assert engine(ran, two, [_delete("/tmp/x")], **config).status == "paused"
    _copy_latest(one, two, only=True)
    _refusals(lambda: engine(ran, two, [_delete("/"), "done"], answer="yes", **config))
    assert ran == []


@pytest.mark.parametrize("engine", [_chat, _flow], ids=["groupchat", "workflow"])
def test_a_yes_in_the_store_the_call_was_asked_in_runs_it_once(tmp_path, engine):
    """Guard (no attack): the same run resumed in its own store with "yes" runs its call once."""
    ran, db = [], str(tmp_path / "one.db")
    assert engine(ran, db, [_delete("/tmp/x")]).status == "paused"
    engine(ran, db, [_delete("/tmp/x"), "done"], answer="yes")
    assert ran == ["/tmp/x"]


# -- what stays: the file copied whole, identities made once ----------------------------------------------


def test_a_store_file_copied_whole_resumes_its_held_run(tmp_path):
    """Guard (no attack): the store's file copied whole while closed (a backup restored, a store moved) keeps its
    identity: the held call resumed from the copy runs on the person's ``approve=["c1"]``, once."""
    ran, one, moved = [], str(tmp_path / "one.db"), str(tmp_path / "moved.db")
    _held_as(ran, one, "/tmp/x")
    shutil.copy(one, moved)
    assert _resume_react(ran, moved) == "completed"
    assert ran == ["/tmp/x"]


@pytest.mark.parametrize("engine", [_chat, _flow], ids=["groupchat", "workflow"])
def test_a_store_file_copied_whole_resumes_its_asked_run(tmp_path, engine):
    """Guard (no attack): as above for a group chat and a workflow: the yes given in the copy runs the call."""
    ran, one, moved = [], str(tmp_path / "one.db"), str(tmp_path / "moved.db")
    assert engine(ran, one, [_delete("/tmp/x")]).status == "paused"
    shutil.copy(one, moved)
    engine(ran, moved, [_delete("/tmp/x"), "done"], answer="yes")
    assert ran == ["/tmp/x"]


def test_each_store_has_its_own_identity_kept_in_its_file(tmp_path):
    """Guard: a new store is given an identity (``new_call_id``'s kind) once; reopened, it is the same; another
    file's is another; a copy of the file has the file's."""
    k = make_kernel()
    try:
        one = k.memory("checkpoints", path=str(tmp_path / "one.db"))
        first = one.store_id
        one.close()
        assert first.startswith("store_") and len(first) == len("store_") + 24
        shutil.copy(tmp_path / "one.db", tmp_path / "copy.db")
        assert k.memory("checkpoints", path=str(tmp_path / "one.db")).store_id == first
        assert k.memory("checkpoints", path=str(tmp_path / "copy.db")).store_id == first
        assert k.memory("checkpoints", path=str(tmp_path / "two.db")).store_id != first
    finally:
        k.close()


def test_a_store_made_by_an_earlier_zagent_is_given_an_identity_on_its_first_open(tmp_path):
    """Guard: a file of schema 4 (no ``store_info``) is migrated and given an identity when first opened as a
    checkpoint store; it keeps it."""
    from zagent.plugins.memory.schema import MIGRATIONS, SCHEMA_VERSION, statements

    path = str(tmp_path / "old.db")
    with sqlite3.connect(path) as c:
        for version in (1, 2, 3, 4):
            for statement in statements(MIGRATIONS[version]):
                c.execute(statement)
        c.execute("PRAGMA user_version = 4")
    k = make_kernel()
    try:
        made = k.memory("checkpoints", path=path).store_id
    finally:
        k.close()
    with sqlite3.connect(path) as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert c.execute("SELECT value FROM store_info WHERE name = 'store_id'").fetchone() == (made,)


def test_a_held_call_copied_with_the_other_stores_identity_is_asked_about_again(tmp_path):
    """Attack (got through, round sixteen): unsigned stores, the app accepting unsealed counts; as the first attack,
    the attacker also writes tenant one's identity into tenant two's ``store_info``, so every seal of the copied
    state holds in two. Defence: the user's zagent recorded, outside the file, the identity two's file had at its
    path (``$XDG_DATA_HOME/zagent/stores/``); a file whose identity changed is refused (``StoreError`` naming the
    record to remove if it was moved there on purpose); ``"/"`` does not run."""
    ran, one, two = [], str(tmp_path / "one.db"), str(tmp_path / "two.db")
    _held_as(ran, one, "/")
    _held_as(ran, two, "/tmp/x")
    _copy_latest(one, two)
    with sqlite3.connect(one) as c:
        theirs = c.execute("SELECT value FROM store_info WHERE name = 'store_id'").fetchone()[0]
    with sqlite3.connect(two) as c:
        c.execute("UPDATE store_info SET value = ? WHERE name = 'store_id'", (theirs,))
    with pytest.raises(StoreError, match="another store's file, or its identity"):
        _resume_react(ran, two, **ACCEPT)
    assert ran == []
