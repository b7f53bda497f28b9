"""Full-text recall helpers: ``fts_query`` turns words into an FTS5 query; ``CommonWords`` leaves out of a query of
several words those found in more than ``common_ratio`` of all messages and more than ``common_min`` (the rarest stays
if all are), then keeps the rarest words (always one) whose messages add up to at most ``max_postings``.
"""

from __future__ import annotations

import threading
from typing import Any, Optional

import attrs

#: longer query words are looked up each time, never cached (a real word is shorter; a hostile one may be megabytes)
MAX_CACHED_WORD = 100


def fts_query(words: list[str]) -> Optional[str]:
    """An FTS5 query matching any of ``words`` (each quoted, so no word is read as an operator)."""
    unique = list(dict.fromkeys(w for w in words if w))
    if not unique:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in unique)


@attrs.define(repr=False)
class CommonWords:
    """Per-store cache of how many messages contain each word, used to prune query words; rebuilt when the store
    has grown by 10% and on ``reset`` (this store cleared a namespace)."""

    common_ratio: float = 0.05
    common_min: int = 2000
    max_postings: Optional[int] = 50_000
    max_cached: int = 100_000
    _freqs: dict[str, int] = attrs.field(factory=dict, init=False)
    _shares: dict[str, float] = attrs.field(factory=dict, init=False)
    _total: int = attrs.field(default=0, init=False)
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False)

    def prune(self, conn: Any, words: list[str]) -> list[str]:
        """``words`` (unique, in order) without the very common ones; never empty if ``words`` is not."""
        unique = list(dict.fromkeys(w for w in words if w))
        if len(unique) < 2 or self.common_ratio >= 1:
            return unique
        total = self._refresh(conn)
        if total <= self.common_min:
            return unique
        freqs = {w: self._freq(conn, w) for w in unique}
        limit = max(self.common_ratio * total, self.common_min)
        kept = [w for w in unique if freqs[w] <= limit] or [min(unique, key=freqs.__getitem__)]
        if self.max_postings is None or sum(freqs[w] for w in kept) <= self.max_postings:
            return kept
        budget = self.max_postings
        chosen: set[str] = set()
        for w in sorted(kept, key=freqs.__getitem__):
            if chosen and freqs[w] > budget:
                break
            chosen.add(w)
            budget -= freqs[w]
        return [w for w in kept if w in chosen]

    def reset(self) -> None:
        """Forget cached frequencies (after deletions they may be too high)."""
        with self._lock:
            self._freqs.clear()
            self._shares.clear()

    def share(self, conn: Any, namespace: str) -> float:
        """The fraction of all messages that ``namespace`` holds (cached until the store grows by 10%)."""
        total = self._refresh(conn)
        share = self._shares.get(namespace)
        if share is None:
            count = conn.execute("SELECT count(*) FROM messages WHERE namespace = ?", (namespace,)).fetchone()[0]
            share = self._shares[namespace] = count / total if total else 0.0
        return share

    def _refresh(self, conn: Any) -> int:
        total: int = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
        with self._lock:
            if (total > self._total * 1.1 or total < self._total or len(self._freqs) > self.max_cached
                    or len(self._shares) > self.max_cached):
                self._freqs.clear()
                self._shares.clear()
                self._total = total
        return total

    def _freq(self, conn: Any, word: str) -> int:
        freq = self._freqs.get(word)
        if freq is None:
            row = conn.execute("SELECT doc FROM messages_vocab WHERE term = ?", (word,)).fetchone()
            freq = row[0] if row else 0
            if len(word) <= MAX_CACHED_WORD:  # a query of megabyte-long words fills no cache
                self._freqs[word] = freq
        return freq
