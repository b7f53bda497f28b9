"""The SQLite schema of memory and checkpoint files, and its migrations. ``MIGRATIONS[v]`` brings a file from version
``v - 1`` to ``v`` in one transaction with the ``PRAGMA user_version`` bump, so a file is never half-migrated; append a
migration, never edit a released one. A file newer than ``SCHEMA_VERSION`` is refused untouched.
"""

from __future__ import annotations

from typing import Any

MESSAGES = """
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    agent TEXT NOT NULL,
    session TEXT NOT NULL,
    role TEXT NOT NULL,
    created REAL NOT NULL,
    content TEXT NOT NULL,
    data BLOB NOT NULL,
    embedding BLOB
);
CREATE INDEX messages_by_namespace ON messages(namespace, id);
CREATE INDEX messages_by_agent ON messages(agent, created);
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id');
CREATE VIRTUAL TABLE messages_vocab USING fts5vocab(messages_fts, 'row');
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
"""

CHECKPOINTS = """
CREATE TABLE checkpoints (
    run_id TEXT NOT NULL,
    step INTEGER NOT NULL,
    kind TEXT NOT NULL,
    created REAL NOT NULL,
    state BLOB NOT NULL,
    metadata BLOB NOT NULL,
    PRIMARY KEY (run_id, step)
) WITHOUT ROWID;
CREATE INDEX checkpoints_by_kind ON checkpoints(kind, created);
"""

RUN_SPANS = """
CREATE TABLE run_spans (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    span_id TEXT,
    parent_id TEXT,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    agent TEXT,
    started REAL NOT NULL,
    duration REAL,
    outcome TEXT,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    data BLOB NOT NULL
);
CREATE INDEX run_spans_by_run ON run_spans(run_id, started);
CREATE INDEX run_spans_by_time ON run_spans(started);
"""

PATCHES = """
ALTER TABLE checkpoints ADD COLUMN patch INTEGER NOT NULL DEFAULT 0;
CREATE INDEX checkpoints_steps ON checkpoints(run_id, step);
CREATE INDEX checkpoints_full ON checkpoints(run_id, step, patch) WHERE patch = 0;
"""
"""Version 3: a checkpoint is a full state (``patch = 0``, every row written before version 3) or a patch
on the one before it (``CheckpointStore.save_patch``). Both indexes are covering, so retention and
finding a patch's base never read a row: in this WITHOUT ROWID table a large state's row spans
overflow pages, and reading any column after the key walks them."""

NESTED_APPENDS = ""
"""Version 4: no table changes; a checkpoint patch may append to lists held inside an object of the state
(``extend_in``/``lengths_in``, e.g. a workflow value with the ``append`` reducer), which a zagent of version 3
cannot apply. The bump makes such a zagent refuse the file untouched (``SchemaTooNew``) instead of failing on
those patches as damaged; every version-3 patch (``set``/``extend``/``update``/``lengths`` only) still applies."""

STORE_INFO = """
CREATE TABLE store_info (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE legacy_steps (
    run_id TEXT NOT NULL,
    step INTEGER NOT NULL,
    metadata BLOB NOT NULL,
    PRIMARY KEY (run_id, step)
) WITHOUT ROWID;
INSERT INTO legacy_steps (run_id, step, metadata)
    SELECT run_id, step, metadata FROM checkpoints WHERE instr(metadata, 'zagent_mac') > 0;
"""
"""Version 5: facts about the file itself; ``store_id``, the checkpoint store's identity (``new_call_id``, made once
by ``CheckpointStore``, on a file of version 4 or below on its first open): seals and signatures bind a run's state to
it, so a state copied into another store is refused or asked about again, while the file copied whole keeps it.
``legacy_steps``: the signed steps held when migrated (their metadata, hence MACs; ``CheckpointChain.legacy_macs``)."""

MIGRATIONS: dict[int, str] = {
    1: MESSAGES + CHECKPOINTS,
    2: RUN_SPANS,  # the run log (zagent.plugins.runlog)
    3: PATCHES,
    4: NESTED_APPENDS,
    5: STORE_INFO,
}

