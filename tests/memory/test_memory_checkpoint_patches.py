"""Checkpoint patches: a step saved as its change on the step before, read back whole."""

import sqlite3

import msgspec
import pytest

from zagent import ConfigError
from zagent.plugins.memory.errors import StoreError


def state_of(raw):
    return msgspec.json.decode(raw)


def test_latest_applies_the_patches_after_the_last_full_save(store):
    """latest() of a patched run is the full save with every patch after it applied, in order."""
    store.save("r", 1, {"step": 1, "items": ["a"], "done": {}})
    store.save_patch("r", 2, {"after": 1, "set": {"step": 2}, "extend": {"items": ["b"]}, "lengths": {"items": 1}})
    store.save_patch("r", 3, {"after": 2, "set": {"step": 3}, "extend": {"items": ["c", "d"]},
                              "update": {"done": {"x": 1}}})
    step, raw = store.latest("r")
    assert step == 3 and state_of(raw) == {"step": 3, "items": ["a", "b", "c", "d"], "done": {"x": 1}}


def test_load_rebuilds_a_middle_patch_step(store):
    """load(run, step) of a patch step gives the state as it was at that step."""
    store.save("r", 1, {"items": []})
    for step in range(2, 6):
        store.save_patch("r", step, {"after": step - 1, "extend": {"items": [step]}})
    assert state_of(store.load("r", 3)) == {"items": [2, 3]}


def test_encoded_patch_bytes_are_accepted(store):
    """A patch may be given already encoded as JSON bytes."""
    store.save("r", 1, {"n": 0})
    store.save_patch("r", 2, msgspec.json.encode({"after": 1, "set": {"n": 2}}))
    assert state_of(store.latest("r")[1]) == {"n": 2}


def test_a_patch_not_on_the_latest_step_is_refused(store):
    """A patch must build on the run's latest step; otherwise ConfigError names both steps."""
    store.save("r", 1, {"n": 0})
    store.save("r", 2, {"n": 1})
    with pytest.raises(ConfigError, match="latest step is 2"):
        store.save_patch("r", 3, {"after": 1, "set": {"n": 2}})
    with pytest.raises(ConfigError, match="latest step is None"):
        store.save_patch("other", 1, {"after": 0})
    assert store.steps("r") == [1, 2]


@pytest.mark.parametrize("bad", [{"after": 1, "rename": {}}, {"set": {}}, {"after": 5}, {"after": 1, "set": []},
                                 "not a patch", b"[1, 2]"])
def test_malformed_patches_are_config_errors(store, bad):
    """Unknown keys, a missing or impossible 'after', non-dict parts and non-patch bytes are refused."""
    store.save("r", 1, {"n": 0})
    with pytest.raises(ConfigError, match="patch"):
        store.save_patch("r", 2, bad)


def test_a_patch_whose_base_is_gone_is_a_clear_store_error(store):
    """A patch whose full save was deleted by hand cannot be read: StoreError says the run cannot be restored."""
    store.save("r", 1, {"n": 0})
    store.save_patch("r", 2, {"after": 1, "set": {"n": 1}})
    store.db.write(lambda c: c.execute("DELETE FROM checkpoints WHERE step = 1"))
    with pytest.raises(StoreError, match="full checkpoint it builds on is gone"):
        store.latest("r")


def test_a_patch_on_the_wrong_list_length_is_refused_on_read(store):
    """A patch whose recorded list length does not match the state before it is refused, not misapplied."""
    store.save("r", 1, {"items": ["a"]})
    store.save_patch("r", 2, {"after": 1, "extend": {"items": ["b"]}, "lengths": {"items": 1}})
    store.db.write(lambda c: c.execute("UPDATE checkpoints SET state = ? WHERE step = 1", (b'{"items": []}',)))
    with pytest.raises(StoreError, match="extends 'items'"):
        store.latest("r")


def test_retention_keeps_the_full_save_a_kept_patch_builds_on(kernel, tmp_path):
    """keep_last keeps the newest steps and the full save under them, so every kept step still loads."""
    store = kernel.memory("checkpoints", path=str(tmp_path / "runs.db"), keep_last=3)
    store.save("r", 1, {"items": []})
    for step in range(2, 9):
        store.save_patch("r", step, {"after": step - 1, "extend": {"items": [step]}})
    assert store.steps("r") == list(range(1, 9))  # steps 6-8 are patches on full save 1
    assert state_of(store.load("r", 6)) == {"items": list(range(2, 7))}
    store.save("r", 9, {"items": list(range(2, 9))})
    store.save_patch("r", 10, {"after": 9, "extend": {"items": [10]}})
    assert store.steps("r") == list(range(1, 11))  # step 8 is still a patch on 1
    store.save_patch("r", 11, {"after": 10, "extend": {"items": [11]}})
    assert store.steps("r") == [9, 10, 11]


def test_prune_keep_last_keeps_patch_bases(store):
    """prune(keep_last=n) on a patched run keeps what the newest n steps need to load."""
    store.save("r", 1, {"n": 0})
    for step in range(2, 6):
        store.save_patch("r", step, {"after": step - 1, "set": {"n": step}})
    store.save("r", 6, {"n": 6})
    store.save_patch("r", 7, {"after": 6, "set": {"n": 7}})
    assert store.prune(keep_last=3) == 0  # step 5 is a patch on step 1: all are needed
    assert state_of(store.load("r", 5)) == {"n": 5}
    assert store.prune(keep_last=2) == 5
    assert store.steps("r") == [6, 7] and state_of(store.latest("r")[1]) == {"n": 7}


def test_a_version_1_file_is_migrated_and_its_checkpoints_read(kernel, tmp_path):
    """A file written before patches existed (schema 1) opens, keeps its checkpoints, and takes patches."""
    from zagent.plugins.memory.schema import MIGRATIONS, statements

    path = str(tmp_path / "old.db")
    conn = sqlite3.connect(path)
    for statement in statements(MIGRATIONS[1]):
        conn.execute(statement)
    conn.execute("INSERT INTO checkpoints VALUES ('old', 4, 'react', 1.0, ?, ?)", (b'{"n": 4}', b"{}"))
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    store = kernel.memory("checkpoints", path=path)
    assert store.latest("old") == (4, b'{"n": 4}')
    store.save_patch("old", 5, {"after": 4, "set": {"n": 5}})
    assert state_of(store.latest("old")[1]) == {"n": 5}
    store.close()


def test_async_save_patch_matches_sync(store):
    """asave_patch saves the same patch as save_patch."""
    import asyncio

    store.save("r", 1, {"n": 0})
    asyncio.run(store.asave_patch("r", 2, {"after": 1, "set": {"n": 2}}, kind="react", metadata={"a": 1}))
    assert state_of(store.latest("r")[1]) == {"n": 2} and store.list()[0].metadata == {"a": 1}
