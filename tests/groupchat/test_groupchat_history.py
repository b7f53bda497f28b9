"""The shared history: ordered, gap-free, snapshot reads, safe under 20 concurrent writers."""

import threading

import msgspec
import pytest

from zagent.plugins.groupchat import SharedHistory


def test_appends_are_numbered_in_order_without_gaps():
    """Every append gets the next sequence number, from 1."""
    h = SharedHistory()
    seqs = [h.append("a", f"m{i}").seq for i in range(5)]
    assert seqs == [1, 2, 3, 4, 5]
    assert [m.content for m in h.snapshot()] == [f"m{i}" for i in range(5)]


def test_a_snapshot_never_changes_after_later_appends():
    """Readers get an immutable snapshot: later appends do not show up in it."""
    h = SharedHistory()
    h.append("a", "one")
    snap = h.snapshot()
    h.append("b", "two")
    assert len(snap) == 1 and len(h.snapshot()) == 2
    with pytest.raises((AttributeError, TypeError)):
        snap[0].content = "changed"


def test_twenty_writer_threads_and_readers_see_a_consistent_ordered_history():
    """20 threads append while readers read: no torn read, no lost or duplicated append, per-writer order kept."""
    h = SharedHistory()
    writers, per_writer = 20, 200
    start = threading.Barrier(writers + 4)
    stop = threading.Event()
    problems = []

    def write(w):
        start.wait()
        for i in range(per_writer):
            h.append(f"w{w}", str(i))

    def read():
        start.wait()
        while not stop.is_set():
            snap = h.snapshot()
            if [m.seq for m in snap] != list(range(1, len(snap) + 1)):
                problems.append("a snapshot with a gap or out of order")
            tail = h.since(max(0, len(snap) - 5))
            if tail and tail[0].seq != max(0, len(snap) - 5) + 1:
                problems.append("since() did not start after the given seq")

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    readers = [threading.Thread(target=read) for _ in range(4)]
    for t in threads + readers:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    final = h.snapshot()
    assert not problems
    assert len(final) == writers * per_writer
    assert [m.seq for m in final] == list(range(1, writers * per_writer + 1))
    for w in range(writers):
        mine = [int(m.content) for m in final if m.speaker == f"w{w}"]
        assert mine == list(range(per_writer)), "each writer's appends appear once, in its own order"


def test_a_restored_history_renumbers_from_one():
    """A history rebuilt from saved messages keeps their order and numbers them 1..n."""
    h = SharedHistory()
    h.append("a", "x")
    h.append("b", "y")
    raw = msgspec.json.encode(list(h.snapshot()))
    from zagent.plugins.groupchat import ChatMessage

    again = SharedHistory(msgspec.json.decode(raw, type=list[ChatMessage]))
    assert [(m.seq, m.speaker) for m in again.snapshot()] == [(1, "a"), (2, "b")]
