"""Durability of the sqlite memory: killed writers, several processes, several threads.

The kill test is the contract of issue 7: a process killed with SIGKILL at any
point leaves a database that passes ``PRAGMA integrity_check`` and holds every
write it reported as committed, plus at most the one batch in flight.
"""

import os
import random
import signal
import sqlite3
import threading
import time

import pytest

from memory_child import batch_size
from zagent import ConfigError, Message

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")


def integrity(path):
    with sqlite3.connect(path) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]


def fts_integrity(path):
    """FTS5's own check that the index matches the messages table (raises if not)."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        conn.close()


def committed_before_kill(proc, rng):
    """Let the child write for a random while, SIGKILL it, return the last total it reported."""
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    time.sleep(rng.uniform(0.0, 0.25))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    lines = proc.stdout.read().split()
    return int(lines[-1]) if lines else 0


def possible_totals(reported):
    """Totals allowed after a kill: what was reported, or that plus the batch in flight."""
    total, i = 0, 0
    while total < reported:
        total, i = total + batch_size(i), i + 1
    return {reported, reported + batch_size(i)}


def test_killed_writer_never_corrupts_and_loses_at_most_the_write_in_flight(kernel, db_path, run_child):
    """SIGKILL at random points (20 rounds): integrity ok, nothing reported as committed is lost."""
    rng = random.Random(20240607)
    for round_no in range(20):
        ns = f"kill/round{round_no}"
        reported = committed_before_kill(run_child("messages", db_path, ns), rng)
        assert integrity(db_path) == "ok"
        fts_integrity(db_path)
        mem = kernel.memory("sqlite", path=db_path)
        assert mem.count(ns) in possible_totals(reported), f"round {round_no}: reported {reported}"
        texts = [m.content for m in mem.last(ns, mem.count(ns))]
        assert all(t.startswith(f"{ns} message {i} ") for i, t in enumerate(texts))
        mem.close()


def test_two_processes_write_to_one_file(kernel, db_path, run_child):
    """Two processes writing the same file at once both finish, and every message is there."""
    kernel.memory("sqlite", path=db_path).close()  # create the schema first, like an app would
    children = [run_child("writer", db_path, f"proc/{n}", 300) for n in range(2)]
    for proc in children:
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err
        assert out.strip() == "300"
    mem = kernel.memory("sqlite", path=db_path)
    assert [mem.count(f"proc/{n}") for n in range(2)] == [300, 300]
    assert integrity(db_path) == "ok"


def test_two_processes_creating_a_new_file_at_once_both_succeed(kernel, tmp_path, run_child):
    """Two processes racing to create and migrate a new file both end up with one valid schema."""
    path = str(tmp_path / "race.db")
    children = [run_child("writer", path, f"race/{n}", 20) for n in range(2)]
    for proc in children:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    assert kernel.memory("sqlite", path=path).count() == 40


def test_threads_share_one_store(kernel, db_path):
    """Eight threads adding and searching through one store object lose nothing and see no errors."""
    mem = kernel.memory("sqlite", path=db_path)
    errors = []

    def work(n):
        try:
            for i in range(40):
                mem.add(f"thread/{n}", Message.user(f"thread {n} note {i}"))
                mem.search(None, f"note {i}", limit=3)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [mem.count(f"thread/{n}") for n in range(8)] == [40] * 8


def test_a_batch_with_one_unstorable_message_is_refused_whole(kernel, db_path):
    """A batch holding a message that cannot be encoded stores none of its messages."""
    mem = kernel.memory("sqlite", path=db_path)
    mem.add("a/s", Message.user("kept"))
    bad = [Message.user("fine"), Message.user("bad \ud800 surrogate")]
    with pytest.raises(ConfigError):
        mem.add("a/s", bad)
    assert [m.content for m in mem.last("a/s", 10)] == ["kept"]


def test_connections_of_ended_threads_are_released(kernel, db_path):
    """Short-lived threads do not pile up open connections: ended threads' ones are closed."""
    mem = kernel.memory("sqlite", path=db_path)
    for i in range(20):
        t = threading.Thread(target=mem.add, args=("a/s", Message.user(f"m{i}")))
        t.start()
        t.join()
    mem.count()
    assert len(mem.db._conns) <= 2
    assert mem.count("a/s") == 20


def test_killed_while_creating_a_new_file_leaves_it_usable(kernel, tmp_path, run_child):
    """A child killed while creating and migrating a new file leaves a file the next open can use."""
    rng = random.Random(5)
    for round_no in range(6):
        path = str(tmp_path / f"new{round_no}.db")
        proc = run_child("messages", path, "a/s")
        time.sleep(rng.uniform(0.05, 0.4))  # from spawn: import, open, migrate or first writes
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        mem = kernel.memory("sqlite", path=path)
        mem.add("a/s", Message.user("after the crash"))
        assert mem.last("a/s", 1)[0].content == "after the crash"
        assert integrity(path) == "ok"
        mem.close()
