"""``CheckpointStore``: loop and workflow state saved per step in an SQLite file, resumable after a crash.

``k.memory("checkpoints", path=..., keep_last=10, **database_options)``; may share a file with ``"sqlite"``. Every
method has an async twin (``asave``, ``alatest``...). One transaction per save: a killed process loses at most the step
in flight. Bad arguments raise ``ConfigError``.
"""

from __future__ import annotations

import asyncio
import builtins
import time
from typing import TYPE_CHECKING, Any, Optional

import attrs
import msgspec

from zagent import ConfigError

from .chain import CheckpointChain
from .database import Database
from .errors import StoreError
from .identity import store_identity
from .paths import resolve
from .patches import FULL_BASE, check_patch, check_restore_size, patch_decoder, rebuild, stored
from .records import RunInfo, check_count, check_run_id

if TYPE_CHECKING:  # pragma: no cover
    import sqlite3

DEFAULT_KEEP_LAST = 10

_INSERT = ("INSERT OR REPLACE INTO checkpoints (run_id, step, kind, created, state, metadata, patch) "
           "VALUES (?, ?, ?, ?, ?, ?, ?)")
#: one row per run; a run id or metadata an edit made huge is measured, never read (``NULL`` with its size)
_LIST = """
SELECT CASE WHEN {id_size} <= {max_id} THEN run_id END, kind, max(step), count(*), min(created), max(created),
       (SELECT CASE WHEN {meta_size} <= {max_meta} THEN metadata END FROM checkpoints c2 WHERE c2.run_id = c.run_id
        ORDER BY step DESC LIMIT 1), {id_size}
FROM checkpoints c {where} GROUP BY run_id ORDER BY max(created) DESC, run_id
"""
_MAX_METADATA = 2**20


