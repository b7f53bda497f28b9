"""Round fifteen, signed runs saved before store identities: a zagent of schema 4 signed a run's steps with the
checkpoint key and the run id only; after the upgrade (schema 5) each step must name its store (``Signer.within``).

Before this module's fix, a signed run in progress at the upgrade was refused on resume ("signed without its
store"): lost. Fixed: the migration to schema 5 records the signed steps the file holds (``legacy_steps``, their
metadata hence MACs, in the migration's transaction); such a step, unchanged, is accepted with its old signature
(``Signer.check``'s ``legacy``); the run goes on with steps bound to the store.

Attacks tried (session 2026-12-07) against that acceptance, all held: another store's legacy state of the same run
id and step written over a legacy row after the upgrade; a step saved after the upgrade signed without the store,
as a new step and over a legacy row (``save`` replacing it does not inherit the mark).

OPEN (as ``store_info``, round fifteen storeid): whoever can write the whole file can write ``legacy_steps`` too.
"""
import sqlite3

import msgspec
import pytest

from zagent.agentkit.signing import MAC, Signer
from zagent.plugins.memory.checkpoints import CheckpointStore
from zagent.plugins.memory.schema import SCHEMA_VERSION

from .conftest import make_kernel
from .test_security_round14_approvals import KEY, _DecidesLater, _delete, _refusals
from .test_security_round15_storeid import RUN, _copy_rows, _flow, _held_as, _resume_react

pytestmark = pytest.mark.timeout(120)


def _as_zagent_4(monkeypatch, make):
    """``make()`` run as a zagent of schema 4 would have (its stores had no identity: every seal and signature
    names the run only), then its files brought back to schema 4 (no ``store_info``, no ``legacy_steps``)."""
    with monkeypatch.context() as m:
        m.setattr(CheckpointStore, "store_id", property(lambda self: ""))
        paths = make()
    for path in paths:
        with sqlite3.connect(path) as c:
            c.execute("DROP TABLE store_info")
            c.execute("DROP TABLE legacy_steps")
            c.execute("PRAGMA user_version = 4")
        c.close()


def _upgraded(path):
    """``path`` opened once by this zagent (migrated to schema 5, given its identity); its legacy marks."""
    k = make_kernel()
    try:
        marks = k.memory("checkpoints", path=path).legacy_macs(RUN)
    finally:
        k.close()
    with sqlite3.connect(path) as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    c.close()
    return marks


def _rows(path):
    """``(step, MAC)`` of run ``ticket-7``'s rows in ``path``."""
    with sqlite3.connect(path) as c:
        rows = c.execute("SELECT step, metadata FROM checkpoints WHERE run_id = ? ORDER BY step", (RUN,)).fetchall()
    c.close()
    return [(step, msgspec.json.decode(meta).get(MAC)) for step, meta in rows]


def _old_held_run(monkeypatch, ran, *paths_and_targets):
    _as_zagent_4(monkeypatch, lambda: [
        _held_as(ran, path, target, checkpoint_key=KEY) or path for path, target in paths_and_targets])


def test_a_signed_react_run_held_before_the_upgrade_resumes_after_it(tmp_path, monkeypatch):
    """Guard (no attack): zagent 4's signed ``ticket-7`` holds ``danger("/tmp/x")``; after the upgrade it is
    resumed (not refused): the held call's seal named no store, so the person is asked again; approved, it runs
    once, and every step saved after the upgrade is bound to the store (none is a legacy step)."""
    ran, db = [], str(tmp_path / "old.db")
    _old_held_run(monkeypatch, ran, (db, "/tmp/x"))
    legacy = _upgraded(db)
    assert legacy and legacy == {step: mac for step, mac in _rows(db)}
    asked = _DecidesLater()
    assert _resume_react(ran, db, asked, checkpoint_key=KEY) == "paused"
    assert asked.calls == [("danger", {"path": "/tmp/x"})] and ran == []
    assert _resume_react(ran, db, checkpoint_key=KEY) == "completed"
    assert ran == ["/tmp/x"]
    k = make_kernel()
    try:
        store = k.memory("checkpoints", path=db)
        rows, _ = store.chain(RUN)  # from the last full save: all saved after the upgrade
        assert rows[0][0] > max(legacy)
        Signer(KEY).within(store.store_id).check(RUN, rows)  # no legacy marks given: each names the store
    finally:
        k.close()


