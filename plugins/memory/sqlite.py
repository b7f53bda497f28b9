"""``SqliteMemory``: long-term memory in one SQLite file, ``k.memory("sqlite", path=..., embedder=None, **options)``.

``search`` ranks by bm25 over an FTS5 index, or with an ``embedder`` and ``semantic=True`` by cosine similarity (each
message is embedded on ``add``). Storage rules are ``Database``'s; the async twins run in a worker thread, so a slow
disk never stalls the event loop.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Optional

import attrs
import msgspec

from zagent import ConfigError, Message, run_sync
from zagent.contracts import Embedder

from .database import Database
from .paths import resolve
from .fts import CommonWords, fts_query
from .inprocess import words_of
from .records import Filters, as_messages, check_count, check_namespace, message_text, split_namespace
from .vectors import pack, top_k

if TYPE_CHECKING:
    import sqlite3

#: one row of the messages table as inserted: namespace, agent, session, role, created, text, data, embedding
_Row = tuple[Any, ...]

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(Message).decode
_INSERT = ("INSERT INTO messages (namespace, agent, session, role, created, content, data, embedding) "
           "VALUES (?, ?, ?, ?, ?, ?, ?, ?)")


_RANKED = ("SELECT m.data FROM (SELECT rowid AS id, bm25(messages_fts) AS score FROM messages_fts "
           "WHERE messages_fts MATCH ? ORDER BY score, rowid DESC LIMIT ?) s "
           "JOIN messages m ON m.id = s.id WHERE {where} ORDER BY s.score, s.id DESC LIMIT ?")


@attrs.define(repr=False)
class SqliteMemory:
    """Long-term memory: per-namespace messages in an SQLite file.

    :param db: the opened ``Database`` (the factory builds it from ``path`` and options).
    :param embedder: optional embedder; enables ``semantic=True`` search.
    """

    db: Database
    embedder: Optional[Embedder] = None
    common: CommonWords = attrs.field(factory=CommonWords)

    @classmethod
    def open(cls, path: Any = None, *, embedder: Optional[Embedder] = None, common_ratio: float = 0.05,
             common_min: int = 2000, max_postings: Optional[int] = 50_000, **options: Any) -> "SqliteMemory":
        """Open (creating if needed) ``path``, by default ``paths.default_path()``.

        ``common_ratio``/``common_min``/``max_postings``: see ``fts.CommonWords``; other options go to ``Database``.
        """
        if max_postings is not None and (isinstance(max_postings, bool) or not isinstance(max_postings, int)
                                         or max_postings < 1):
            raise ConfigError(f"max_postings must be an integer >= 1 or None, got {max_postings!r}")
        return cls(Database(resolve(path), **options), embedder, CommonWords(common_ratio, common_min, max_postings))

    # -- writing ----------------------------------------------------------------

    def add(self, namespace: str, messages: Any, *, at: Optional[float] = None) -> None:
        """Store one message or a list in ``namespace``, in one transaction."""
        rows = self._rows(namespace, messages, at)
        if rows and self.embedder is not None:
            rows = self._with_vectors(rows, run_sync(self._embed(self.embedder, rows)))
        self._insert(rows)

    async def aadd(self, namespace: str, messages: Any, *, at: Optional[float] = None) -> None:
        rows = self._rows(namespace, messages, at)
        if rows and self.embedder is not None:
            rows = self._with_vectors(rows, await self._embed(self.embedder, rows))
        await asyncio.to_thread(self._insert, rows)

    def _rows(self, namespace: str, messages: Any, at: Optional[float]) -> list[_Row]:
        agent, session = split_namespace(check_namespace(namespace))
        created = time.time() if at is None else float(at)
        try:
            return [(namespace, agent, session, m.role, created, message_text(m), _encode(m), None)
                    for m in as_messages(messages)]
        except (UnicodeEncodeError, msgspec.EncodeError, TypeError) as exc:
            raise ConfigError(f"cannot store these messages: {exc}; text must be valid Unicode (no lone "
                              "surrogates) and metadata/arguments msgspec-encodable") from None

    async def _embed(self, embedder: Embedder, rows: list[_Row]) -> list[list[float]]:
        texts = [r[5] for r in rows]
        vectors = await embedder.aembed(texts)
        if len(vectors) != len(texts):
            raise ConfigError(f"embedder {embedder!r} returned {len(vectors)} vectors for {len(texts)} "
                              "texts; it must return one per text")
        return vectors

    @staticmethod
    def _with_vectors(rows: list[_Row], vectors: list[list[float]]) -> list[_Row]:
        return [r[:7] + (pack(v) if r[5] else None,) for r, v in zip(rows, vectors)]

    def _insert(self, rows: list[_Row]) -> None:
        if rows:
            self.db.write(lambda c: c.executemany(_INSERT, rows))

    def clear(self, namespace: str) -> int:
        """Delete every message of ``namespace``; returns how many were deleted."""
        check_namespace(namespace)
        deleted = self.db.write(lambda c: c.execute("DELETE FROM messages WHERE namespace = ?", (namespace,)).rowcount)
        self.common.reset()
        return deleted

    async def aclear(self, namespace: str) -> int:
        return await asyncio.to_thread(self.clear, namespace)

    # -- reading ------------------------------------------------------------------

    def last(self, namespace: str, n: int = 10) -> list[Message]:
        """The newest ``n`` messages of ``namespace``, oldest first."""
        check_namespace(namespace)
        check_count(n)
        rows = self.db.read(lambda c: c.execute(
            "SELECT data FROM messages WHERE namespace = ? ORDER BY id DESC LIMIT ?", (namespace, n)).fetchall())
        return [_decode(r[0]) for r in reversed(rows)]

    async def alast(self, namespace: str, n: int = 10) -> list[Message]:
        return await asyncio.to_thread(self.last, namespace, n)

    def search(self, namespace: Optional[str], text: str, limit: int = 10, *, semantic: bool = False,
               **filters: Any) -> list[Message]:
        """Recall: messages matching ``text`` best first (``namespace=None`` searches all).

        Full-text by default (FTS5, bm25); ``semantic=True`` ranks by embedding
        cosine and needs an embedder. Empty ``text`` returns the newest messages
        passing the filters (``agent``, ``session``, ``role``, ``since``, ``until``).
        """
        vector = run_sync(self._query_vector(text)) if semantic else None
        return self._search(namespace, text, limit, vector, filters)

    async def asearch(self, namespace: Optional[str], text: str, limit: int = 10, *, semantic: bool = False,
                      **filters: Any) -> list[Message]:
        vector = await self._query_vector(text) if semantic else None
        return await asyncio.to_thread(self._search, namespace, text, limit, vector, filters)

    async def _query_vector(self, text: str) -> list[float]:
        if self.embedder is None:
            raise ConfigError("semantic search needs an embedder: k.memory('sqlite', path=..., "
                              "embedder=k.embedder()) with an embedder plugin installed")
        return list((await self.embedder.aembed([text or ""]))[0])

    def _search(self, namespace: Optional[str], text: str, limit: int, vector: Any,
                filters: dict[str, Any]) -> list[Message]:
        check_count(limit, "limit")
        where, params = _where(namespace, Filters.of(filters))
        if vector is not None:
            return self._semantic(vector, where, params, limit)
        words = words_of(text or "")
        only_namespace = namespace if len(params) == 1 and namespace is not None else None
        rows = self.db.read(lambda c: self._full_text(c, words, where, params, limit, only_namespace))
        return [_decode(r[0]) for r in rows]

    def _full_text(self, c: sqlite3.Connection, words: list[str], where: str, params: list[Any], limit: int,
                   only_namespace: Optional[str] = None) -> list[Any]:
        match = fts_query(self.common.prune(c, words))
        if match is None:
            sql = f"SELECT data FROM messages m WHERE {where} ORDER BY id DESC LIMIT ?"
            return c.execute(sql, (*params, limit)).fetchall()
        if not params:  # no filter: rank inside FTS5 and join only the winners (about 2x faster)
            return c.execute(_RANKED.format(where="1"), (match, limit, limit)).fetchall()
        if only_namespace is not None:
            share = self.common.share(c, only_namespace)
            if share >= 0.5:
                # The namespace holds most messages: rank the top matches of the whole store in FTS5 and keep
                # the namespace's. When at least `limit` survive they are exactly its best `limit` (any better
                # one of the namespace would rank among the top matches too); otherwise search the slow way.
                fetch = min(max(limit, int(limit * 4 / share)), limit * 8)
                rows = c.execute(_RANKED.format(where="m.namespace = ?"), (match, fetch, only_namespace, limit)
                                 ).fetchall()
                if len(rows) >= limit:
                    return rows
        sql = ("SELECT m.data FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
               f"WHERE messages_fts MATCH ? AND {where} ORDER BY bm25(messages_fts), m.id DESC LIMIT ?")
        return c.execute(sql, (match, *params, limit)).fetchall()

    def _semantic(self, vector: list[float], where: str, params: list[Any], limit: int) -> list[Message]:
        sql = (f"SELECT embedding, data FROM messages m WHERE {where} AND embedding IS NOT NULL "
               "AND length(embedding) = ?")
        rows = self.db.read(lambda c: c.execute(sql, (*params, 4 * len(vector))).fetchall())
        return [_decode(data) for _, data in top_k(vector, rows, limit)]

    def namespaces(self) -> list[str]:
        """Namespaces holding at least one message, sorted."""
        return [r[0] for r in self.db.read(lambda c: c.execute(
            "SELECT DISTINCT namespace FROM messages ORDER BY namespace").fetchall())]

    async def anamespaces(self) -> list[str]:
        return await asyncio.to_thread(self.namespaces)

    def count(self, namespace: Optional[str] = None) -> int:
        """How many messages ``namespace`` (or the whole file) holds."""
        n: int
        if namespace is None:
            n = self.db.read(lambda c: c.execute("SELECT count(*) FROM messages").fetchone()[0])
        else:
            n = self.db.read(lambda c: c.execute(
                "SELECT count(*) FROM messages WHERE namespace = ?", (namespace,)).fetchone()[0])
        return n

    async def acount(self, namespace: Optional[str] = None) -> int:
        return await asyncio.to_thread(self.count, namespace)

    # -- lifecycle --------------------------------------------------------------------

    def close(self) -> None:
        """Close the file's connections (committed data is already on disk)."""
        self.db.close()

    async def aclose(self) -> None:
        self.close()

    def __enter__(self) -> "SqliteMemory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        semantic = " semantic" if self.embedder is not None else ""
        return f"<SqliteMemory {self.db.path!r}{semantic}>"


def _where(namespace: Optional[str], flt: Filters) -> tuple[str, list[Any]]:
    clauses: list[str] = ["1"]
    params: list[Any] = []
    if namespace is not None:
        clauses.append("m.namespace = ?")
        params.append(check_namespace(namespace))
    for column, op, value in (("agent", "=", flt.agent), ("session", "=", flt.session), ("role", "=", flt.role),
                              ("created", ">=", flt.since), ("created", "<=", flt.until)):
        if value is not None:
            clauses.append(f"m.{column} {op} ?")
            params.append(value)
    return " AND ".join(clauses), params
