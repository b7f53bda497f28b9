"""Bad files and full disks: clear errors, and the data on disk is left intact.

Rules: a non-SQLite file is refused untouched; a database from a newer schema
is refused untouched; another application's SQLite file is refused untouched; a full disk (simulated with ``max_bytes``) rolls the
write back whole and keeps everything committed; the schema version is
recorded and migrations run in one transaction.
"""

import os
import sqlite3

import pytest

from zagent import ConfigError, Message
from zagent.plugins.memory import ForeignDatabase, NotADatabase, SchemaTooNew, StoreError, StoreFull
from zagent.plugins.memory import database
from zagent.plugins.memory.schema import SCHEMA_VERSION


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def test_non_sqlite_file_is_refused_and_left_intact(kernel, tmp_path):
    """Opening a file that is not SQLite raises NotADatabase and does not change a byte."""
    path = tmp_path / "notes.txt"
    path.write_bytes(b"my precious notes\n" * 100)
    with pytest.raises(NotADatabase, match="not an SQLite database"):
        kernel.memory("sqlite", path=str(path))
    assert read_bytes(path) == b"my precious notes\n" * 100
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"]


def test_database_from_a_newer_schema_is_refused_and_left_intact(kernel, db_path):
    """A file whose schema version is newer than this zagent's raises SchemaTooNew, untouched."""
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE future (x)")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    before = read_bytes(db_path)
    with pytest.raises(SchemaTooNew, match="Upgrade zagent") as info:
        kernel.memory("sqlite", path=db_path)
    assert (info.value.found, info.value.supported) == (SCHEMA_VERSION + 1, SCHEMA_VERSION)
    assert read_bytes(db_path) == before


def test_schema_version_is_recorded(kernel, db_path):
    """A new file records the current schema version in PRAGMA user_version."""
    kernel.memory("sqlite", path=db_path).close()
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_file_is_in_wal_mode(kernel, db_path):
    """The file uses write-ahead logging, so readers never block the writer."""
    kernel.memory("sqlite", path=db_path).close()
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def app_file(path, version=0):
    """A real SQLite file of some other application: its own table and rows, user_version ``version``."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("name", ["sqlite", "checkpoints"])
def test_another_applications_sqlite_file_is_refused_and_left_intact(kernel, db_path, name):
    """An SQLite file with tables of its own and user_version 0 raises ForeignDatabase, not a byte changed."""
    app_file(db_path)
    before = read_bytes(db_path)
    with pytest.raises(ForeignDatabase) as info:
        kernel.memory(name, path=db_path)
    message = str(info.value)
    assert db_path in message and "belongs to something else" in message and "Pick another path" in message
    assert info.value.tables == ("invoices",) and info.value.path == db_path
    assert read_bytes(db_path) == before
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("invoices",)]


def test_foreign_file_with_its_own_user_version_is_refused(kernel, db_path):
    """A file whose user_version another program set, without zagent's tables, is refused too."""
    app_file(db_path, version=SCHEMA_VERSION)
    with pytest.raises(ForeignDatabase, match="user_version"):
        kernel.memory("sqlite", path=db_path)


def test_empty_sqlite_file_is_taken_as_new(kernel, db_path):
    """An SQLite file with no tables (e.g. made by sqlite3.connect) gets zagent's schema and works."""
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA user_version = 0")
    conn.execute("VACUUM")  # writes the header, so the file is a real, empty database
    conn.close()
    assert read_bytes(db_path)[:16] == b"SQLite format 3\x00"
    mem = kernel.memory("sqlite", path=db_path)
    mem.add("a/s", Message.user("hi"))
    assert mem.count() == 1


def test_zagents_own_file_reopens_after_an_app_added_a_table(kernel, db_path):
    """A zagent file stays zagent's even if an app later added a table of its own to it."""
    kernel.memory("sqlite", path=db_path).add("a/s", Message.user("hi"))
    with sqlite3.connect(db_path) as conn:
        conn.execute("CREATE TABLE app_data (v)")
    assert kernel.memory("sqlite", path=db_path).count() == 1


def test_migration_to_a_new_version_runs_on_open(kernel, db_path, monkeypatch):
    """An older file is migrated on open, data kept, and the new version recorded."""
    mem = kernel.memory("sqlite", path=db_path)
    mem.add("a/s", Message.user("from v1"))
    mem.close()
    new = SCHEMA_VERSION + 1
    monkeypatch.setattr(database, "MIGRATIONS", {**database.MIGRATIONS, new: "CREATE TABLE extra (x);"})
    monkeypatch.setattr(database, "SCHEMA_VERSION", new)
    mem = kernel.memory("sqlite", path=db_path)
    assert [m.content for m in mem.last("a/s", 5)] == ["from v1"]
    mem.close()
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == new
        assert conn.execute("SELECT count(*) FROM extra").fetchone()[0] == 0


