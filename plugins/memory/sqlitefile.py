"""``open_private(path, schema, ...)``: an SQLite file as the small stores (sessions, documents) need it: created 0600
(a folder it makes, 0700), autocommit (the caller runs ``BEGIN IMMEDIATE``), usable from any thread behind the caller's
lock, WAL, ``schema`` run. A file SQLite cannot use raises ``ConfigError`` and leaves no connection open.
"""

from __future__ import annotations

from typing import Any, Iterable

from zagent.errors import ConfigError


def create_private(path: str) -> None:
    """Create ``path`` empty with mode 0600 unless it exists (``zagent.agentkit.privatefiles``: its new folder 0700)."""
    from zagent.agentkit.privatefiles import private_parent, touch_private

    if path not in (":memory:", ""):  # no lexical '..': after a symlinked folder it climbs from the link's target
        private_parent(path)
    touch_private(path)


def open_private(path: str, schema: Iterable[str], *, busy_timeout: float, what: str, refused: str) -> Any:
    """A ``sqlite3.Connection`` to ``path`` with ``schema`` created (see the module docstring).

    ``what`` names the file in the error (``"session file"``), ``refused`` says what to give instead."""
    import sqlite3

    create_private(path)
    conn = None
    try:
        conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        for statement in schema:
            conn.execute(statement)
    except sqlite3.DatabaseError as exc:
        if conn is not None:
            conn.close()
        raise ConfigError(f"{what} {path!r} cannot be used ({exc}); {refused}") from exc
    return conn


__all__ = ["create_private", "open_private"]
