"""``Database.close()`` while other threads are using their connections (real SQLite file, real threads).

Closing never pulls a connection out from under a thread in the middle of a
read or a write: work already started finishes (a write commits), the
connection is closed by its own thread when that work ends, and work started
after the close gets ``StoreError``, never a raw ``sqlite3`` error.
"""

import sqlite3
import threading

import pytest

from zagent.plugins.memory.database import Database
from zagent.plugins.memory.errors import StoreError

WAIT = 60  # seconds a thread waits for the other side before the test gives up (never a timing assertion)


def make_table(db):
    db.write(lambda c: c.execute("CREATE TABLE IF NOT EXISTS probe (x INTEGER)"))


def rows(path):
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT x FROM probe ORDER BY x")]


class PausedWriter(threading.Thread):
    """A thread whose write transaction stops half way (row inserted, not committed) until released."""

    def __init__(self, db):
        super().__init__(daemon=True)
        self.db, self.inside, self.release = db, threading.Event(), threading.Event()
        self.result = self.error = self.conn = None

    def run(self):
        def work(conn):
            self.conn = conn
            conn.execute("INSERT INTO probe VALUES (1)")
            self.inside.set()
            assert self.release.wait(WAIT)
            conn.execute("INSERT INTO probe VALUES (2)")
            return "committed"

        try:
            self.result = self.db.write(work)
        except BaseException as exc:  # recorded for the test to look at
            self.error = exc


def test_close_lets_a_write_in_another_thread_finish_and_commit(tmp_path):
    """A write half way through in another thread when close() is called still commits both rows."""
    path = str(tmp_path / "memory.db")
    db = Database(path)
    make_table(db)
    writer = PausedWriter(db)
    writer.start()
    assert writer.inside.wait(WAIT)
    db.close()
    writer.release.set()
    writer.join(WAIT)
    assert writer.error is None, repr(writer.error)
    assert writer.result == "committed"
    assert rows(path) == [1, 2]


def test_a_busy_connection_is_closed_by_its_own_thread_when_its_work_ends(tmp_path):
    """The paused writer's connection stays open through close() and is closed once its write returns."""
    db = Database(str(tmp_path / "memory.db"))
    make_table(db)
    writer = PausedWriter(db)
    writer.start()
    assert writer.inside.wait(WAIT)
    db.close()
    writer.conn.execute("SELECT 1")  # still usable: close() left it to its thread
    writer.release.set()
    writer.join(WAIT)
    with pytest.raises(sqlite3.ProgrammingError):
        writer.conn.execute("SELECT 1")
    assert db._conns == []


def test_work_started_after_close_is_refused_with_store_error(tmp_path):
    """A thread that starts a read after close() gets StoreError naming the file, not an sqlite3 error."""
    path = str(tmp_path / "memory.db")
    db = Database(path)
    make_table(db)
    errors = []
    ready, go = threading.Event(), threading.Event()

    def reader():
        db.read(lambda c: c.execute("SELECT 1").fetchone())  # this thread's connection exists
        ready.set()
        assert go.wait(WAIT)
        try:
            db.read(lambda c: c.execute("SELECT 1").fetchone())
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    assert ready.wait(WAIT)
    db.close()
    go.set()
    t.join(WAIT)
    assert len(errors) == 1 and isinstance(errors[0], StoreError) and path in str(errors[0])


def test_close_from_inside_a_write_lets_that_write_commit(tmp_path):
    """close() called by the writing thread itself (inside its transaction) neither deadlocks nor loses the write."""
    path = str(tmp_path / "memory.db")
    db = Database(path)
    make_table(db)

    def work(conn):
        conn.execute("INSERT INTO probe VALUES (7)")
        db.close()
        conn.execute("INSERT INTO probe VALUES (8)")

    db.write(work)
    assert rows(path) == [7, 8]
    with pytest.raises(StoreError):
        db.read(lambda c: c.execute("SELECT 1").fetchone())


def test_readers_racing_close_get_results_or_store_error_only(tmp_path):
    """Threads reading in a loop while another thread closes: each read returns its row or raises StoreError."""
    db = Database(str(tmp_path / "memory.db"))
    make_table(db)
    db.write(lambda c: c.execute("INSERT INTO probe VALUES (1)"))
    started, outcomes, lock = threading.Barrier(5), [], threading.Lock()

    def reader():
        started.wait(WAIT)
        for _ in range(2000):  # bounded
            try:
                value = db.read(lambda c: c.execute("SELECT x FROM probe").fetchone()[0])
            except StoreError:
                with lock:
                    outcomes.append("closed")
                return
            except BaseException as exc:
                with lock:
                    outcomes.append(exc)
                return
            assert value == 1
        with lock:
            outcomes.append("finished")

    threads = [threading.Thread(target=reader, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    started.wait(WAIT)
    db.close()
    for t in threads:
        t.join(WAIT)
    assert len(outcomes) == 4 and all(o in ("closed", "finished") for o in outcomes), outcomes
