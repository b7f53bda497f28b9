"""``DocumentStore``: documents cut into chunks in SQLite, found by FTS5 and, with an embedder, by meaning
(docs/retrieval.md). ``add(text, source=..., chunk_size=800, overlap=100)`` replaces what ``source`` held and returns
the chunk ids (``<source>#<n>``); ``search(query, k=4)`` returns ``DocumentChunk``s, best first; ``sources``, ``count``,
``remove``, ``close``; async ``aadd``, ``asearch``. Not a message store. New files are 0600. A search reads back at
most 64 MiB of chunk text; more, or text that is not UTF-8 (an edited file), is a ``ConfigError``.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from typing import Any, Iterator, Optional

import attrs

from zagent.errors import ConfigError

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS zagent_doc_chunks (id TEXT PRIMARY KEY, source TEXT NOT NULL, n INTEGER NOT NULL, "
    "text TEXT NOT NULL, vector BLOB)",
    "CREATE INDEX IF NOT EXISTS zagent_doc_chunks_by_source ON zagent_doc_chunks (source)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS zagent_doc_fts USING fts5(text, id UNINDEXED, "
    "tokenize='porter unicode61')",
)
_WORD = re.compile(r"\w+")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")
RRF_K = 60


@attrs.frozen
class DocumentChunk:
    """One retrieved piece of a document: ``id`` (``source#n``) cites it."""

    id: str
    source: str
    text: str
    score: float = 0.0


def chunk_text(text: str, chunk_size: int = 800, overlap: int = 100) -> list[str]:
    """``text`` in pieces of at most ``chunk_size`` characters, cut at paragraph, sentence or word ends;
    each piece after the first starts with up to ``overlap`` characters of the one before."""
    if chunk_size < 50 or not 0 <= overlap < chunk_size // 2:
        raise ConfigError(f"chunk_size must be >= 50 and overlap in [0, chunk_size/2), got {chunk_size}, {overlap}")
    pieces: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        if not para:
            continue
        units = [para] if len(para) <= chunk_size else _SENTENCE.split(para)
        for unit in units:
            pos, end = 0, len(unit)  # offsets: slicing the rest again for every piece would be quadratic
            while end - pos > chunk_size:  # one long sentence: cut at a word end
                cut = unit.rfind(" ", pos, pos + chunk_size)
                cut = cut if cut - pos > chunk_size // 2 else pos + chunk_size
                pieces.append(unit[pos:cut])
                pos = cut
                while pos < end and unit[pos].isspace():
                    pos += 1
            if pos < end:
                pieces.append(unit[pos:])
    chunks: list[str] = []
    for piece in pieces:
        if chunks and len(chunks[-1]) + 1 + len(piece) <= chunk_size:
            chunks[-1] += ("\n" if piece[:1].isupper() else " ") + piece
        else:
            tail = chunks[-1][-overlap:] if chunks and overlap else ""
            tail = tail[tail.find(" ") + 1:] if " " in tail else tail
            chunks.append((tail + " " + piece).strip() if tail and len(tail) + 1 + len(piece) <= chunk_size
                          else piece)
    return chunks


@attrs.define(repr=False, eq=False)
class DocumentStore:
    """Document chunks in the SQLite file ``path``; ``embedder``: any object with ``async aembed(texts)``."""

    path: str = attrs.field(converter=os.fspath)
    embedder: Any = None
    busy_timeout: float = 10.0
    _conn: Any = attrs.field(default=None, init=False)
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False)

    def _db(self) -> Any:
        if self._conn is None:
            from .sqlitefile import open_private

            self._conn = open_private(self.path, _SCHEMA, busy_timeout=self.busy_timeout, what="document store",
                                      refused="give a new file or one a DocumentStore wrote")
        return self._conn

    # -- writing --------------------------------------------------------------------

    async def aadd(self, text: str, source: Optional[str] = None, *, chunk_size: int = 800,
                   overlap: int = 100) -> list[str]:
        """Cut ``text`` into chunks and store them under ``source`` (replacing what it held); their ids."""
        if not isinstance(text, str):
            raise ConfigError(f"a document is text, got {type(text).__name__}")
        from zagent.agentkit.inputs import check_text

        from .sqlitefile import check_name_size

        check_text(text, "a document's text")  # a lone surrogate (invalid UTF-8 read with surrogateescape)
        if source is not None:
            check_text(source, "a document's source")
            check_name_size(source, "a document's source")
        if source is None:
            import hashlib

            source = "doc-" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:12]
        pieces = chunk_text(text, chunk_size, overlap)
        vectors: list[Any] = [None] * len(pieces)
        if self.embedder is not None and pieces:
            from zagent.agentkit.embeddings import checked_vectors

            # one per chunk, one length, bounded, finite (a lying embedding server)
            vectors = [v.tobytes() for v in checked_vectors(await self.embedder.aembed(pieces), len(pieces),
                                                            self.embedder)]
        rows = [(f"{source}#{n}", source, n, piece, vector) for n, (piece, vector) in enumerate(zip(pieces, vectors))]
        import asyncio

        await asyncio.to_thread(self._write, source, rows)
        return [row[0] for row in rows]

    def add(self, text: str, source: Optional[str] = None, **options: Any) -> list[str]:
        """Sync twin of ``aadd``."""
        from zagent import run_sync

        return run_sync(self.aadd(text, source, **options))

    def _write(self, source: str, rows: list[tuple[Any, ...]]) -> None:
        with self._transaction() as db:
            self._delete(db, source)
            db.executemany("INSERT INTO zagent_doc_chunks VALUES (?, ?, ?, ?, ?)", rows)
            db.executemany("INSERT INTO zagent_doc_fts (text, id) VALUES (?, ?)", [(r[3], r[0]) for r in rows])

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Any]:
        """The connection inside ``BEGIN IMMEDIATE``, committed at the end, rolled back on any exception."""
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    @staticmethod
    def _delete(db: Any, source: str) -> None:
        db.execute("DELETE FROM zagent_doc_fts WHERE id IN (SELECT id FROM zagent_doc_chunks WHERE source = ?)",
                   (source,))
        db.execute("DELETE FROM zagent_doc_chunks WHERE source = ?", (source,))

    def remove(self, source: str) -> None:
        """Forget every chunk of ``source`` (in one transaction)."""
        with self._transaction() as db:
            self._delete(db, source)

    # -- reading --------------------------------------------------------------------

    async def asearch(self, query: str, k: int = 4) -> list[DocumentChunk]:
        """The ``k`` chunks best matching ``query``, best first: bm25 over a Porter-stemmed FTS5 index, merged by
        reciprocal rank with the embedder's ranking when there is one (a failing embedder: words only)."""
        import asyncio

        from zagent.agentkit.inputs import check_text

        check_text(query, "a document search query")
        vector = None
        if self.embedder is not None:
            try:
                from .vectors import finite

                vector = list(finite((await self.embedder.aembed([query]))[0], self.embedder))
            except Exception:  # retrieval by words still works
                import logging

                logging.getLogger("zagent").warning("documents: embedder %r failed; searching by words",
                                                    self.embedder, exc_info=True)
        return await asyncio.to_thread(self._search, query, k, vector)

    def search(self, query: str, k: int = 4) -> list[DocumentChunk]:
        """Sync twin of ``asearch``."""
        from zagent import run_sync

        return run_sync(self.asearch(query, k))

    def _search(self, query: str, k: int, vector: Any) -> list[DocumentChunk]:
        from .fts import fts_query

        from .sqlitefile import MAX_NAME_BYTES, byte_length

        match = fts_query([w.lower() for w in _WORD.findall(query)][:64])
        short_id = f"CASE WHEN {byte_length('id')} <= {MAX_NAME_BYTES + 32} THEN id END"  # source#n: never 100 MB
        with self._lock:
            db = self._db()
            by_words = db.execute(f"SELECT {short_id} FROM zagent_doc_fts WHERE zagent_doc_fts MATCH ? ORDER BY rank "
                                  "LIMIT ?", (match, k * 4)).fetchall() if match else []
            by_meaning: list[Any] = []
            if vector is not None:
                from .vectors import top_k

                blobs = db.execute(f"SELECT vector, {short_id} FROM zagent_doc_chunks WHERE vector IS NOT NULL "
                                   "AND length(vector) = ?", (4 * len(vector),)).fetchall()  # another embedder's: not
                by_meaning = [(cid,) for _s, cid in top_k(vector, blobs, k * 4)]
            scores: dict[str, float] = {}
            for ranking in (by_words, by_meaning):
                for rank, (cid,) in enumerate(ranking):
                    if cid is None:
                        raise ConfigError(f"document store {self.path!r} holds a chunk id longer than "
                                          f"{MAX_NAME_BYTES + 32:,} bytes (a file edited by someone else?); it was "
                                          "not read. Remove the sources and add the documents again, or use a new file")
                    scores[cid] = scores.get(cid, 0.0) + 1.0 / (RRF_K + rank + 1)
            best = sorted(scores, key=lambda c: -scores[c])[:k]
            rows = self._chunks(db, best) if best else {}
        return [DocumentChunk(id=c, source=rows[c][1], text=rows[c][2], score=round(scores[c], 6)) for c in best if c in rows]

    def _chunks(self, db: Any, ids: list[str]) -> dict[str, tuple[str, str, str]]:
        """The chunks ``ids`` as ``{id: (id, source, text)}``, their text at most ``MAX_DATA_BYTES`` together (a
        chunk over it is never read); ``ConfigError`` naming the chunk past it or a text that is not UTF-8."""
        import sqlite3

        from zagent.agentkit.files import MAX_DATA_BYTES

        from .sqlitefile import MAX_NAME_BYTES, byte_length

        size = f"({byte_length('text')} + {byte_length('source')})"  # a source edited to 100 MB is cited too
        fits = f"{byte_length('source')} <= {MAX_NAME_BYTES} AND {size} <= {MAX_DATA_BYTES}"
        sql = (f"SELECT id, CASE WHEN {fits} THEN source END, {size}, CASE WHEN {fits} THEN text END "
               f"FROM zagent_doc_chunks WHERE id IN ({','.join('?' * len(ids))})")
        rows, total = {}, 0
        try:
            for cid, source, size, text in db.execute(sql, ids):
                total += size or 0
                if text is None or total > MAX_DATA_BYTES:
                    raise ConfigError(f"document store {self.path!r}: chunk {cid!r} brings the text retrieved to "
                                      f"{total / 2**20:.1f} MiB (or its source passes {MAX_NAME_BYTES:,} bytes), more "
                                      f"than the {MAX_DATA_BYTES // 2**20} MiB zagent reads back (a file edited by someone else?); remove its source and add the "
                                      "document again, or use a new file")
                rows[cid] = (cid, source, text)
        except sqlite3.DataError as exc:
            raise ConfigError(f"document store {self.path!r} cannot be read ({exc}); it was edited or damaged: "
                              "remove the sources and add the documents again, or use a new file") from None
        except sqlite3.OperationalError as exc:
            if "decode" not in str(exc):
                raise
            raise ConfigError(f"document store {self.path!r} holds text that is not UTF-8 ({str(exc)[:120]}); it was "
                              "edited or damaged: remove the sources and add the documents again, or use a new "
                              "file") from None
        return rows

    def sources(self) -> list[str]:
        with self._lock:
            from .sqlitefile import distinct_names

            return distinct_names(self._db(), "zagent_doc_chunks", "source", lambda why: ConfigError(
                f"document store {self.path!r}: cannot list the sources: {why}"))

    def count(self) -> int:
        with self._lock:
            return int(self._db().execute("SELECT count(*) FROM zagent_doc_chunks").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    async def aclose(self) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<DocumentStore {self.path!r}>"


__all__ = ["DocumentChunk", "DocumentStore", "chunk_text"]
