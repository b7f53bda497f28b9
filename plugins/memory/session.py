"""``SQLiteSession(session_id, path)``: a conversation kept in an SQLite file under an id the app chooses, for
``agent.chat(text, session=s)`` (docs/sessions.md). ``get_items``, ``add_items`` (one transaction), ``pop_item``,
``clear_session`` and async twins; items are ``zagent.Message``. A new file is 0600 (a folder created here, 0700).
At most 64 MiB of items is read back (``pop_item`` too; each item counts 256 bytes at least), and an item that is not a
stored message is a ``ConfigError`` (an edited file).
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Iterable, Optional

import msgspec

from zagent.errors import ConfigError
from zagent.types import Message

#: what each item counts toward the 64 MiB read back at least (a tiny item still becomes a whole Python message)
ITEM_COST = 256

_SCHEMA = ("CREATE TABLE IF NOT EXISTS zagent_session_items (id INTEGER PRIMARY KEY AUTOINCREMENT, "
           "session_id TEXT NOT NULL, at REAL NOT NULL, item BLOB NOT NULL)",
           "CREATE INDEX IF NOT EXISTS zagent_session_items_by_id ON zagent_session_items (session_id, id)")
_encode = msgspec.json.Encoder().encode
_JUDGED = "zagent.judged"  # zagent.plugins.actions.sessions.JUDGED: a chat judged the item when it was new
_decode = msgspec.json.Decoder(Message).decode


class SQLiteSession:
    """One conversation (``session_id``) in the SQLite file ``path`` (see the module docstring)."""

    def __init__(self, session_id: str, path: "os.PathLike[str] | str", *, busy_timeout: float = 10.0):
        if not isinstance(session_id, str) or not session_id:
            raise ConfigError(f"a session id must be a non-empty string chosen by the app, got {session_id!r}")
        self.session_id = session_id
        self.path = os.fspath(path)
        self.busy_timeout = float(busy_timeout)
        self._lock = threading.Lock()
        self._conn: Any = None

    def _db(self) -> Any:
        if self._conn is None:
            from .sqlitefile import open_private

            self._conn = open_private(self.path, _SCHEMA, busy_timeout=self.busy_timeout, what="session file",
                                      refused="give a new file or an SQLite file this app's sessions wrote")
        return self._conn

    # -- sync ---------------------------------------------------------------------

    def get_items(self, limit: Optional[int] = None) -> list[Message]:
        """The conversation, oldest first; with ``limit`` only the newest ``limit`` items."""
        from zagent.agentkit.files import MAX_DATA_BYTES

        from .sqlitefile import byte_length

        # an item over the limit is never read (its length only), nor more than the limit in all
        size = byte_length("item")
        pick = (f"SELECT id, {size}, CASE WHEN {size} <= ? THEN item END FROM zagent_session_items "
                "WHERE session_id = ? ORDER BY id")
        with self._lock:
            db = self._db()
            if limit is None:
                cursor = db.execute(pick, (MAX_DATA_BYTES, self.session_id))
            else:
                cursor = db.execute(pick + " DESC LIMIT ?", (MAX_DATA_BYTES, self.session_id, int(limit)))
            rows: list[Any] = []
            total = 0
            for row in cursor:
                total += max(row[1] or 0, ITEM_COST)
                if row[2] is None or total > MAX_DATA_BYTES:
                    cursor.close()
                    raise ConfigError(f"session {self.session_id!r} of {self.path!r}: item {row[0]} brings the "
                                      f"{len(rows) + 1} items read to {total / 2**20:.1f} MiB (each counted at least "
                                      f"{ITEM_COST} bytes), more than the {MAX_DATA_BYTES // 2**20} MiB zagent reads "
                                      "back (a file edited by someone else?); read fewer (get_items(limit=N)), clear "
                                      "the session (clear_session()) or use a new file")
                rows.append(row)
        return [_item(self, row[0], row[2]) for row in (rows if limit is None else rows[::-1])]

    def add_items(self, messages: Iterable[Any]) -> None:
        """Append ``messages`` (``Message`` or dicts) in one transaction. Items an app adds are judged by the
        input guardrails when a chat reads them: a ``zagent.judged`` mark in their metadata is not kept (only the
        turns a chat appends carry it, ``zagent.plugins.actions.sessions``)."""
        self._insert(messages, judged=False)

    def _add_judged(self, messages: Iterable[Any]) -> None:
        """``add_items`` for a chat's own turn, judged when it was new: its ``zagent.judged`` mark is kept."""
        self._insert(messages, judged=True)

    def _insert(self, messages: Iterable[Any], *, judged: bool) -> None:
        items = [m if isinstance(m, Message) else msgspec.convert(m, Message) for m in messages]
        items = [m if _is_marked(m, judged) else msgspec.structs.replace(m, metadata=_marked(m, judged)) for m in items]
        now = time.time()
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany("INSERT INTO zagent_session_items (session_id, at, item) VALUES (?, ?, ?)",
                               [(self.session_id, now, _encode(m)) for m in items])
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def pop_item(self) -> Optional[Message]:
        """Remove and return the newest item (``None`` when the session is empty); one over the read limit is
        left in place, unread (``ConfigError``)."""
        from zagent.agentkit.files import MAX_DATA_BYTES

        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                from .sqlitefile import byte_length

                newest = db.execute(f"SELECT id, {byte_length('item')} FROM zagent_session_items WHERE "
                                    "session_id = ? ORDER BY id DESC LIMIT 1", (self.session_id,)).fetchone()
                if newest is not None and (newest[1] or 0) > MAX_DATA_BYTES:
                    raise ConfigError(f"session {self.session_id!r} of {self.path!r}: item {newest[0]} holds "
                                      f"{newest[1] / 2**20:.1f} MiB, more than the {MAX_DATA_BYTES // 2**20} MiB "
                                      "zagent reads back (a file edited by someone else?); it was left in place. "
                                      "Clear the session (clear_session()) or use a new file")
                row = db.execute("DELETE FROM zagent_session_items WHERE id = ? RETURNING id, item",
                                 (newest[0],)).fetchone() if newest is not None else None
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        return _item(self, row[0], row[1]) if row else None

    def clear_session(self) -> None:
        """Forget this session's items (other sessions of the file stay)."""
        with self._lock:
            self._db().execute("DELETE FROM zagent_session_items WHERE session_id = ?", (self.session_id,))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- async twins (SQLite calls are short; they run in a thread so the loop never waits on a lock) --

    async def aget_items(self, limit: Optional[int] = None) -> list[Message]:
        import asyncio

        return await asyncio.to_thread(self.get_items, limit)

    async def aadd_items(self, messages: Iterable[Any]) -> None:
        import asyncio

        await asyncio.to_thread(self.add_items, list(messages))

    async def _aadd_judged(self, messages: Iterable[Any]) -> None:
        import asyncio

        await asyncio.to_thread(self._add_judged, list(messages))

    async def apop_item(self) -> Optional[Message]:
        import asyncio

        return await asyncio.to_thread(self.pop_item)

    async def aclear_session(self) -> None:
        import asyncio

        await asyncio.to_thread(self.clear_session)

    def __repr__(self) -> str:
        return f"<SQLiteSession {self.session_id!r} {self.path!r}>"


def _is_marked(message: Message, judged: bool) -> bool:
    """Whether ``message`` already carries the chat's mark as wanted: set (``judged``) or absent."""
    return message.metadata.get(_JUDGED) is True if judged else _JUDGED not in message.metadata


def _marked(message: Message, judged: bool) -> dict[str, Any]:
    """``message``'s metadata with the chat's ``zagent.judged`` mark set (``judged``) or taken out."""
    metadata = {k: v for k, v in message.metadata.items() if k != _JUDGED}
    return {**metadata, _JUDGED: True} if judged else metadata


def _item(session: SQLiteSession, number: Optional[int], raw: Any) -> Message:
    """The ``Message`` stored as ``raw``; ``ConfigError`` naming the file and the item when it is none."""
    try:
        return _decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        which = f"item {number}" if number is not None else "the newest item"
        raise ConfigError(f"session {session.session_id!r} of {session.path!r}: {which} is not a message zagent "
                          f"stored ({str(exc)[:200]}); the file was edited or damaged. Clear the session "
                          "(clear_session()) or use a new file") from None


__all__ = ["SQLiteSession"]
