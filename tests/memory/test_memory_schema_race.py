"""Opening a memory file while another process creates its schema (real SQLite file in WAL mode).

The schema check reads the file's version and its tables; if another process
commits the schema between those two reads, a check made of two separate
reads sees zagent's tables with version 0 and calls the file foreign. The
check must read both from one snapshot. Likewise the read-only check must not
call a ``-shm`` unwritable because another process deleted it between two checks.
"""

import os
import sqlite3

from zagent.plugins.memory.database import Database


class MigrateBetweenReads:
    """A connection that lets another connection create the schema right after the version is read."""

    def __init__(self, conn, other):
        self._conn, self._other, self._done = conn, other, False

    def __getattr__(self, name):
        return getattr(self._conn, name)

    def execute(self, sql, *args):
        cursor = self._conn.execute(sql, *args)
        if sql.strip().upper() == "PRAGMA USER_VERSION" and not self._done:
            self._done = True
            rows = cursor.fetchall()
            self._other()  # the other side opens the file: it creates and commits the schema
            return _Rows(rows)
        return cursor


class _Rows:
    def __init__(self, rows):
        self.rows = rows

    def fetchone(self):
        return self.rows[0]


def test_schema_committed_between_the_version_and_the_tables_is_not_called_foreign(tmp_path):
    """A new file whose schema another store commits mid-check is seen as empty (one snapshot), not foreign."""
    path = str(tmp_path / "race.db")
    with sqlite3.connect(path) as conn:  # an empty file already in WAL mode, as a racing process leaves it
        conn.execute("PRAGMA journal_mode = WAL")
    # (a Database creates its schema when made, so the checking side's own store lives on another file;
    # only its check runs on the raced file's connection)
    checking = Database(str(tmp_path / "checker.db"))
    opened = []
    raw = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        assert checking._check_version(MigrateBetweenReads(raw, lambda: opened.append(Database(path)))) == 0
        assert opened and opened[0].read(lambda c: c.execute("PRAGMA user_version").fetchone()[0]) > 0
        assert Database(path).read(lambda c: c.execute("PRAGMA user_version").fetchone()[0]) > 0
    finally:
        raw.close()
        checking.close()
        for db in opened:
            db.close()


def test_a_shm_file_deleted_between_two_checks_is_not_called_unwritable(tmp_path, monkeypatch):
    """A -shm that another process's last connection deletes mid-check leaves the file writable, not read-only."""
    from zagent.plugins.memory import readonly

    path = str(tmp_path / "race.db")
    sqlite3.connect(path).close()
    shm = path + "-shm"
    open(shm, "wb").close()
    real_access = os.access

    def access_as_the_other_process_closes(target, mode):  # the other process removes -shm just now
        if target == shm and os.path.exists(shm):
            os.remove(shm)
            return False
        return real_access(target, mode)

    monkeypatch.setattr(readonly.os, "access", access_as_the_other_process_closes)
    assert readonly.read_only_reason(path) is None


def test_a_shm_file_that_stays_unwritable_still_makes_the_file_read_only(tmp_path, monkeypatch):
    """A -shm that exists and cannot be written is still reported, so SQLite never maps it (no SIGBUS)."""
    from zagent.plugins.memory import readonly

    path = str(tmp_path / "ro.db")
    sqlite3.connect(path).close()
    shm = path + "-shm"
    open(shm, "wb").close()
    real_access = os.access
    monkeypatch.setattr(readonly.os, "access",
                        lambda target, mode: False if target == shm else real_access(target, mode))
    assert readonly.read_only_reason(path) == f"its shared-memory file {shm} cannot be written"
