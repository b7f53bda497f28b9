"""A memory file's own identity (table ``store_info``): ``store_identity(db)`` reads it, made on first use
(``new_call_id``). It travels with the file, not its path; a checkpoint store's runs are bound to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from .errors import StoreError

if TYPE_CHECKING:  # pragma: no cover
    import sqlite3

    from .database import Database

#: the longest identity read back (zagent makes 29 characters; a longer one was written by someone else)
MAX_ID = 200
_READ = (f"SELECT CASE WHEN typeof(value) = 'text' AND length(value) BETWEEN 1 AND {MAX_ID} THEN value END "
         "FROM store_info WHERE name = 'store_id'")


def store_identity(db: "Database") -> str:
    """The identity of the file behind ``db``, made now if it has none (``StoreError`` when it cannot be written,
    or holds a damaged one)."""
    found = db.read(_read)
    if found is None:
        if db.read_only is not None:
            raise StoreError(f"{db.path} has no store identity yet, and cannot be given one: {db.read_only}. Its "
                             "runs cannot be bound to it; make the file writable and open it once", path=db.path)
        from zagent.providerkit import new_call_id

        made = "store_" + new_call_id()[len("call_"):]

        def write(c: "sqlite3.Connection") -> Optional[str]:
            c.execute("INSERT OR IGNORE INTO store_info (name, value) VALUES ('store_id', ?)", (made,))
            return _read(c)  # another process's, when it made one first

        found = db.write(write)
    if not found:
        raise StoreError(f"{db.path}: its store identity (table store_info, row 'store_id') is damaged (not text of "
                         f"1 to {MAX_ID} characters; edited by someone else?). Restore the file from a backup, or "
                         "delete that row to give the store a new identity: runs paused in it are then asked about "
                         "again, and unsigned runs refused (their seals name the old one)", path=db.path)
    return found


def _read(c: "sqlite3.Connection") -> Optional[str]:
    """The identity stored, ``""`` for a damaged one, ``None`` for none."""
    row = c.execute(_READ).fetchone()
    return None if row is None else (row[0] or "")
