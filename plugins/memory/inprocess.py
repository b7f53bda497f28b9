"""``InProcessMemory``: bounded short-term memory in a dict of deques, the default (``k.memory()``).

Nothing touches disk; each namespace keeps its newest ``max_messages`` messages. Thread-safe; the async methods do no
I/O and run inline. Search scores word overlap, newest first among equals.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from typing import Any, NamedTuple, Optional

import attrs

from zagent import ConfigError, Message

from .records import Filters, as_messages, check_count, check_namespace, message_text

_WORD = re.compile(r"\w+", re.UNICODE)


class _Item(NamedTuple):
    seq: int
    created: float
    message: Message
    words: frozenset[str]


def _cut(message: Message, limit: int) -> Message:
    text = message.content
    if text is None or len(text) <= limit:
        return message
    import msgspec

    return msgspec.structs.replace(message, content=text[:limit - 3] + "...")


def words_of(text: str) -> list[str]:
    """Lower-cased words of ``text``, as both backends tokenize queries."""
    return [w.lower() for w in _WORD.findall(text)]


@attrs.define(repr=False)
class InProcessMemory:
    """Per-namespace bounded message lists held in this process.

    :param max_messages: how many messages each namespace keeps (oldest dropped first).
    :param max_chars: cut each message's text to at most this many characters, ending in "..."
        (crewai's history cut: 10 messages of at most 200); ``None``: whole.
    """

    max_messages: int = 1000
    max_chars: Optional[int] = None
    _spaces: dict[str, deque[_Item]] = attrs.field(factory=dict, init=False)
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False)
    _seq: int = attrs.field(default=0, init=False)

    def __attrs_post_init__(self) -> None:
        if isinstance(self.max_messages, bool) or not isinstance(self.max_messages, int) or self.max_messages < 1:
            raise ConfigError(f"max_messages must be a positive integer, got {self.max_messages!r}")
        if self.max_chars is not None and (isinstance(self.max_chars, bool) or not isinstance(self.max_chars, int)
                                           or self.max_chars < 4):
            raise ConfigError(f"max_chars must be an integer of at least 4 (or None), got {self.max_chars!r}")

    def add(self, namespace: str, messages: Any, *, at: Optional[float] = None) -> None:
        """Append one message or a list to ``namespace``; ``at`` overrides the time stamp."""
        check_namespace(namespace)
        items = as_messages(messages)
        if self.max_chars is not None:
            items = [_cut(m, self.max_chars) for m in items]
        created = time.time() if at is None else float(at)
        with self._lock:
            space = self._spaces.setdefault(namespace, deque(maxlen=self.max_messages))
            for m in items:
                self._seq += 1
                space.append(_Item(self._seq, created, m, frozenset(words_of(message_text(m)))))

    def last(self, namespace: str, n: int = 10) -> list[Message]:
        """The newest ``n`` messages of ``namespace``, oldest first."""
        check_namespace(namespace)
        check_count(n)
        with self._lock:
            space = list(self._spaces.get(namespace, ()))
        return [item.message for item in space[len(space) - n:]] if n else []

    def search(self, namespace: Optional[str], text: str, limit: int = 10, **filters: Any) -> list[Message]:
        """Messages sharing most words with ``text`` (``namespace=None``: all namespaces), best first."""
        check_count(limit, "limit")
        if filters.pop("semantic", False):
            raise ConfigError("the inprocess memory has no retrieval by meaning; use "
                              "k.memory('sqlite', path=..., embedder=k.embedder()) for semantic=True")
        flt = Filters.of(filters)
        query = set(words_of(text or ""))
        scored = []
        for ns, item in self._candidates(namespace):
            if not flt.matches(ns, item.message.role, item.created):
                continue
            score = len(query & item.words)
            if score or not query:
                scored.append((score, item.seq, item.message))
        scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
        return [s[2] for s in scored[:limit]]

    def _candidates(self, namespace: Optional[str]) -> list[tuple[str, _Item]]:
        with self._lock:
            if namespace is not None:
                return [(namespace, it) for it in self._spaces.get(check_namespace(namespace), ())]
            return [(ns, it) for ns, space in self._spaces.items() for it in space]

    def clear(self, namespace: str) -> int:
        """Forget every message of ``namespace``; returns how many were dropped."""
        check_namespace(namespace)
        with self._lock:
            return len(self._spaces.pop(namespace, ()))

    def namespaces(self) -> list[str]:
        """Namespaces holding at least one message, sorted."""
        with self._lock:
            return sorted(ns for ns, space in self._spaces.items() if space)

    def count(self, namespace: Optional[str] = None) -> int:
        """How many messages ``namespace`` (or all namespaces) holds."""
        with self._lock:
            if namespace is None:
                return sum(len(s) for s in self._spaces.values())
            return len(self._spaces.get(namespace, ()))

    # -- async twins: no I/O here, so they run inline --------------------------

    async def aadd(self, namespace: str, messages: Any, *, at: Optional[float] = None) -> None:
        self.add(namespace, messages, at=at)

    async def alast(self, namespace: str, n: int = 10) -> list[Message]:
        return self.last(namespace, n)

    async def asearch(self, namespace: Optional[str], text: str, limit: int = 10, **filters: Any) -> list[Message]:
        return self.search(namespace, text, limit, **filters)

    async def aclear(self, namespace: str) -> int:
        return self.clear(namespace)

    async def anamespaces(self) -> list[str]:
        return self.namespaces()

    async def acount(self, namespace: Optional[str] = None) -> int:
        return self.count(namespace)

    def close(self) -> None:
        """Nothing to release; present so every backend can be closed the same way."""

    async def aclose(self) -> None:
        """Async twin of ``close``."""

    def __repr__(self) -> str:
        return f"<InProcessMemory namespaces={len(self._spaces)} max_messages={self.max_messages}>"
