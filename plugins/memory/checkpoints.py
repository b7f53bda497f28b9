"""``CheckpointStore``: loop and workflow state saved after every step, resumable after a crash.

Obtained through the kernel, never imported by other plugins::

    store = k.memory("checkpoints", path="runs.db")      # same file options as "sqlite", plus keep_last
    store.save(run_id, step, state, kind="react", metadata={"agent": "Answerer"})
    found = store.latest(run_id)        # (step, state_bytes) or None
    if found:
        step, raw = found
        state = msgspec.json.decode(raw, type=MyState)   # if you saved an object

API (every method has an async twin: ``asave``, ``alatest``, ``aload``, ``alist``,
``adelete``, ``aprune``, ``aclose``):

* ``save(run_id, step, state, *, kind="react", metadata=None) -> None`` -- ``state``
  is ``bytes`` (stored as is, e.g. your own ``msgspec.msgpack.encode(...)``) or any
  msgspec-encodable object (stored as ``msgspec.json.encode(state)``). ``step`` is a
  non-negative int; saving the same ``(run_id, step)`` again replaces it. One
  transaction per save: a process killed at any point loses at most the step in flight.
  The retention policy is applied to that run in the same transaction.
* ``latest(run_id) -> (step, bytes) | None`` -- the highest step saved.
* ``load(run_id, step) -> bytes | None``.
* ``steps(run_id) -> list[int]`` -- saved steps, ascending.
* ``list(kind=None) -> list[RunInfo]`` -- one entry per run, newest first
  (``run_id, kind, last_step, steps, created, updated, metadata`` of the latest step).
* ``delete(run_id) -> int`` -- checkpoints removed.
* ``prune(keep_last=None, older_than=None, kind=None) -> int`` -- keep only the newest
  ``keep_last`` steps of each run (the latest is always kept) and/or delete whole runs
  whose latest checkpoint is older than ``older_than`` seconds.

**Retention** (``keep_last``, an option of ``k.memory("checkpoints", ...)``): every
save keeps only the newest ``keep_last`` steps of its run (default
``DEFAULT_KEEP_LAST`` = 10; ``None`` keeps every step). A loop saves its whole
state after each step, so keeping all of them grows with the square of a run's
length; a bounded window keeps it linear. Every user in zagent (the ReAct loop,
workflows, group chats, the AgentManager) resumes from ``latest()`` only, and the
latest step is always kept; older steps are for looking back a little
(``load(run_id, step)``). A step saved below a run's window is dropped at once.
Pruning by age (``older_than``) is never automatic: ``prune()`` or
``zagent memory prune``.
"""

from __future__ import annotations

import asyncio
import builtins
import time
from typing import Any, Optional

import attrs
import msgspec

from zagent import ConfigError

from .database import Database
from .paths import resolve
from .records import RunInfo, check_count

DEFAULT_KEEP_LAST = 10

_TRIM = ("DELETE FROM checkpoints WHERE run_id = ? AND step < "
         "(SELECT step FROM checkpoints WHERE run_id = ? ORDER BY step DESC LIMIT 1 OFFSET ?)")
_LIST = """
SELECT run_id, kind, max(step), count(*), min(created), max(created),
       (SELECT metadata FROM checkpoints c2 WHERE c2.run_id = c.run_id ORDER BY step DESC LIMIT 1)
FROM checkpoints c {where} GROUP BY run_id ORDER BY max(created) DESC, run_id
"""


