"""Workflow checkpoints of a state field with the ``append`` reducer: each patch carries only the items added.

Real SQLite files; a 200-node chain appends one note per node to ``notes`` (see ``steplog_graphs.appending``).
"""

import sqlite3

import msgspec
import pytest
from zagent.plugins.memory.schema import MIGRATIONS, SCHEMA_VERSION, statements
from zagent.plugins.workflow import WorkFlowExecutor
from zagent.plugins.workflow.result import RunState, sealed

from .steplog_graphs import NOTE, appending

N = 200


def patches(store, run_id):
    """``(step, decoded patch, size in bytes)`` of each patch row of ``run_id``."""
    found = store.db.read(lambda c: c.execute(
        "SELECT step, state FROM checkpoints WHERE run_id = ? AND patch = 1 ORDER BY step", (run_id,)).fetchall())
    return [(step, msgspec.json.decode(raw), len(raw)) for step, raw in found]


def as_state(raw):
    return msgspec.json.decode(raw, type=RunState)


def same_run(a, b):
    trace = [[(t.node, t.status, t.outputs, t.route, t.iteration) for t in r.trace] for r in (a, b)]
    return a.outputs == b.outputs and a.values == b.values and trace[0] == trace[1]


def test_patches_stay_as_small_at_node_200_as_at_node_1(kernel, store):
    """200 nodes each append a note: a patch holds that one note (in ``extend_in``), never the list, so the
    last patches are as small as the first (longer node names and step numbers aside) and far smaller than the list."""
    result = WorkFlowExecutor(kernel=kernel, checkpoints=store).run(appending(N), {"goal": "g"}, run_id="long")
    notes = result.values["notes"]
    assert notes == [NOTE.format(i=i) for i in range(N)]
    found = patches(store, "long")
    assert len(found) > 0.8 * N
    sizes = [size for _, _, size in found]
    assert max(sizes[-20:]) <= 1.1 * max(sizes[:20]), sizes  # a few more digits in names and steps, no more
    assert max(sizes) < len(msgspec.json.encode(notes)) / 10
    for step, patch, _ in found[1:]:
        assert patch["extend_in"] == {"values": {"notes": [NOTE.format(i=step - 1)]}}, step
        assert patch["lengths_in"] == {"values": {"notes": step - 1}}
        assert "notes" not in patch.get("update", {}).get("values", {}), step


def test_every_checkpoint_reads_back_and_a_cut_run_ends_like_one_that_never_stopped(kernel, store, saved_states):
    """Each of the 200 steps loaded back equals the state when it was saved; cut after a patch at step 150
    and resumed, the run ends with the same values (the whole ``notes`` list), outputs and trace."""
    clean = WorkFlowExecutor(kernel=kernel, checkpoints=store).run(appending(N), {"goal": "g"}, run_id="r")
    for step in store.steps("r"):
        assert as_state(store.load("r", step)) == as_state(saved_states[("r", step)]), step
    assert dict(patches(store, "r")[-1][1]).get("extend_in"), "the run was saved as nested appends"
    assert 150 in [step for step, _, _ in patches(store, "r")]
    store.db.write(lambda c: c.execute("DELETE FROM checkpoints WHERE run_id = 'r' AND step > 150"))
    resumed = WorkFlowExecutor(kernel=kernel, checkpoints=store).run(appending(N), {"goal": "g"}, run_id="r")
    assert len(resumed.resumed) == 150 and same_run(resumed, clean)
    assert msgspec.json.decode(store.latest("r")[1], type=RunState).values == clean.values


def test_a_reducer_that_is_not_an_append_is_saved_whole(kernel, store, saved_states):
    """``last3`` replaces the list with a shorter one: each patch carries it whole, and reads back right."""
    result = WorkFlowExecutor(kernel=kernel, checkpoints=store).run(appending(40, "last3"), {"goal": "g"},
                                                                    run_id="r")
    assert result.values["notes"] == [NOTE.format(i=i) for i in (37, 38, 39)]
    found = patches(store, "r")
    assert found and all("extend_in" not in patch for _, patch, _ in found)
    assert all(len(patch["update"]["values"]["notes"]) == min(step, 3) for step, patch, _ in found)
    for step in store.steps("r"):
        assert as_state(store.load("r", step)) == as_state(saved_states[("r", step)]), step