SCHEMA_VERSION = max(MIGRATIONS)


#: the schema objects that run SQL of their own (triggers, views, virtual tables); the trusted ones are zagent's
_OBJECTS = ("SELECT type, name, sql FROM sqlite_master WHERE type IN ('trigger', 'view') "
            "OR (type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%')")
#: an index definition an earlier zagent made, still zagent's
_RETIRED = frozenset({("index", "checkpoints_full",
                       "CREATE INDEX checkpoints_full ON checkpoints(run_id, step) WHERE patch = 0")})
#: per extra schema: (zagent's objects, its own tables, every table it writes (FTS5's too))
_own: dict[tuple[str, ...], tuple[frozenset[tuple[str, str, str]], tuple[str, ...], tuple[str, ...]]] = {}


def foreign_objects(conn: Any, extra: tuple[str, ...] = ()) -> list[str]:
    """The triggers, views and virtual tables of the database on ``conn``, the indexes on tables zagent writes and
    zagent's own tables, that zagent's migrations (and the ``extra`` statements of a small store's schema) do not
    make, or make with other SQL, as ``"trigger 'evil'"``: a file prepared by someone else may run its own SQL on
    every write or read (a recursive view never finishes, an index or CHECK on an expression allocating a gigabyte
    on every insert), so such a file is refused (docs/security.md, 11)."""
    own, direct, written = _expected(extra)
    return [f"{kind} {name!r}" for kind, name, sql in _objects(conn, direct, written) if (kind, name, sql) not in own]


def _expected(extra: tuple[str, ...]) -> tuple[frozenset[tuple[str, str, str]], tuple[str, ...], tuple[str, ...]]:
    found = _own.get(extra)
    if found is None:
        import sqlite3

        scratch = sqlite3.connect(":memory:")
        try:
            steps = [statements(MIGRATIONS[version]) for version in sorted(MIGRATIONS)] + [list(extra)]
            for step in steps:
                for statement in step:
                    scratch.execute(statement)
            tables = [r[0] for r in scratch.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            virtual = [r[1] for r in scratch.execute(_OBJECTS) if r[0] == "table"]
            # a virtual table's shadow tables are FTS5's: their SQL changes with SQLite's version, indexes on them not
            direct = tuple(t for t in tables if t not in virtual and not any(t.startswith(v + "_") for v in virtual))
        finally:
            scratch.close()
        own = set(_RETIRED)
        scratch = sqlite3.connect(":memory:")
        try:  # a file not yet migrated holds an earlier version's tables and indexes: each version's are zagent's
            for step in steps:
                for statement in step:
                    scratch.execute(statement)
                own.update(_objects(scratch, direct, tuple(tables)))
        finally:
            scratch.close()
        found = _own[extra] = (frozenset(own), direct, tuple(tables))
    return found


def _objects(conn: Any, direct: tuple[str, ...] = (), written: tuple[str, ...] = ()) -> list[tuple[str, str, str]]:
    rows = conn.execute(_OBJECTS).fetchall()
    rows += conn.execute(f"SELECT type, name, sql FROM sqlite_master WHERE (type = 'table' AND name IN "
                         f"({', '.join('?' * len(direct))})) OR (type = 'index' AND sql IS NOT NULL AND tbl_name IN "
                         f"({', '.join('?' * len(written))}))", (*direct, *written)).fetchall()
    return [(kind, name, " ".join((sql or "").split())) for kind, name, sql in rows]


def statements(script: str) -> list[str]:
    """Split a migration into statements (triggers keep their inner ``;``)."""
    out, current = [], []
    for line in script.strip().splitlines():
        current.append(line)
        text = "\n".join(current).strip()
        if text.endswith(";") and (not text.upper().startswith("CREATE TRIGGER") or text.upper().endswith("END;")):
            out.append(text)
            current = []
    return out