@attrs.define(repr=False)
class CheckpointStore(CheckpointChain):
    """Per-run, per-step saved state in an SQLite file (``chain``: ``chain.py``).

    :param keep_last: steps kept per run on every save (default ``DEFAULT_KEEP_LAST``, 10; ``None``: all). The
        latest step is always kept, and so are the full save and patches the oldest kept step builds on; a step
        saved below a run's window is dropped at once."""

    db: Database
    keep_last: Optional[int] = attrs.field(default=DEFAULT_KEEP_LAST,
                                           validator=lambda _s, _a, value: _check_keep_last(value))
    _store_id: Optional[str] = attrs.field(default=None, init=False)

    def __attrs_post_init__(self) -> None:
        if self.db.read_only is None:  # made with the store (an older zagent's file: on its first open here)
            self._store_id = store_identity(self.db)

    @property
    def store_id(self) -> str:
        """This store's identity, kept in the file (``store_info``): a run's seals and signatures name it, so a
        state copied into another store is not this store's run, while the file copied whole keeps its runs."""
        found = self._store_id
        if found is None:
            found = self._store_id = store_identity(self.db)
        return found

    @classmethod
    def open(cls, path: Any = None, *, keep_last: Optional[int] = DEFAULT_KEEP_LAST,
             **options: Any) -> "CheckpointStore":
        """Open (creating if needed) ``path`` (default: ``paths.default_path()``); ``options`` go to ``Database``."""
        keep_last = _check_keep_last(keep_last)  # before the file is opened or created
        return cls(Database(resolve(path), **options), keep_last)

    def save(self, run_id: str, step: int, state: Any, *, kind: str = "react",
             metadata: Optional[dict[str, Any]] = None) -> None:
        """Save ``state`` as step ``step`` of ``run_id`` and apply ``keep_last`` to the run, in one transaction.

        ``state`` is ``bytes`` (stored as is) or any msgspec-encodable object (stored as ``msgspec.json.encode``);
        ``step`` is an int >= 0; saving the same ``(run_id, step)`` again replaces it."""
        row = (check_run_id(run_id), check_count(step, "step"), _check_kind(kind), time.time(),
               _encode_state(state), _encode_metadata(metadata))

        def write(c: sqlite3.Connection) -> None:
            c.execute(_INSERT, (*row, 0))
            if self.keep_last is not None:
                _trim(c, run_id, self.keep_last)

        self.db.write(write)

    def save_patch(self, run_id: str, step: int, patch: Any, *, kind: str = "react",
                   metadata: Optional[dict[str, Any]] = None) -> None:
        """Save step ``step`` of ``run_id`` as ``patch`` on step ``patch["after"]``, which must be the run's latest
        step (else ``ConfigError``); ``keep_last`` applies as in ``save``. ``patch`` (a dict, or its JSON bytes) is
        ``{"after": n, "set": {key: value}, "extend": {key: [items]}, "update": {key: {k: v}}, "lengths": {key: n},
        "extend_in": {key: {k: [items]}}, "lengths_in": {key: {k: n}}}``, applied in that order to a state saved as a
        JSON object: top-level keys replaced, items appended to top-level lists, entries merged into top-level
        objects, items appended to lists ``state[key][k]``; ``lengths``/``lengths_in``: each list's length before."""
        check_run_id(run_id)
        check_count(step, "step")
        if isinstance(patch, (bytes, bytearray, memoryview)):
            try:
                after = patch_decoder.decode(patch).after
            except msgspec.DecodeError as exc:
                raise ConfigError(f"checkpoint patch bytes are not a patch object: {exc}") from None
            if not 0 <= after < step:
                raise ConfigError(f"a checkpoint patch's 'after' must be a step below {step}, got {after}")
        else:
            after = check_patch(patch, step)
        row = (run_id, step, _check_kind(kind), time.time(), _encode_state(patch), _encode_metadata(metadata), 1)

        def write(c: sqlite3.Connection) -> None:
            last = c.execute("SELECT step FROM checkpoints WHERE run_id = ? ORDER BY step DESC LIMIT 1",
                             (run_id,)).fetchone()
            if last is None or last[0] != after:
                raise ConfigError(f"cannot save step {step} of run {run_id!r} as a patch on step {after}: the run's "
                                  f"latest step is {None if last is None else last[0]}; save a full state instead")
            c.execute(_INSERT, row)
            if self.keep_last is not None:
                _trim(c, run_id, self.keep_last)

        self.db.write(write)

    def latest(self, run_id: str) -> Optional[tuple[int, bytes]]:
        """The newest checkpoint of ``run_id`` as ``(step, full state bytes)`` (a patch step rebuilt), or ``None``."""
        check_run_id(run_id)

        def read(c: sqlite3.Connection) -> Optional[tuple[int, bytes]]:
            last = c.execute("SELECT max(step) FROM checkpoints WHERE run_id = ?", (run_id,)).fetchone()[0]
            if last is None:
                return None
            check_restore_size(c, run_id, last)
            row = c.execute("SELECT step, state, patch FROM checkpoints WHERE run_id = ? AND step = ?",
                            (run_id, last)).fetchone()
            return row[0], (rebuild(c, run_id, row[0]) if row[2] else stored(row[1], run_id, row[0]))

        return self.db.read(read)

    def load(self, run_id: str, step: int) -> Optional[bytes]:
        """The full state saved as ``step`` of ``run_id`` (a patch step rebuilt), or ``None``."""
        args = (check_run_id(run_id), check_count(step, "step"))

        def read(c: sqlite3.Connection) -> Optional[bytes]:
            check_restore_size(c, run_id, step)
            row = c.execute("SELECT state, patch FROM checkpoints WHERE run_id = ? AND step = ?", args).fetchone()
            if row is None:
                return None
            return rebuild(c, run_id, step) if row[1] else stored(row[0], run_id, step)

        return self.db.read(read)

    def steps(self, run_id: str) -> builtins.list[int]:
        """Saved steps of ``run_id``, ascending."""
        return [r[0] for r in self.db.read(lambda c: c.execute(
            "SELECT step FROM checkpoints WHERE run_id = ? ORDER BY step", (check_run_id(run_id),)).fetchall())]

    def list(self, kind: Optional[str] = None) -> builtins.list[RunInfo]:
        """One ``RunInfo`` per run (of ``kind``, if given), most recently updated first."""
        from .sqlitefile import MAX_NAME_BYTES, byte_length

        where, params = ("WHERE kind = ?", (kind,)) if kind is not None else ("", ())
        sql = _LIST.format(where=where, id_size=byte_length("run_id"), max_id=MAX_NAME_BYTES,
                           meta_size=byte_length("c2.metadata"), max_meta=_MAX_METADATA)
        rows = self.db.read(lambda c: c.execute(sql, params).fetchall())
        for r in rows:
            if r[0] is None or r[6] is None:
                what = f"a run id of {r[7]:,} bytes" if r[0] is None else f"run {r[0][:80]!r}'s metadata"
                raise StoreError(f"{self.db.path}: cannot list the runs: {what} is over what zagent reads back "
                                 f"({MAX_NAME_BYTES:,} bytes for an id, {_MAX_METADATA // 2**20} MiB for metadata; a "
                                 "file edited by someone else?); delete that run's rows or use a new file",
                                 path=self.db.path)
        return [RunInfo(run_id=r[0], kind=r[1], last_step=r[2], steps=r[3], created=r[4], updated=r[5],
                        metadata=msgspec.json.decode(r[6])) for r in rows]

    def delete(self, run_id: str) -> int:
        """Remove every checkpoint of ``run_id`` (and its marks as signed before store identities); returns how many."""
        check_run_id(run_id)

        def write(c: sqlite3.Connection) -> int:
            c.execute("DELETE FROM legacy_steps WHERE run_id = ?", (run_id,))
            deleted: int = c.execute("DELETE FROM checkpoints WHERE run_id = ?", (run_id,)).rowcount
            return deleted

        return self.db.write(write)

    def prune(self, keep_last: Optional[int] = None, older_than: Optional[float] = None,
              kind: Optional[str] = None) -> int:
        """Keep the newest ``keep_last`` steps of each run (as the store's retention does) and/or delete whole runs
        whose latest checkpoint is older than ``older_than`` seconds (only runs of ``kind``, if given), in one
        transaction; returns how many checkpoints were removed. Never automatic (also ``zagent memory prune``)."""
        if keep_last is None and older_than is None:
            raise ConfigError("prune needs keep_last=N (steps kept per run) and/or older_than=SECONDS")
        if keep_last is not None:
            _check_keep_last(keep_last)
        if older_than is not None and (not isinstance(older_than, (int, float)) or older_than < 0):
            raise ConfigError(f"older_than must be a number of seconds >= 0, got {older_than!r}")
        return self.db.write(lambda c: _prune(c, keep_last, older_than, kind))

    def close(self) -> None:
        """Close the file's connections."""
        self.db.close()

    # -- async twins: the work runs in a worker thread ------------------------------

    async def asave(self, run_id: str, step: int, state: Any, *, kind: str = "react",
                    metadata: Optional[dict[str, Any]] = None) -> None:
        await asyncio.to_thread(lambda: self.save(run_id, step, state, kind=kind, metadata=metadata))

    async def asave_patch(self, run_id: str, step: int, patch: Any, *, kind: str = "react",
                          metadata: Optional[dict[str, Any]] = None) -> None:
        await asyncio.to_thread(lambda: self.save_patch(run_id, step, patch, kind=kind, metadata=metadata))

    async def alatest(self, run_id: str) -> Optional[tuple[int, bytes]]:
        return await asyncio.to_thread(self.latest, run_id)

    async def aload(self, run_id: str, step: int) -> Optional[bytes]:
        return await asyncio.to_thread(self.load, run_id, step)

    async def asteps(self, run_id: str) -> builtins.list[int]:
        return await asyncio.to_thread(self.steps, run_id)

    async def alist(self, kind: Optional[str] = None) -> builtins.list[RunInfo]:
        return await asyncio.to_thread(self.list, kind)

    async def adelete(self, run_id: str) -> int:
        return await asyncio.to_thread(self.delete, run_id)

    async def aprune(self, keep_last: Optional[int] = None, older_than: Optional[float] = None,
                     kind: Optional[str] = None) -> int:
        return await asyncio.to_thread(self.prune, keep_last, older_than, kind)

    async def aclose(self) -> None:
        self.close()

    def __enter__(self) -> "CheckpointStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<CheckpointStore {self.db.path!r} keep_last={self.keep_last}>"


