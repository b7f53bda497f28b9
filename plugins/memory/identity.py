"""A memory file's own identity (table ``store_info``): ``store_identity(db)`` reads it, made on first use
(``new_call_id``). It travels with the file, not its path; a checkpoint store's runs are bound to it. The user's
zagent also records, outside the file (``$XDG_DATA_HOME/zagent/stores/``), the identity each path's file had: a file
whose identity changed under one path (another store's written into it) is refused (``_checked_at``), and the
legacy steps it held when given its identity (``legacy_allowed``).
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
        if found == made:
            _remember(db.path, found)
            _remember_legacy(db)
            return found
    if not found:
        raise StoreError(f"{db.path}: its store identity (table store_info, row 'store_id') is damaged (not text of "
                         f"1 to {MAX_ID} characters; edited by someone else?). Restore the file from a backup, or "
                         "delete that row to give the store a new identity: runs paused in it are then asked about "
                         "again, and unsigned runs refused (their seals name the old one)", path=db.path)
    return _checked_at(db.path, found)


#: the folder of ``$XDG_DATA_HOME/zagent`` recording the identity each store file had, by a digest of its real path
_FOLDER = "stores"


def _record(path: str) -> Optional[str]:
    """The record of the file at ``path`` (``None``: no real file, e.g. ``:memory:``)."""
    import hashlib
    import os

    if not path or path == ":memory:" or path.startswith("file:") or "\x00" in path:
        return None
    from zagent.agentkit.privatefiles import data_folder

    return data_folder(_FOLDER, hashlib.sha256(os.path.realpath(path).encode()).hexdigest())


def _checked_at(path: str, found: str) -> str:
    """``found``, the identity the file at ``path`` holds, checked against the one this user's zagent saw there
    before (recorded on first sight): another one is a ``StoreError``. Whoever can write the file could write
    another store's identity into it, and its runs would pass for that store's."""
    import os

    from zagent.agentkit.privatefiles import open_private

    record = _record(path)
    if record is None:
        return found
    try:
        with open(open_private(record, os.O_RDONLY, reading=True), "rb") as f:
            seen = f.read(MAX_ID + 1).decode("utf-8", "replace")
    except FileNotFoundError:
        _remember(path, found)
        return found
    except (OSError, ValueError):  # unreadable: as before records (the seals still name the file's identity)
        return found
    if seen == found:
        return found
    raise StoreError(
        f"{path}: the file holds the store identity {found!r}, but this user's zagent saw the store at this path with "
        f"the identity {seen!r}: another store's file, or its identity (table store_info), was put in its place, so "
        "its runs would pass for that store's runs (their held approvals, yeses and budgets). The store was not "
        "opened. Restore this store's own file; if you moved another store's file here on purpose, remove the record "
        f"{record} and open it again", path=path)


def _remember(path: str, identity: str) -> None:
    """Record that the file at ``path`` holds ``identity`` (a made or first-seen one); not kept when the data folder
    cannot be written (the check is then as before records)."""
    import os

    record = _record(path)
    if record is None:
        return
    from zagent.agentkit.privatefiles import open_private

    try:
        fd = open_private(record, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    except (OSError, ValueError):
        return
    with open(fd, "wb") as f:
        f.write(identity.encode())


def _read(c: "sqlite3.Connection") -> Optional[str]:
    """The identity stored, ``""`` for a damaged one, ``None`` for none."""
    row = c.execute(_READ).fetchone()
    return None if row is None else (row[0] or "")


def legacy_mark(run_id: str, step: int, mac: str) -> str:
    """How the record of legacy steps names step ``step`` of ``run_id`` signed ``mac`` (a digest)."""
    import hashlib

    return hashlib.sha256(f"{run_id}\0{step}\0{mac}".encode()).hexdigest()[:32]


def legacy_allowed(path: str) -> Optional[frozenset[str]]:
    """The ``legacy_mark`` of each signed step the file at ``path`` held when this user's zagent gave it its identity
    (table ``legacy_steps`` then), ``None`` without a record (given its identity elsewhere, or before records): a
    mark added to the file since (another store's pre-upgrade step) is not in it."""
    import os

    from zagent.agentkit.privatefiles import open_private

    record = _record(path)
    if record is None:
        return None
    try:
        with open(open_private(record + ".legacy", os.O_RDONLY, reading=True), "rb") as f:
            return frozenset(f.read(64 << 20).decode("ascii", "replace").split())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):  # unreadable: no legacy step can be vouched for
        return frozenset()


def _remember_legacy(db: "Database") -> None:
    """Record (beside ``_remember``'s) the legacy steps the file holds as it is given its identity (none: the record
    of an earlier file at the path removed)."""
    import os

    from .chain import _metadata

    record = _record(db.path)
    if record is None:
        return
    rows = db.read(lambda c: c.execute("SELECT run_id, step, metadata FROM legacy_steps").fetchall())
    marks = sorted({legacy_mark(run, step, mac) for run, step, raw in rows
                    for mac in [_metadata(raw).get("zagent_mac")] if isinstance(mac, str)})
    from zagent.agentkit.privatefiles import open_private

    try:
        if not marks:
            os.remove(record + ".legacy")
            return
        fd = open_private(record + ".legacy", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    except (OSError, ValueError):
        return
    with open(fd, "wb") as f:
        f.write("\n".join(marks).encode())
