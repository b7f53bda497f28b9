"""Checkpoint stores that fail on purpose, on real SQLite files, for the fail-closed tests of the ReAct loop,
workflows and group chats (``from tests.failingstores import ...``), and one that cannot take patches.

* ``failing(path, at)``: a ``CheckpointStore`` whose write of step ``at`` raises ``Broken`` (once: a transient
  failure, the writes after it land); ``store.attempts`` lists every step a write was tried for.
* ``locked(path)``: another connection holding the file's write lock (``BEGIN EXCLUSIVE``) until it is closed,
  as another process writing would; a store opened with ``short_wait`` gives up on it at once (``StoreBusy``).
* ``FullOnly()``: a third-party store in memory with ``asave`` and ``alatest`` only (no ``asave_patch``), so
  every checkpoint reaches it whole; ``store.saved[run_id][step]`` is what it holds.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Awaitable, Callable, Optional

from zagent.plugins.memory.checkpoints import CheckpointStore

#: store options for a file another connection locks: give up after one short wait, no retries
SHORT_WAIT = {"busy_timeout": 0.05, "retries": 0}


class Broken(OSError):
    """The store's own failure (say, a disk that went away)."""


class FailingStore(CheckpointStore):
    """A real checkpoint store whose write of step ``fail_at`` fails, and the ``failures - 1`` writes after it."""

    fail_at: int
    failures: int
    attempts: list[int]
    before_failing: Optional[Callable[[], Awaitable[None]]]

    async def _gate(self, step: int) -> None:
        self.attempts.append(step)
        if step >= self.fail_at and self.failures > 0:
            self.failures -= 1
            if self.before_failing is not None:
                await self.before_failing()
            raise Broken(f"disk went away while writing step {step}")

    async def asave(self, run_id: str, step: int, state: Any, **kw: Any) -> None:
        await self._gate(step)
        await super().asave(run_id, step, state, **kw)

    async def asave_patch(self, run_id: str, step: int, patch: Any, **kw: Any) -> None:
        await self._gate(step)
        await super().asave_patch(run_id, step, patch, **kw)


def failing(path: str, at: int, failures: int = 1,
            before_failing: Optional[Callable[[], Awaitable[None]]] = None) -> FailingStore:
    """A ``FailingStore`` on ``path`` (every step kept) whose write of step ``at`` fails (and the
    ``failures - 1`` after it: the failure is transient); ``before_failing`` is awaited before each failure."""
    store = FailingStore.open(path, keep_last=None)
    store.fail_at, store.failures, store.attempts, store.before_failing = at, failures, [], before_failing
    return store


def locked(path: str) -> sqlite3.Connection:
    """A connection holding ``path``'s write lock until ``.close()`` (usable from any thread)."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("BEGIN EXCLUSIVE")
    return conn


class FullOnly:
    """A third-party store: ``asave`` and ``alatest``, no ``asave_patch``."""

    def __init__(self) -> None:
        self.saved: dict[str, dict[int, bytes]] = {}

    async def asave(self, run_id: str, step: int, state: bytes, *, kind: str, metadata: Any = None) -> None:
        self.saved.setdefault(run_id, {})[step] = bytes(state)

    async def alatest(self, run_id: str) -> Optional[tuple[int, bytes]]:
        steps = self.saved.get(run_id)
        return (max(steps), steps[max(steps)]) if steps else None
