"""Patch checkpoints (``CheckpointStore.save_patch``): ``check_patch`` checks a caller's patch, ``apply_patch`` applies
a saved one, ``rebuild`` gives a patch step's full state. A chain that does not hold together (no full save, a base not
a JSON object, a damaged or misplaced patch, a list of another length than expected) raises ``StoreError``.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import msgspec

from zagent import ConfigError

from .errors import StoreError

FULL_BASE = ("SELECT max(step) FROM checkpoints INDEXED BY checkpoints_full "
             "WHERE run_id = ? AND step <= ? AND patch = 0")  # the newest full save at or below a step
PATCH_KEYS = frozenset({"after", "set", "extend", "update", "lengths", "extend_in", "lengths_in"})


class StatePatch(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """A saved patch (see ``CheckpointStore.save_patch``)."""

    after: int
    set: dict[str, Any] = {}
    extend: dict[str, list[Any]] = {}
    update: dict[str, dict[str, Any]] = {}
    lengths: dict[str, int] = {}
    extend_in: dict[str, dict[str, list[Any]]] = {}  # since schema version 4
    lengths_in: dict[str, dict[str, int]] = {}


patch_decoder = msgspec.json.Decoder(StatePatch)


def check_restore_size(c: sqlite3.Connection, run_id: str, step: int) -> None:
    """``StoreError`` if restoring ``step`` of ``run_id`` would read more than ``MAX_DATA_BYTES`` (64 MiB, as a run
    state file) of rows: its last full save and the patches since. Counted before any row is read, so an edited
    store of 1 GB rows never reaches memory."""
    from zagent.agentkit.files import MAX_DATA_BYTES

    base = c.execute(FULL_BASE, (run_id, step)).fetchone()[0]
    from .sqlitefile import byte_length

    total = c.execute(f"SELECT coalesce(sum({byte_length('state')}), 0) FROM checkpoints WHERE run_id = ? "
                      "AND step >= ? AND step <= ?", (run_id, step if base is None else base, step)).fetchone()[0]
    if total > MAX_DATA_BYTES:
        raise StoreError(f"checkpoint {step} of run {run_id!r} is {total // 2**20} MiB with the steps it builds on, "
                         f"more than the {MAX_DATA_BYTES // 2**20} MiB zagent reads back (a store edited by someone "
                         "else?); it was not read. Start a new run, or keep big values in files the run's tools read")


def stored(value: Any, run_id: str, step: int) -> bytes:
    """A row's saved ``state`` as bytes: a BLOB as is, TEXT (a row edited by hand) as its UTF-8; any other value
    (a number, NULL) is a ``StoreError`` naming the step."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    raise StoreError(f"checkpoint {step} of run {run_id!r} holds a {type(value).__name__}, not saved state: the "
                     "file was edited or damaged; restore an intact copy of it or delete the run")


def rebuild(c: sqlite3.Connection, run_id: str, step: int) -> bytes:
    """The full state of patch step ``step``: the last full save before it with the patches since applied."""
    base = c.execute(FULL_BASE, (run_id, step)).fetchone()[0]
    if base is None:
        raise StoreError(f"checkpoint {step} of run {run_id!r} is a patch and the full checkpoint it builds on "
                         "is gone (deleted by hand?); the run cannot be restored from this file")
    rows = c.execute("SELECT step, state, patch FROM checkpoints WHERE run_id = ? AND step >= ? AND step <= ? "
                     "ORDER BY step", (run_id, base, step)).fetchall()
    try:
        state = msgspec.json.decode(stored(rows[0][1], run_id, base))
    except (msgspec.DecodeError, RecursionError):  # nested past msgspec's limit too
        state = None
    if not isinstance(state, dict):
        raise StoreError(f"checkpoint {base} of run {run_id!r} is not a JSON object, so the patches after it "
                         "cannot be applied; the run cannot be restored from this file")
    previous = base
    for at, raw, _ in rows[1:]:
        try:
            patch = patch_decoder.decode(stored(raw, run_id, at))
        except (msgspec.DecodeError, RecursionError) as exc:
            raise StoreError(f"checkpoint {at} of run {run_id!r} is a damaged patch ({exc})") from None
        if patch.after != previous:
            raise StoreError(f"checkpoint {at} of run {run_id!r} patches step {patch.after}, but the step before "
                             f"it is {previous}; the run cannot be restored from this file")
        apply_patch(state, patch, run_id, at)
        previous = at
    return msgspec.json.encode(state)