def test_a_signed_workflow_paused_before_the_upgrade_finishes_after_it(tmp_path, monkeypatch):
    """Guard (no attack): zagent 4's signed workflow ``ticket-7`` waits, mid-way, on the person's yes to
    ``danger("/tmp/x")``; after the upgrade it resumes (not refused): its record of the call named no store, so
    the question is asked anew; on the next yes the call runs once and the run finishes."""
    ran, db = [], str(tmp_path / "flow.db")

    def paused():
        assert _flow(ran, db, [_delete("/tmp/x")], checkpoint_key=KEY).status == "paused"
        return [db]

    _as_zagent_4(monkeypatch, paused)
    assert _upgraded(db)
    again = _flow(ran, db, [_delete("/tmp/x"), "done"], answer="yes", checkpoint_key=KEY)
    assert again.status == "paused" and ran == []  # the yes was to a record naming no store: asked again
    assert _flow(ran, db, [_delete("/tmp/x"), "done"], answer="yes", checkpoint_key=KEY).status == "finished"
    assert ran == ["/tmp/x"]


def test_another_stores_legacy_step_written_over_a_legacy_row_after_the_upgrade_is_refused(tmp_path, monkeypatch):
    """Attack (signed stores, one key for every tenant, both upgraded): tenant one's ``ticket-7`` (held
    ``danger("/")``, signed by zagent 4, valid there as a legacy step) put in place of tenant two's legacy rows of
    the same run id and steps; two's person approves ``c1``. Defence: a legacy step is accepted only with the MAC
    it had at two's upgrade: ``CheckpointError``; ``"/"`` does not run."""
    ran, one, two = [], str(tmp_path / "one.db"), str(tmp_path / "two.db")
    _old_held_run(monkeypatch, ran, (one, "/"), (two, "/tmp/x"))
    _upgraded(one)
    assert _upgraded(two)
    _copy_rows(one, two)
    errors = _refusals(lambda: _resume_react(ran, two, checkpoint_key=KEY))
    assert ran == []
    assert any("not a step the store held" in e for e in errors), errors


@pytest.mark.parametrize("where", ["next", "over"], ids=["as-the-next-step", "over-the-legacy-row"])
def test_a_step_saved_after_the_upgrade_signed_without_the_store_is_refused(tmp_path, monkeypatch, where):
    """Attack: after the upgrade, the held step of tenant two's legacy ``ticket-7`` is changed to hold
    ``danger("/")`` and saved signed with the plain key (no store), as the run's next step or in place of the
    legacy row (a ``save`` replacing it). Defence: only steps held, unchanged, at the upgrade may lack the store:
    ``CheckpointError``; ``"/"`` does not run."""
    ran, db = [], str(tmp_path / "two.db")
    _old_held_run(monkeypatch, ran, (db, "/tmp/x"))
    assert _upgraded(db)
    k = make_kernel()
    try:
        store = k.memory("checkpoints", path=db, keep_last=None)
        step, raw = store.latest(RUN)
        data = raw.replace(b"/tmp/x", b"/")
        assert data != raw
        step = step + 1 if where == "next" else step
        store.save(RUN, step, data, kind="react",
                   metadata={MAC: Signer(KEY).mac(RUN, step, "react", "", data)})
    finally:
        k.close()
    errors = _refusals(lambda: _resume_react(ran, db, checkpoint_key=KEY))
    assert ran == []
    assert any("not a step the store held" in e for e in errors), errors


def test_a_new_store_records_no_legacy_steps(tmp_path):
    """Guard: a file made by this zagent marks no step as signed before store identities, its signed runs'
    included (the marks are taken once, when an older file is migrated)."""
    ran, db = [], str(tmp_path / "new.db")
    _held_as(ran, db, "/tmp/x", checkpoint_key=KEY)
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM checkpoints").fetchone()[0] > 0
        assert c.execute("SELECT count(*) FROM legacy_steps").fetchone() == (0,)
    c.close()


def test_a_legacy_patch_chain_is_accepted_and_goes_on_bound_to_the_store():
    """Guard (``Signer.check``): a full step and a patch signed without the store, both held at the upgrade, then
    a patch bound to the store chained on them, check; the same chain without the marks, or with the patch's mark
    naming another MAC, is refused at that step."""
    from zagent.errors import CheckpointError

    plain, bound = Signer(KEY), Signer(KEY).within("store_x")
    one = plain.mac(RUN, 1, "react", "", b"{}")
    two = plain.mac(RUN, 2, "react", one, b"p2")
    three = bound.mac(RUN, 3, "react", two, b"p3")
    rows = [(1, "react", b"{}", False, {MAC: one}), (2, "react", b"p2", True, {MAC: two}),
            (3, "react", b"p3", True, {MAC: three})]
    bound.check(RUN, rows, {1: one, 2: two})
    for legacy, step in (({}, 1), ({1: one, 2: one}, 2)):
        with pytest.raises(CheckpointError, match="not a step the store held") as caught:
            bound.check(RUN, rows, legacy)
        assert caught.value.step == step