@pytest.mark.parametrize("cut", [5, 1])
def test_a_list_shortened_in_place_goes_whole_then_appends_again(kernel, store, saved_states, cut):
    """Node 10 deletes the first items of the executor's ``notes`` list in place, then appends (by 5: the list
    is shorter than at the last checkpoint; by 1: as long, after its append): that checkpoint holds the list
    whole, the appends after it are patches of one note again, and every step reads back right."""
    result = WorkFlowExecutor(kernel=kernel, checkpoints=store).run(appending(30, cut_at=10, cut=cut),
                                                                    {"goal": "g"}, run_id="r")
    assert result.values["notes"] == [NOTE.format(i=i) for i in range(cut, 30)]
    by_step = {step: patch for step, patch, _ in patches(store, "r")}
    if 11 in by_step:  # (else a full save)
        assert by_step[11]["update"]["values"]["notes"] == [NOTE.format(i=i) for i in range(cut, 11)]
        assert "extend_in" not in by_step[11]
    later = [step for step in by_step if step > 11]
    assert later and all(by_step[step]["extend_in"] == {"values": {"notes": [NOTE.format(i=step - 1)]}}
                         for step in later)
    for step in store.steps("r"):
        assert as_state(store.load("r", step)) == as_state(saved_states[("r", step)]), step


def version_3_file(path, states):
    """A schema-3 file (before nested appends) holding step 1 of run ``old`` whole and steps 2.. as patches of
    the shape zagent 3 wrote: the ``notes`` list whole in ``update`` each time."""
    conn = sqlite3.connect(path)
    for version in (1, 2, 3):
        for statement in statements(MIGRATIONS[version]):
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 3")
    insert = "INSERT INTO checkpoints VALUES ('old', ?, 'workflow', 1.0, ?, X'7B7D', ?)"
    conn.execute(insert, (1, msgspec.json.encode(states[0]), 0))
    for step, (before, now) in enumerate(zip(states, states[1:]), start=2):
        new = [f"n{i}" for i in range(step - 1, step)]
        patch = {"after": step - 1, "set": {"status": "running"},
                 "extend": {"trace": now["trace"][len(before["trace"]):]}, "lengths": {"trace": len(before["trace"])},
                 "update": {"values": {f"o{step - 1}": step - 1, "notes": now["values"]["notes"]},
                            "done": {n: now["done"][n] for n in new}}}
        conn.execute(insert, (step, msgspec.json.encode(patch), 1))
    conn.commit()
    conn.close()


def test_a_file_with_old_format_patches_reads_back_and_resumes(kernel, tmp_path, saved_states):
    """Patches written by hand in the version-3 shape still apply once the file is opened (and migrated);
    the run resumes from them, writes nested appends after, and ends like one that never stopped."""
    clean_store = kernel.memory("checkpoints", path=str(tmp_path / "clean.db"), keep_last=None)
    clean = WorkFlowExecutor(kernel=kernel, checkpoints=clean_store).run(appending(12), {"goal": "g"}, run_id="c")
    clean_store.close()

    def as_old(store):  # run c's states, as run old's own, sealed for ``store`` (None: an older zagent's, no store)
        return [msgspec.to_builtins(sealed(kernel, msgspec.structs.replace(msgspec.json.decode(
            saved_states[("c", step)], type=RunState), run_id="old"), store)) for step in range(1, 7)]

    path = str(tmp_path / "old.db")
    version_3_file(path, as_old(None))
    store = kernel.memory("checkpoints", path=path, keep_last=None)  # migrated, and given its identity
    states = as_old(store)  # an older zagent's seals named no store (such a run needs accept_unsealed_counts)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE checkpoints SET state = ? WHERE run_id = 'old' AND step = 1",
                     (msgspec.json.encode(states[0]),))
    assert as_state(store.latest("old")[1]) == as_state(msgspec.json.encode(states[-1]))
    resumed = WorkFlowExecutor(kernel=kernel, checkpoints=store).run(appending(12), {"goal": "g"}, run_id="old")
    assert len(resumed.resumed) == 6 and same_run(resumed, clean)
    assert any("extend_in" in patch for _, patch, _ in patches(store, "old"))
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    store.close()