def apply_patch(state: dict[str, Any], patch: StatePatch, run_id: str, step: int) -> None:
    """Apply saved patch ``patch`` (step ``step``) to ``state`` in place, in the order the store documents."""
    state.update(patch.set)
    for key, items in patch.extend.items():
        current = state.get(key, [])
        if not isinstance(current, list) or (key in patch.lengths and len(current) != patch.lengths[key]):
            raise StoreError(f"checkpoint {step} of run {run_id!r} extends {key!r} from length "
                             f"{patch.lengths.get(key)} but the state before it does not match; the run cannot be "
                             "restored from this file")
        current.extend(items)  # decoded afresh from the file: safe to grow in place
        state[key] = current
    for key, entries in patch.update.items():
        current = state.get(key, {})
        if not isinstance(current, dict):
            raise StoreError(f"checkpoint {step} of run {run_id!r} updates {key!r}, which is not an object")
        current.update(entries)
        state[key] = current
    for key, lists in patch.extend_in.items():
        target = state.get(key, {})
        if not isinstance(target, dict):
            raise StoreError(f"checkpoint {step} of run {run_id!r} appends to lists inside {key!r}, which is not "
                             "an object; the run cannot be restored from this file")
        lengths = patch.lengths_in.get(key, {})
        for name, items in lists.items():
            current = target.get(name, [])
            if not isinstance(current, list) or (name in lengths and len(current) != lengths[name]):
                raise StoreError(f"checkpoint {step} of run {run_id!r} extends {key!r}[{name!r}] from length "
                                 f"{lengths.get(name)} but the state before it does not match; the run cannot be "
                                 "restored from this file")
            current.extend(items)
            target[name] = current
        state[key] = target


def check_patch(patch: Any, step: int) -> int:
    """``patch["after"]`` of a patch for step ``step`` once its shape is checked (``ConfigError`` naming what
    is wrong)."""
    if not isinstance(patch, dict) or not set(patch) <= PATCH_KEYS:
        extra = sorted(set(patch) - PATCH_KEYS) if isinstance(patch, dict) else type(patch).__name__
        raise ConfigError(f"a checkpoint patch is a dict with keys {sorted(PATCH_KEYS)}, got {extra!r}")
    after = patch.get("after")
    if isinstance(after, bool) or not isinstance(after, int) or not 0 <= after < step:
        raise ConfigError(f"a checkpoint patch needs 'after': the step it builds on (an int below {step}), "
                          f"got {after!r}")
    for key in ("set", "extend", "update", "lengths", "extend_in", "lengths_in"):
        if not isinstance(patch.get(key, {}), dict):
            raise ConfigError(f"checkpoint patch {key!r} must be a dict keyed by state field")
    for field, lists in patch.get("extend_in", {}).items():
        if not isinstance(lists, dict) or not all(isinstance(items, list) for items in lists.values()):
            raise ConfigError(f"checkpoint patch 'extend_in'[{field!r}] must be a dict of lists (the items to "
                              f"append to each list in that field), got {lists!r}")
    for field, lengths in patch.get("lengths_in", {}).items():
        if not isinstance(lengths, dict) or not all(
                isinstance(n, int) and not isinstance(n, bool) for n in lengths.values()):
            raise ConfigError(f"checkpoint patch 'lengths_in'[{field!r}] must be a dict of ints (each list's "
                              f"length before the append), got {lengths!r}")
    return after