def _prune(c: sqlite3.Connection, keep_last: Optional[int], older_than: Optional[float], kind: Optional[str]) -> int:
    kind_clause, kind_params = ("AND kind = ?", [kind]) if kind is not None else ("", [])
    removed = 0
    if older_than is not None:
        removed += c.execute(
            "DELETE FROM checkpoints WHERE run_id IN (SELECT run_id FROM checkpoints WHERE 1 "
            f"{kind_clause} GROUP BY run_id HAVING max(created) < ?)",
            [*kind_params, time.time() - older_than]).rowcount
    if keep_last is not None:
        runs = c.execute(f"SELECT DISTINCT run_id FROM checkpoints WHERE 1 {kind_clause}", kind_params).fetchall()
        for (run_id,) in runs:
            removed += _trim(c, run_id, keep_last)
    if removed:  # the marks of steps signed before store identities that are gone
        c.execute("DELETE FROM legacy_steps WHERE NOT EXISTS (SELECT 1 FROM checkpoints k WHERE "
                  "k.run_id = legacy_steps.run_id AND k.step = legacy_steps.step)")
    return removed


def _trim(c: sqlite3.Connection, run_id: str, keep_last: int) -> int:
    """Keep the newest ``keep_last`` steps of ``run_id`` and the full save the oldest of them builds on.

    Only covering indexes are read (see ``schema.PATCHES``)."""
    row = c.execute("SELECT step FROM checkpoints INDEXED BY checkpoints_steps WHERE run_id = ? "
                    "ORDER BY step DESC LIMIT 1 OFFSET ?", (run_id, keep_last - 1)).fetchone()
    if row is None:
        return 0
    base = c.execute(FULL_BASE, (run_id, row[0])).fetchone()[0]
    deleted = c.execute("DELETE FROM checkpoints WHERE run_id = ? AND step < ?",
                        (run_id, row[0] if base is None else base))
    return deleted.rowcount


