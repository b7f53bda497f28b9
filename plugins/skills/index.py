"""``SkillIndex``: the SQLite file of a skills folder: per-skill figures (``stats``), lifecycle history
(``transitions``) and, with FTS5, the match terms (``skills_fts``: rebuilt from the registry, never the source of
truth). Without FTS5, ``fts`` is False and the matcher scores in Python. Thread-safe; each write is one
transaction.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Iterable, Optional

import attrs

from .skill import Transition

SCHEMA = """
CREATE TABLE IF NOT EXISTS stats(name TEXT PRIMARY KEY, usage_count INTEGER NOT NULL DEFAULT 0,
    success_count INTEGER NOT NULL DEFAULT 0, last_used REAL, state TEXT NOT NULL DEFAULT 'idle',
    state_changed REAL NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS transitions(id INTEGER PRIMARY KEY, name TEXT NOT NULL, from_state TEXT NOT NULL,
    to_state TEXT NOT NULL, reason TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS transitions_name ON transitions(name, id);
"""
FTS = """
CREATE VIRTUAL TABLE IF NOT EXISTS skills_fts USING fts5(name UNINDEXED, terms);
CREATE VIRTUAL TABLE IF NOT EXISTS skills_vocab USING fts5vocab(skills_fts, 'row');
"""
STAT_FIELDS = ("usage_count", "success_count", "last_used", "state", "state_changed")


@attrs.define(repr=False)
class SkillIndex:
    """The SQLite side of a skills folder (see the module docstring); ``path=":memory:"`` for tests."""

    path: str = attrs.field(converter=os.fspath)
    fts: bool = attrs.field(default=False, init=False)
    _conn: Any = attrs.field(default=None, init=False)
    _lock: threading.RLock = attrs.field(factory=threading.RLock, init=False)

    def __attrs_post_init__(self) -> None:
        import sqlite3

        if self.path != ":memory:":  # the user's alone: folders 0700, the file 0600, no planted link followed
            from zagent.agentkit.privatefiles import private_parent, touch_private

            private_parent(self.path)  # no lexical '..': after a symlinked folder it climbs from the link's target
            touch_private(self.path)
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        try:
            _refuse_foreign(self._conn, self.path)
        except BaseException:
            self._conn.close()
            raise
        self._conn.execute("PRAGMA busy_timeout = 10000")
        if self.path != ":memory:":
            self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.executescript(SCHEMA)
        try:
            self._conn.executescript(FTS)
            self.fts = True
        except sqlite3.OperationalError:  # SQLite built without FTS5: the matcher scores in Python
            self.fts = False

    def _write(self, sql: str, params: Iterable[Any] = ()) -> None:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute(sql, tuple(params))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    # -- full text -------------------------------------------------------------

    def reindex(self, rows: Iterable[tuple[str, list[str]]]) -> None:
        """Replace every FTS row with ``(name, terms)`` pairs, in one transaction."""
        if not self.fts:
            return
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute("DELETE FROM skills_fts")
                self._conn.executemany("INSERT INTO skills_fts(name, terms) VALUES (?, ?)",
                                       [(name, " ".join(terms)) for name, terms in rows])
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def candidates(self, terms: list[str]) -> list[str]:
        """Names of skills sharing at least one of ``terms``, best BM25 first."""
        if not self.fts or not terms:
            return []
        query = " OR ".join('"' + t.replace('"', '""') + '"' for t in dict.fromkeys(terms))
        with self._lock:
            rows = self._conn.execute(
                "SELECT name FROM skills_fts WHERE skills_fts MATCH ? ORDER BY bm25(skills_fts)", (query,)).fetchall()
        return [r[0] for r in rows]

    def document_frequencies(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        """``(number of indexed skills, {term: skills containing it})``."""
        with self._lock:
            total = self._conn.execute("SELECT count(*) FROM skills_fts").fetchone()[0]
            marks = ",".join("?" * len(terms))
            rows = self._conn.execute(f"SELECT term, doc FROM skills_vocab WHERE term IN ({marks})",
                                      tuple(terms)).fetchall() if terms else []
        return total, dict(rows)

    # -- figures -----------------------------------------------------------------

    def stats(self, name: str) -> Optional[dict[str, Any]]:
        with self._lock:
            row = self._conn.execute(f"SELECT {', '.join(STAT_FIELDS)} FROM stats WHERE name = ?", (name,)).fetchone()
        return dict(zip(STAT_FIELDS, row)) if row else None

    def save_stats(self, name: str, values: dict[str, Any]) -> None:
        cols = ", ".join(STAT_FIELDS)
        self._write(f"INSERT OR REPLACE INTO stats(name, {cols}) VALUES (?, {', '.join('?' * len(STAT_FIELDS))})",
                    [name, *(values[f] for f in STAT_FIELDS)])

    def count_use(self, name: str, at: float) -> None:
        """One more use, stamped ``at``; an increment in SQL, so concurrent processes never lose one."""
        self._write("INSERT INTO stats(name, usage_count, last_used, state, state_changed) VALUES (?, 1, ?, 'active', ?) "
                    "ON CONFLICT(name) DO UPDATE SET usage_count = usage_count + 1, last_used = excluded.last_used",
                    [name, at, at])

    def count_success(self, name: str) -> None:
        """One more success (never more than the uses)."""
        self._write("UPDATE stats SET success_count = min(success_count + 1, usage_count) WHERE name = ?", [name])

    def forget(self, name: str) -> None:
        """Drop a deleted skill's figures (its history stays)."""
        self._write("DELETE FROM stats WHERE name = ?", [name])

    # -- history -------------------------------------------------------------------

    def record(self, transition: Transition) -> None:
        self._write("INSERT INTO transitions(name, from_state, to_state, reason, at) VALUES (?, ?, ?, ?, ?)",
                    [transition.skill, transition.from_state, transition.to_state, transition.reason, transition.at])

    def history(self, name: Optional[str] = None) -> list[Transition]:
        """Transitions of one skill (or all), oldest first."""
        sql = "SELECT name, from_state, to_state, reason, at FROM transitions"
        with self._lock:
            rows = self._conn.execute(sql + (" WHERE name = ? ORDER BY id" if name else " ORDER BY id"),
                                      (name,) if name else ()).fetchall()
        return [Transition(skill=r[0], from_state=r[1], to_state=r[2], reason=r[3], at=r[4]) for r in rows]

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __repr__(self) -> str:
        return f"<SkillIndex {self.path} fts={self.fts}>"


_OBJECTS = ("SELECT type, name, sql FROM sqlite_master WHERE type IN ('trigger', 'view') "
            "OR (type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%') OR (type = 'index' AND sql IS NOT NULL)")
_TABLES = "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"


def _refuse_foreign(conn: Any, path: str) -> None:
    """A ``ConfigError`` if the index holds a table, a trigger, a view, a virtual table or an index (an expression
    building 200 MB per insert) the index does not make with that SQL: a
    skills folder shipped with a project may bring an index whose SQL runs on every write (or a view that never ends),
    or another program's database, which must not get our tables, rows or WAL mode."""
    import sqlite3

    from zagent.errors import ConfigError

    scratch = sqlite3.connect(":memory:")
    try:
        try:
            scratch.executescript(FTS)
        except sqlite3.OperationalError:  # no FTS5 here: no virtual table is ours
            pass
        scratch.executescript(SCHEMA)
        own = set(scratch.execute(_OBJECTS).fetchall())
        own_tables = set(scratch.execute(_TABLES).fetchall())  # with their SQL: a 'stats' of another program is not ours
    finally:
        scratch.close()
    try:
        found = conn.execute(_OBJECTS).fetchall()
    except sqlite3.DatabaseError as exc:
        raise ConfigError(f"the skills index {path!r} cannot be used ({exc}); delete it (the skill files stay; "
                          "their usage figures start again)") from None
    foreign = [f"{kind} {name!r}" for kind, name, sql in found if (kind, name, sql) not in own]
    tables = [name for name, sql in conn.execute(_TABLES).fetchall() if (name, sql) not in own_tables]
    if tables:  # another program's database (a file put there, or named by a slip): never given our tables
        raise ConfigError(f"the skills index {path!r} holds table {tables[0]!r}"
                          f"{f' (and {len(tables) - 1} more)' if len(tables) > 1 else ''}, which zagent does not "
                          "make: it is another program's database; it was left untouched. Delete it or move it away "
                          "(the skill files stay; their usage figures start again)")
    if foreign:
        raise ConfigError(f"the skills index {path!r} holds {', '.join(foreign[:5])}, which zagent does not make: "
                          "SQL someone else added would run on every write; it was left untouched. Delete it (the skill "
                          "files stay; their usage figures start again)")
