"""Recall scoped to a namespace that holds most of the store: ranked in FTS5 first, same answers as the slow way."""

import random

from zagent import Message


def _store(kernel, tmp_path):
    mem = kernel.memory("sqlite", path=str(tmp_path / "m.db"), synchronous="normal")
    rng = random.Random(5)
    words = [f"w{i}" for i in range(300)]
    for ns, n in (("big/one", 3000), ("small/one", 300)):
        for start in range(0, n, 500):
            mem.add(ns, [Message.user(" ".join(rng.choices(words, k=8))) for _ in range(start, min(n, start + 500))])
    return mem, rng, words


def _slow(mem, namespace, text, limit):
    """The filtered query without the FTS5-first shortcut (what search did before)."""
    from zagent.plugins.memory.inprocess import words_of
    from zagent.plugins.memory.records import Filters
    from zagent.plugins.memory.sqlite import _decode, _where

    where, params = _where(namespace, Filters.of({}))
    rows = mem.db.read(lambda c: mem._full_text(c, words_of(text), where, params, limit, None))
    return [_decode(r[0]).content for r in rows]


def test_scoped_recall_in_a_namespace_holding_most_messages_matches_the_filtered_query(kernel, tmp_path):
    """For many queries, search() in the big namespace returns exactly what filtering before ranking returns."""
    mem, rng, words = _store(kernel, tmp_path)
    assert mem.common.share(mem.db.connection(), "big/one") > 0.5
    for _ in range(60):
        text = " ".join(rng.sample(words, 3))
        limit = rng.choice([1, 5, 10, 50])
        assert [m.content for m in mem.search("big/one", text, limit=limit)] == _slow(mem, "big/one", text, limit)
    mem.close()


def test_scoped_recall_in_a_small_namespace_only_returns_its_messages(kernel, tmp_path):
    """A namespace holding a small share of the store is searched the filtered way and never leaks others."""
    mem, rng, words = _store(kernel, tmp_path)
    for _ in range(20):
        text = " ".join(rng.sample(words, 3))
        found = mem.search("small/one", text, limit=10)
        assert [m.content for m in found] == _slow(mem, "small/one", text, 10)
    mem.close()


def test_a_rare_word_in_the_big_namespace_falls_back_and_still_finds_it(kernel, tmp_path):
    """When the store's best matches are mostly elsewhere, the big namespace's own matches are still found."""
    mem, rng, words = _store(kernel, tmp_path)
    mem.add("small/one", [Message.user("zebra zebra zebra") for _ in range(30)])
    mem.add("big/one", Message.user("one zebra here"))
    found = mem.search("big/one", "zebra", limit=5)
    assert [m.content for m in found] == ["one zebra here"]
    mem.close()
