"""``CheckpointChain``: a run's raw step log, for checking signed checkpoints (``zagent.agentkit.signing``).

Mixed into ``CheckpointStore``: ``chain(run_id)`` reads, in one transaction, the rows from the last full save to the
latest step and the latest state rebuilt from exactly those rows, so what is checked is what is restored.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Optional

import msgspec

from zagent.agentkit.signing import MAC

from .patches import FULL_BASE, check_restore_size, rebuild, stored
from .records import check_run_id

if TYPE_CHECKING:
    import sqlite3

    from .database import Database

_ROWS = ("SELECT step, kind, state, patch, metadata FROM checkpoints WHERE run_id = ? AND step >= ? "
         "ORDER BY step")
#: one step of the log: step, kind, stored bytes, whether a patch, metadata
ChainRow = tuple[int, str, bytes, bool, dict[str, Any]]


class CheckpointChain:
    """``chain``/``achain`` for a store with ``db`` (see the module docstring)."""

    db: Database

    def chain(self, run_id: str) -> Optional[tuple[list[ChainRow], bytes]]:
        """``(rows, latest state bytes)`` of ``run_id``, or ``None`` when it has no checkpoint."""
        check_run_id(run_id)

        def read(c: sqlite3.Connection) -> Optional[tuple[list[ChainRow], bytes]]:
            latest = c.execute("SELECT max(step) FROM checkpoints WHERE run_id = ?", (run_id,)).fetchone()[0]
            if latest is None:
                return None
            check_restore_size(c, run_id, latest)
            last = c.execute("SELECT step, state, patch FROM checkpoints WHERE run_id = ? AND step = ?",
                             (run_id, latest)).fetchone()
            base = last[0] if not last[2] else c.execute(FULL_BASE, (run_id, last[0])).fetchone()[0]
            rows = c.execute(_ROWS, (run_id, last[0] if base is None else base)).fetchall()
            state = rebuild(c, run_id, last[0]) if last[2] else stored(last[1], run_id, last[0])
            return [(r[0], r[1], stored(r[2], run_id, r[0]), bool(r[3]), _metadata(r[4])) for r in rows], state

        return self.db.read(read)

    async def achain(self, run_id: str) -> Optional[tuple[list[ChainRow], bytes]]:
        return await asyncio.to_thread(self.chain, run_id)

    def legacy_macs(self, run_id: str) -> dict[int, str]:
        """``{step: MAC}`` of the signed steps of ``run_id`` this file held when it was given a store identity
        (schema 5, table ``legacy_steps``): signed by a zagent before store identities, without the store. A step
        with that MAC is accepted so (``Signer.check``); any other needs the store's. Where this user's zagent gave
        the file its identity, only the marks it recorded then count (``identity.legacy_allowed``)."""
        rows = self.db.read(lambda c: c.execute("SELECT step, metadata FROM legacy_steps WHERE run_id = ?",
                                                (check_run_id(run_id),)).fetchall())
        found = {step: _metadata(raw).get(MAC) for step, raw in rows}
        from .identity import legacy_allowed, legacy_mark

        allowed = legacy_allowed(self.db.path)  # recorded outside the file: a mark added to it since is not there
        return {step: mac for step, mac in found.items() if isinstance(mac, str)
                and (allowed is None or legacy_mark(run_id, step, mac) in allowed)}

    async def alegacy_macs(self, run_id: str) -> dict[int, str]:
        return await asyncio.to_thread(self.legacy_macs, run_id)


def _metadata(raw: Any) -> dict[str, Any]:
    try:
        value = msgspec.json.decode(raw)
    except (msgspec.DecodeError, TypeError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}