@attrs.define(repr=False)
class CheckpointStore:
    """Per-run, per-step saved state in an SQLite file (see the module docstring).

    :param keep_last: steps kept per run on every save (``None``: all).
    """

    db: Database
    keep_last: Optional[int] = attrs.field(default=DEFAULT_KEEP_LAST,
                                           validator=lambda _s, _a, value: _check_keep_last(value))

    @classmethod
    def open(cls, path: Any = None, *, keep_last: Optional[int] = DEFAULT_KEEP_LAST,
             **options: Any) -> "CheckpointStore":
        """Open (creating if needed) ``path`` (default: ``paths.default_path()``); ``options`` go to ``Database``."""
        keep_last = _check_keep_last(keep_last)  # before the file is opened or created
        return cls(Database(resolve(path), **options), keep_last)

    def save(self, run_id: str, step: int, state: Any, *, kind: str = "react",
             metadata: Optional[dict[str, Any]] = None) -> None:
        """Save ``state`` as step ``step`` of ``run_id`` and apply ``keep_last`` to the run, in one transaction."""
        row = (_check_run_id(run_id), check_count(step, "step"), _check_kind(kind), time.time(),
               _encode_state(state), _encode_metadata(metadata))

        def write(c: Any) -> None:
            c.execute("INSERT OR REPLACE INTO checkpoints (run_id, step, kind, created, state, metadata) "
                      "VALUES (?, ?, ?, ?, ?, ?)", row)
            if self.keep_last is not None:
                c.execute(_TRIM, (run_id, run_id, self.keep_last - 1))

        self.db.write(write)

    def latest(self, run_id: str) -> Optional[tuple[int, bytes]]:
        """The newest checkpoint of ``run_id`` as ``(step, state bytes)``, or ``None``."""
        row = self.db.read(lambda c: c.execute(
            "SELECT step, state FROM checkpoints WHERE run_id = ? ORDER BY step DESC LIMIT 1",
            (_check_run_id(run_id),)).fetchone())
        return (row[0], bytes(row[1])) if row else None

    def load(self, run_id: str, step: int) -> Optional[bytes]:
        """The state saved as ``step`` of ``run_id``, or ``None``."""
        row = self.db.read(lambda c: c.execute(
            "SELECT state FROM checkpoints WHERE run_id = ? AND step = ?",
            (_check_run_id(run_id), check_count(step, "step"))).fetchone())
        return bytes(row[0]) if row else None

    def steps(self, run_id: str) -> builtins.list[int]:
        """Saved steps of ``run_id``, ascending."""
        return [r[0] for r in self.db.read(lambda c: c.execute(
            "SELECT step FROM checkpoints WHERE run_id = ? ORDER BY step", (_check_run_id(run_id),)).fetchall())]

    def list(self, kind: Optional[str] = None) -> builtins.list[RunInfo]:
        """One ``RunInfo`` per run (of ``kind``, if given), most recently updated first."""
        where, params = ("WHERE kind = ?", (kind,)) if kind is not None else ("", ())
        rows = self.db.read(lambda c: c.execute(_LIST.format(where=where), params).fetchall())
        return [RunInfo(run_id=r[0], kind=r[1], last_step=r[2], steps=r[3], created=r[4], updated=r[5],
                        metadata=msgspec.json.decode(r[6])) for r in rows]

    def delete(self, run_id: str) -> int:
        """Remove every checkpoint of ``run_id``; returns how many."""
        return self.db.write(lambda c: c.execute(
            "DELETE FROM checkpoints WHERE run_id = ?", (_check_run_id(run_id),)).rowcount)

    def prune(self, keep_last: Optional[int] = None, older_than: Optional[float] = None,
              kind: Optional[str] = None) -> int:
        """Apply a retention policy in one transaction; returns how many checkpoints were removed."""
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

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<CheckpointStore {self.db.path!r} keep_last={self.keep_last}>"


def _prune(c: Any, keep_last: Optional[int], older_than: Optional[float], kind: Optional[str]) -> int:
    kind_clause, kind_params = ("AND kind = ?", [kind]) if kind is not None else ("", [])
    removed = 0
    if older_than is not None:
        removed += c.execute(
            "DELETE FROM checkpoints WHERE run_id IN (SELECT run_id FROM checkpoints WHERE 1 "
            f"{kind_clause} GROUP BY run_id HAVING max(created) < ?)",
            [*kind_params, time.time() - older_than]).rowcount
    if keep_last is not None:
        removed += c.execute(
            "DELETE FROM checkpoints WHERE (run_id, step) IN (SELECT run_id, step FROM (SELECT run_id, step, "
            "row_number() OVER (PARTITION BY run_id ORDER BY step DESC) AS age FROM checkpoints "
            f"WHERE 1 {kind_clause}) WHERE age > ?)", [*kind_params, keep_last]).rowcount
    return removed


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


def _check_keep_last(keep_last: Any) -> Optional[int]:
    if keep_last is not None and check_count(keep_last, "keep_last") < 1:
        raise ConfigError("keep_last must be at least 1 (the latest checkpoint of a run is always kept), "
                          "or None to keep every checkpoint")
    return keep_last


def _check_run_id(run_id: Any) -> str:
    if not isinstance(run_id, str) or not run_id:
        raise ConfigError(f"run_id must be a non-empty string, got {run_id!r}")
    return run_id


def _check_kind(kind: Any) -> str:
    if not isinstance(kind, str) or not kind:
        raise ConfigError(f"checkpoint kind must be a non-empty string such as 'react' or 'workflow', got {kind!r}")
    return kind
