"""``SqliteMemory``: long-term memory in one SQLite file, ``k.memory("sqlite", path=..., embedder=None, **options)``.

``search`` ranks by bm25 over FTS5 (a query's first ``MAX_QUERY_WORDS`` distinct words), or with an ``embedder`` and
``semantic=True`` by cosine similarity. Storage rules are ``Database``'s; async twins run in a worker thread. One read
returns at most 64 MiB of messages; a row holding no message is a ``StoreError`` naming it (an edited file).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Optional

import attrs
import msgspec
from zagent.agentkit.files import MAX_DATA_BYTES

from zagent import ConfigError, Message, run_sync
from zagent.contracts import Embedder

from .database import Database
from .errors import StoreError
from .paths import resolve
from .fts import CommonWords, fts_query
from .inprocess import words_of
from .records import Filters, as_messages, check_count, check_namespace, message_text, split_namespace
from .vectors import finite, pack, top_k
from zagent.agentkit.embeddings import checked_vectors

if TYPE_CHECKING:
    import sqlite3

#: one row of the messages table as inserted: namespace, agent, session, role, created, text, data, embedding
_Row = tuple[Any, ...]

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(Message).decode
_INSERT = ("INSERT INTO messages (namespace, agent, session, role, created, content, data, embedding) "
           "VALUES (?, ?, ?, ?, ?, ?, ?, ?)")


#: the most distinct words of a query searched (a model's whole text as the query: seconds, growing with it)
MAX_QUERY_WORDS = 256
#: what a read selects of a message: its data only when a BLOB under the limit (never read else), its size, its row id
_DATA = ("CASE WHEN typeof(m.data) = 'blob' AND length(m.data) <= {max} THEN m.data END, length(m.data), m.id"
         .format(max=MAX_DATA_BYTES))
_RANKED = ("SELECT " + _DATA + " FROM (SELECT rowid AS id, bm25(messages_fts) AS score FROM messages_fts "
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
            rows = self._with_vectors(rows, run_sync(self._embed(self.embedder, rows)), self.embedder)
        self._insert(rows)

    async def aadd(self, namespace: str, messages: Any, *, at: Optional[float] = None) -> None:
        rows = self._rows(namespace, messages, at)
        if rows and self.embedder is not None:
            rows = self._with_vectors(rows, await self._embed(self.embedder, rows), self.embedder)
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
        kept = [v for r, v in zip(rows, vectors) if r[5]]  # one length, bounded, finite (a lying server)
        checked_vectors(kept, len(kept), embedder)
        return vectors

    @staticmethod
    def _with_vectors(rows: list[_Row], vectors: list[list[float]], who: Any) -> list[_Row]:
        return [r[:7] + (pack(v, who) if r[5] else None,) for r, v in zip(rows, vectors)]

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
        rows = self.db.read(lambda c: self._bounded(c.execute(
            f"SELECT {_DATA} FROM messages m WHERE namespace = ? ORDER BY id DESC LIMIT ?", (namespace, n))))
        return self._messages(rows[::-1])

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
        return list(finite((await self.embedder.aembed([text or ""]))[0], self.embedder))

    def _search(self, namespace: Optional[str], text: str, limit: int, vector: Any,
                filters: dict[str, Any]) -> list[Message]:
        check_count(limit, "limit")
        where, params = _where(namespace, Filters.of(filters))
        if vector is not None:
            return self._semantic(vector, where, params, limit)
        words = list(dict.fromkeys(words_of(text or "")))[:MAX_QUERY_WORDS]
        only_namespace = namespace if len(params) == 1 and namespace is not None else None
        rows = self.db.read(lambda c: self._bounded(self._full_text(c, words, where, params, limit, only_namespace)))
        return self._messages(rows)

    def _full_text(self, c: sqlite3.Connection, words: list[str], where: str, params: list[Any], limit: int,
                   only_namespace: Optional[str] = None) -> Any:
        match = fts_query(self.common.prune(c, words))
        if match is None:
            sql = f"SELECT {_DATA} FROM messages m WHERE {where} ORDER BY id DESC LIMIT ?"
            return c.execute(sql, (*params, limit))
        if not params:  # no filter: rank inside FTS5 and join only the winners (about 2x faster)
            return c.execute(_RANKED.format(where="1"), (match, limit, limit))
        if only_namespace is not None:
            share = self.common.share(c, only_namespace)
            if share >= 0.5:
                # The namespace holds most messages: rank the top matches of the whole store in FTS5 and keep
                # the namespace's. When at least `limit` survive they are exactly its best `limit` (any better
                # one of the namespace would rank among the top matches too); otherwise search the slow way.
                fetch = min(max(limit, int(limit * 4 / share)), limit * 8)
                rows = self._bounded(c.execute(_RANKED.format(where="m.namespace = ?"),
                                               (match, fetch, only_namespace, limit)))
                if len(rows) >= limit:
                    return rows
        sql = (f"SELECT {_DATA} FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
               f"WHERE messages_fts MATCH ? AND {where} ORDER BY bm25(messages_fts), m.id DESC LIMIT ?")
        return c.execute(sql, (match, *params, limit))

    def _semantic(self, vector: list[float], where: str, params: list[Any], limit: int) -> list[Message]:
        sql = (f"SELECT embedding, id FROM messages m WHERE {where} AND embedding IS NOT NULL "
               "AND length(embedding) = ?")

        def best(c: sqlite3.Connection) -> list[Any]:
            ids = [i for _, i in top_k(vector, c.execute(sql, (*params, 4 * len(vector))).fetchall(), limit)]
            if not ids and limit > 0 and (other := c.execute(
                    f"SELECT length(embedding) FROM messages m WHERE {where} AND embedding IS NOT NULL LIMIT 1",
                    params).fetchone()):  # nothing of the query's length: say so, not "no memories"
                raise ConfigError(f"embedder {self.embedder!r} returned a query vector of length {len(vector)}, "
                                  f"but the messages searched were embedded {other[0] // 4} long: nothing "
                                  "compares. Search with the embedder that stored them (did its model or server "
                                  "change?)")
            found: dict[int, Any] = {}
            for start in range(0, len(ids), 500):  # the winners' data only, bounded as it is read
                part = ids[start:start + 500]
                found.update((r[2], r) for r in self._bounded(c.execute(
                    f"SELECT {_DATA} FROM messages m WHERE id IN ({','.join('?' * len(part))})", part)))
            return self._bounded([found[i] for i in ids if i in found])

        return self._messages(self.db.read(best))

    def _bounded(self, rows: Any) -> list[Any]:
        """``rows`` (data, size, id) read one by one; ``StoreError`` once they add up to more than
        ``MAX_DATA_BYTES`` (a row over it was never read: its data is NULL)."""
        out, total = [], 0
        for row in rows:
            total += row[1] or 0
            if total > MAX_DATA_BYTES:
                raise StoreError(
                    f"{self.db.path}: row {row[2]} of its messages brings what one recall reads to "
                    f"{total / 2**20:.1f} MiB, more than the {MAX_DATA_BYTES // 2**20} MiB zagent reads back (a file "
                    "edited by someone else?); ask for fewer messages, or delete the row "
                    f"(sqlite3 FILE \"DELETE FROM messages WHERE id = {row[2]}\") or clear its namespace", path=self.db.path)
            out.append(row)
        return out

    def _messages(self, rows: list[Any]) -> list[Message]:
        """The ``Message``s of ``rows`` (data, size, id); ``StoreError`` naming the first row that holds none."""
        out = []
        for data, _size, number in rows:
            try:
                if data is None:
                    raise TypeError("its data is not a BLOB")
                out.append(_decode(data))
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, TypeError) as exc:
                raise StoreError(
                    f"{self.db.path}: row {number} of its messages is not a message zagent stored "
                    f"({str(exc)[:200]}); the file was edited or damaged. Delete the row (sqlite3 FILE "
                    f"\"DELETE FROM messages WHERE id = {number}\") or clear its namespace (zagent memory clear)",
                    path=self.db.path) from None
        return out

    def namespaces(self) -> list[str]:
        """Namespaces holding at least one message, sorted; a name over ``MAX_NAME_BYTES`` (an edited file) is a
        ``StoreError`` naming its row, never read."""
        from .sqlitefile import distinct_names

        def fail(why: str) -> StoreError:
            return StoreError(f"{self.db.path}: cannot list the namespaces: {why}", path=self.db.path)

        return self.db.read(lambda c: distinct_names(c, "messages", "namespace", fail))

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