def test_failing_migration_leaves_the_file_at_its_old_version(kernel, db_path, monkeypatch):
    """A migration that fails half-way is rolled back whole: old version, old data, no new tables."""
    mem = kernel.memory("sqlite", path=db_path)
    mem.add("a/s", Message.user("precious"))
    mem.close()
    new = SCHEMA_VERSION + 1
    broken = "CREATE TABLE half_done (x);\nTHIS IS NOT SQL;"
    monkeypatch.setattr(database, "MIGRATIONS", {**database.MIGRATIONS, new: broken})
    monkeypatch.setattr(database, "SCHEMA_VERSION", new)
    with pytest.raises(StoreError):
        kernel.memory("sqlite", path=db_path)
    monkeypatch.undo()
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'half_done'").fetchall() == []
    assert [m.content for m in kernel.memory("sqlite", path=db_path).last("a/s", 5)] == ["precious"]


def test_full_disk_raises_store_full_and_keeps_committed_messages(kernel, db_path):
    """When the size limit is hit, StoreFull says so, the batch is rolled back, earlier data stays."""
    mem = kernel.memory("sqlite", path=db_path, max_bytes=256 * 1024)
    mem.add("a/s", [Message.user(f"early {i}") for i in range(10)])
    big = [Message.user(f"bulk {i} " + "y" * 2000) for i in range(500)]
    with pytest.raises(StoreFull, match="nothing committed was lost"):
        mem.add("a/s", big)
    assert [m.content for m in mem.last("a/s", 100)] == [f"early {i}" for i in range(10)]
    mem.close()
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_store_stays_usable_after_a_full_disk(kernel, db_path):
    """After StoreFull, a write that fits succeeds on the same store."""
    mem = kernel.memory("sqlite", path=db_path, max_bytes=256 * 1024)
    with pytest.raises(StoreFull):
        mem.add("a/s", [Message.user("z" * 3000) for _ in range(500)])
    mem.add("a/s", Message.user("small"))
    assert [m.content for m in mem.last("a/s", 5)] == ["small"]


def test_missing_directory_is_a_clear_error(kernel, tmp_path):
    """A path in a directory that does not exist raises StoreError naming the path."""
    path = str(tmp_path / "no" / "such" / "dir" / "m.db")
    with pytest.raises(StoreError, match="no/such/dir"):
        kernel.memory("sqlite", path=path)


def test_without_a_path_the_file_comes_from_zagent_memory_db(kernel, tmp_path, monkeypatch):
    """k.memory('sqlite') without path= uses $ZAGENT_MEMORY_DB, creating its directory."""
    target = tmp_path / "data" / "agents.db"
    monkeypatch.setenv("ZAGENT_MEMORY_DB", str(target))
    kernel.memory("sqlite").add("a/s", Message.user("remembered"))
    assert [m.content for m in kernel.memory("sqlite", path=str(target)).last("a/s", 1)] == ["remembered"]


def test_closed_store_refuses_use(kernel, db_path):
    """Using a store after close() raises StoreError saying to open a new one."""
    mem = kernel.memory("sqlite", path=db_path)
    mem.close()
    with pytest.raises(StoreError, match="closed"):
        mem.last("a/s", 1)


def test_data_survives_reopening(kernel, db_path):
    """What one store wrote, a new store on the same file reads."""
    mem = kernel.memory("sqlite", path=db_path)
    mem.add("a/s", [Message.user("persist"), Message.assistant("me")])
    mem.close()
    assert [m.content for m in kernel.memory("sqlite", path=db_path).last("a/s", 5)] == ["persist", "me"]


def test_bad_database_options_are_config_errors(kernel, db_path):
    """Nonsense options (synchronous='maybe', a tiny max_bytes) are refused before touching the file."""
    with pytest.raises(ConfigError):
        kernel.memory("sqlite", path=db_path, synchronous="maybe")
    with pytest.raises(ConfigError):
        kernel.memory("sqlite", path=db_path, max_bytes=10)
    assert not os.path.exists(db_path)


def test_errors_are_classified_without_sqlite_errorcode():
    """On Pythons whose sqlite3 errors lack sqlite_errorcode (3.10), SQLite's message decides."""
    import sqlite3 as s

    assert database._primary(s.OperationalError("database or disk is full")) == database.FULL
    assert database._primary(s.OperationalError("database is locked")) == database.BUSY
