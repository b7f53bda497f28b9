"""``open_private(path, schema, ...)``: an SQLite file as the small stores (sessions, documents) need it: created 0600
(a folder it makes, 0700), autocommit, usable from any thread behind the caller's lock, WAL, ``schema`` run. A file
SQLite cannot use, or holding SQL of its own (``foreign_sql``), raises ``ConfigError`` untouched, leaving no connection
open. ``byte_length(column)``: SQL for a value's size in bytes (``length`` of TEXT stops at a NUL);
``distinct_names``: a column's names, each bounded.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

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
        conn.execute("PRAGMA trusted_schema = OFF")  # no function with side effects from the file's own schema
        foreign = foreign_sql(conn, tuple(schema))
        if foreign:
            conn.close()
            raise ConfigError(f"{what} {path!r} holds {', '.join(foreign[:5])}{', ...' if len(foreign) > 5 else ''}, "
                              "which zagent does not make: SQL someone else added would run on every write or read "
                              f"(a view may never finish); the file was left untouched. {refused[:1].upper()}"
                              f"{refused[1:]}")
        conn.execute("PRAGMA journal_mode=WAL")
        for statement in schema:
            conn.execute(statement)
    except sqlite3.DatabaseError as exc:
        if conn is not None:
            conn.close()
        raise ConfigError(f"{what} {path!r} cannot be used ({exc}); {refused}") from exc
    return conn


def byte_length(column: str) -> str:
    """SQL for the size in bytes of ``column``'s value: ``length()`` of TEXT counts characters up to the first NUL
    (0 for 70 MiB edited to start with one), so TEXT is measured as a BLOB; a BLOB's length is read from its header."""
    return f"(CASE WHEN typeof({column}) = 'text' THEN length(CAST({column} AS BLOB)) ELSE length({column}) END)"


#: the longest name (a memory namespace, a document source) read back: a longer one was put there by an edit
MAX_NAME_BYTES = 4096


def check_name_size(name: str, what: str) -> None:
    """``ConfigError`` when ``name`` (a namespace, a source) is over ``MAX_NAME_BYTES``: it could not be listed."""
    if len(name) > MAX_NAME_BYTES // 4 and len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise ConfigError(f"{what} is {len(name.encode('utf-8', 'surrogatepass')):,} bytes long, more than the "
                          f"{MAX_NAME_BYTES:,} zagent stores; give a shorter name")


def distinct_names(conn: Any, table: str, column: str, fail: Callable[[str], Exception]) -> list[str]:
    """The distinct values of ``column`` in ``table``, sorted, each read only when at most ``MAX_NAME_BYTES``
    (an edited file's 100 MB name is measured, never read); ``fail(reason)`` is raised for a longer one, or once
    the names add up to more than ``MAX_DATA_BYTES``."""
    from zagent.agentkit.files import MAX_DATA_BYTES

    size = byte_length(column)
    rows = conn.execute(f"SELECT CASE WHEN {size} <= {MAX_NAME_BYTES} THEN {column} END, max(rowid), {size} "
                        f"FROM {table} GROUP BY 1 ORDER BY 1")
    out, total = [], 0
    for name, rowid, length in rows:
        total += length or 0
        if name is None or total > MAX_DATA_BYTES:
            why = (f"the {column} of row {rowid} is {length:,} bytes, more than the {MAX_NAME_BYTES:,} zagent "
                   "reads back" if name is None else f"its {column} names add up to more than "
                   f"{MAX_DATA_BYTES // 2**20} MiB")
            raise fail(f"{why} (a file edited by someone else?); delete that row or use a new file")
        out.append(name)
    return out


def foreign_sql(conn: Any, schema: tuple[str, ...]) -> list[str]:
    """The triggers, views, virtual tables and indexes on ``conn`` (``"trigger 'forge'"``) that neither ``schema``
    nor the memory file's schema makes with the same SQL (``schema.foreign_objects``)."""
    from .schema import foreign_objects

    return foreign_objects(conn, schema)


__all__ = ["create_private", "open_private"]