def _encode_state(state: Any) -> bytes:
    if isinstance(state, (bytes, bytearray, memoryview)):
        return bytes(state)
    try:
        return msgspec.json.encode(state)
    except (TypeError, msgspec.EncodeError) as exc:
        raise ConfigError(f"cannot save checkpoint state of type {type(state).__name__}: {exc}; pass bytes "
                          "or a msgspec-encodable object (Struct, dict, list, str, number...)") from None


def _encode_metadata(metadata: Optional[dict[str, Any]]) -> bytes:
    if metadata is not None and not isinstance(metadata, dict):
        raise ConfigError(f"checkpoint metadata must be a dict, got {type(metadata).__name__}")
    try:
        return msgspec.json.encode(metadata or {})
    except (TypeError, msgspec.EncodeError) as exc:
        raise ConfigError(f"checkpoint metadata is not JSON-encodable: {exc}") from None


def _check_keep_last(keep_last: object) -> Optional[int]:
    if keep_last is None:
        return None
    count = check_count(keep_last, "keep_last")
    if count < 1:
        raise ConfigError("keep_last must be at least 1 (the latest checkpoint of a run is always kept), "
                          "or None to keep every checkpoint")
    return count


def _check_kind(kind: Any) -> str:
    if not isinstance(kind, str) or not kind:
        raise ConfigError(f"checkpoint kind must be a non-empty string such as 'react' or 'workflow', got {kind!r}")
    return kind
