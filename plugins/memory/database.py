"""``Database``: one SQLite file shared by threads and processes; each ``write`` is one transaction.

WAL: readers never block the writer; a committed write survives a killed process (a power cut too with
``synchronous="full"``). A file that is not SQLite, is newer or is another application's is refused untouched; a busy
file raises ``StoreBusy`` after retries, a full one ``StoreFull``.
"""

from __future__ import annotations

import os
import random
import threading
import time
import weakref
from typing import TYPE_CHECKING, Callable, Optional, TypeVar

import attrs

from zagent import ConfigError

from .errors import ForeignDatabase, NotADatabase, SchemaTooNew, StoreBusy, StoreError, StoreFull
from .readonly import read_only_reason, read_only_uri
from .schema import MIGRATIONS, SCHEMA_VERSION, foreign_objects, statements

T = TypeVar("T")

if TYPE_CHECKING:
    import sqlite3
HEADER = b"SQLite format 3\x00"
BUSY, LOCKED, FULL, NOTADB, CORRUPT = 5, 6, 13, 26, 11
ZAGENT_TABLES = frozenset({"messages", "checkpoints"})


@attrs.define(repr=False)
class Database:
    """An SQLite file with the memory schema, opened lazily per thread.

    :param path: the file (created if missing; its directory must exist).
    :param busy_timeout: seconds to wait for another writer, per attempt; ``retries``: extra attempts when still busy.
    :param max_bytes: refuse to grow the file beyond this size (``StoreFull``; the transaction leaves no trace).
    :param synchronous: ``"full"`` (default, survives power loss) or ``"normal"`` (survives a killed process).
    """

    path: str = attrs.field(converter=os.fspath)
    busy_timeout: float = 10.0
    retries: int = 5
    max_bytes: Optional[int] = None
    synchronous: str = "full"
    _local: threading.local = attrs.field(factory=threading.local, init=False)
    _conns: list[tuple[weakref.ref[threading.Thread], sqlite3.Connection]] = attrs.field(factory=list, init=False)
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False)
    _ready: bool = attrs.field(default=False, init=False)
    _closed: bool = attrs.field(default=False, init=False)
    _busy: dict[int, int] = attrs.field(factory=dict, init=False)  # id(connection) -> reads/writes running on it
    read_only: Optional[str] = attrs.field(default=None, init=False)  # why the file opened read-only (readonly.py)

    def __attrs_post_init__(self) -> None:
        if self.synchronous not in ("full", "normal"):
            raise ConfigError(f"synchronous must be 'full' or 'normal', got {self.synchronous!r}")
        if not isinstance(self.busy_timeout, (int, float)) or self.busy_timeout < 0:
            raise ConfigError(f"busy_timeout must be a number of seconds >= 0, got {self.busy_timeout!r}")
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise ConfigError(f"retries must be an integer >= 0, got {self.retries!r}")
        if self.max_bytes is not None and (not isinstance(self.max_bytes, int) or self.max_bytes < 4096):
            raise ConfigError(f"max_bytes must be an integer of at least 4096, got {self.max_bytes!r}")
        from zagent.agentkit.privatefiles import touch_private

        touch_private(self.path)  # a new file is 0600 in 0700 folders; no symlink of another user followed
        self.connection()  # open now, so a bad file fails at construction

    # -- connections --------------------------------------------------------------

    def connection(self) -> sqlite3.Connection:
        """This thread's connection, opened (and the schema checked) on first use."""
        conn: Optional[sqlite3.Connection] = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        if self._closed:
            raise StoreError(f"the memory store {self.path} is closed; open a new one with k.memory(...)",
                             path=self.path)
        conn = self._open()
        with self._lock:
            closed = self._closed  # close() ran while this connection was opening: it never saw it
            dead = [c for t, c in self._conns if ((th := t()) is None or not th.is_alive()) and id(c) not in self._busy]
            self._conns = [(t, c) for t, c in self._conns if c not in dead]
            if not closed:
                self._conns.append((weakref.ref(threading.current_thread()), conn))
        for c in dead:  # connections of threads that have ended
            c.close()
        if closed:
            conn.close()
            raise StoreError(f"the memory store {self.path} is closed; open a new one with k.memory(...)",
                             path=self.path)
        self._local.conn = conn
        return conn

    def _use(self) -> sqlite3.Connection:
        """This thread's connection, marked busy so ``close()`` leaves it to this thread (``_done`` unmarks it)."""
        conn = self.connection()
        with self._lock:
            if self._closed:  # checked with the mark, under the lock: close() either sees the mark or we see it
                raise StoreError(f"the memory store {self.path} is closed; open a new one with k.memory(...)",
                                 path=self.path)
            self._busy[id(conn)] = self._busy.get(id(conn), 0) + 1
        return conn

    def _done(self, conn: sqlite3.Connection) -> None:
        """End one piece of work on ``conn``; after ``close()`` the last one closes the connection."""
        with self._lock:
            left = self._busy.pop(id(conn)) - 1
            if left:
                self._busy[id(conn)] = left
                return
            if not self._closed:
                return
            self._conns = [(t, c) for t, c in self._conns if c is not conn]
        conn.close()

    def _open(self) -> sqlite3.Connection:
        import sqlite3

        self._check_header()
        target, uri = self.path, False
        self.read_only = read_only_reason(self.path)
        if self.read_only is not None:  # no -shm map SQLite cannot extend: no SIGBUS (readonly.py)
            target, uri = read_only_uri(self.path, self.read_only), True
        try:
            conn = sqlite3.connect(target, timeout=self.busy_timeout, isolation_level=None,
                                   check_same_thread=False, uri=uri)
        except sqlite3.Error as exc:
            raise self._error(exc, "open") from None
        try:
            self._prepare(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _check_header(self) -> None:
        from zagent.agentkit.files import open_regular

        try:  # without blocking: a FIFO swapped in after touch_private (or before a new thread's connection)
            with open_regular(self.path, "memory file") as f:
                head = f.read(len(HEADER))
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreError(f"cannot read memory file {self.path}: {exc}; check the path and its permissions",
                             path=self.path) from None
        if head and head != HEADER:
            raise NotADatabase(
                f"{self.path} is not an SQLite database (it starts with {head[:8]!r}); it was left untouched. "
                "Point the memory store at a new file or an existing zagent memory file", path=self.path)

    def _prepare(self, conn: sqlite3.Connection) -> None:
        import sqlite3

        try:
            version = self._check_version(conn)
            if self.read_only is not None:
                if version != SCHEMA_VERSION:
                    raise StoreError(f"cannot open memory file {self.path}: {self.read_only}, and its schema "
                                     f"(version {version}) needs an upgrade to {SCHEMA_VERSION}, which writes; make "
                                     "it writable and open it once", path=self.path)
                return
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            self._retry(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone())
            conn.execute(f"PRAGMA synchronous = {self.synchronous.upper()}")
            conn.execute("PRAGMA foreign_keys = ON")
            if self.max_bytes is not None:
                page = conn.execute("PRAGMA page_size").fetchone()[0]
                conn.execute(f"PRAGMA max_page_count = {max(1, self.max_bytes // page)}")
            if not self._ready:
                self._migrate(conn)
                self._ready = True
        except sqlite3.Error as exc:
            raise self._error(exc, "open") from None

    def _check_version(self, conn: sqlite3.Connection) -> int:
        # The version and the tables are read in one snapshot: another process may be creating the schema
        # between two autocommit reads (tables already there, version not yet set would look foreign).
        snapshot = not conn.in_transaction
        if snapshot:
            conn.execute("BEGIN")
        try:
            version: int = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise SchemaTooNew(
                    f"{self.path} has memory schema version {version}, but this zagent understands up to "
                    f"{SCHEMA_VERSION}; it was left untouched. Upgrade zagent to open it",
                    path=self.path, found=version, supported=SCHEMA_VERSION)
            self._check_owner(conn, version)
        finally:
            if snapshot:
                conn.execute("COMMIT")
        return version

    def _check_owner(self, conn: sqlite3.Connection, version: int) -> None:
        """``ForeignDatabase`` unless the file is new (``user_version`` 0, no tables) or zagent's (a version and one
        of ``ZAGENT_TABLES``): zagent never adds its tables to another program's file."""
        tables = tuple(r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' "
            "ESCAPE '\\' ORDER BY name"))
        if (version == 0 and not tables) or (version > 0 and ZAGENT_TABLES & set(tables)):
            foreign = foreign_objects(conn)
            if foreign:  # a file prepared by someone else: its SQL would run on our writes and reads
                raise ForeignDatabase(
                    f"{self.path} holds {', '.join(foreign[:5])}{', ...' if len(foreign) > 5 else ''}, which zagent's "
                    "schema does not have: SQL someone else added runs on every write or read (a view may never "
                    "finish); the file was left untouched. Delete it or point the store at a new file",
                    path=self.path, tables=tables)
            return
        found = "tables: " + ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "") if tables else "no tables"
        raise ForeignDatabase(
            f"{self.path} is an SQLite database that belongs to something else (user_version {version}, {found}), "
            "not a zagent memory file; it was left untouched. Pick another path for zagent's memory: a new "
            "file or an existing zagent memory file", path=self.path, tables=tables)

    def _migrate(self, conn: sqlite3.Connection) -> None:
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return

        def migrate(c: sqlite3.Connection) -> None:
            import sqlite3

            version = self._check_version(c)  # again, inside the write lock
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in statements(MIGRATIONS[target]):
                    try:
                        c.execute(statement)
                    except sqlite3.OperationalError as exc:
                        if "already exists" not in str(exc):
                            raise
                        raise StoreError(  # rolled back with the upgrade: the file is left as it was
                            f"{self.path} says it is a memory file of version {version} but already holds what version "
                            f"{target} adds ({exc}): its version was set back by hand, so it is not upgraded or "
                            "opened. Restore the file from a backup", path=self.path) from None
            c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

        self._transaction(conn, migrate)

    # -- running work ---------------------------------------------------------------

    def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(connection)`` for reading (one consistent snapshot)."""
        import sqlite3

        conn = self._use()
        try:
            return self._retry(lambda: fn(conn))
        except sqlite3.Error as exc:
            raise self._error(exc, "read") from None
        finally:
            self._done(conn)

    def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(connection)`` inside one write transaction; committed whole or not at all."""
        import sqlite3

        conn = self._use()
        try:
            return self._transaction(conn, fn)
        except sqlite3.Error as exc:
            raise self._error(exc, "write") from None
        finally:
            self._done(conn)

    def _transaction(self, conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
        def attempt() -> T:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return result

        return self._retry(attempt)

    def _retry(self, attempt: Callable[[], T]) -> T:
        import sqlite3

        for n in range(self.retries + 1):
            try:
                return attempt()
            except sqlite3.OperationalError as exc:
                if _primary(exc) not in (BUSY, LOCKED) or n == self.retries:
                    raise
                time.sleep(min(1.0, 0.01 * 2 ** n) * (0.5 + random.random()))
        raise AssertionError("unreachable")

    def _error(self, exc: sqlite3.Error, doing: str) -> StoreError:
        code = _primary(exc)
        if code == FULL:
            limit = f" (limit max_bytes={self.max_bytes})" if self.max_bytes else ""
            return StoreFull(
                f"cannot {doing} {self.path}: the disk or the size limit is full{limit}. The write was rolled "
                "back and nothing committed was lost; free disk space, clear or prune old data, or raise "
                "max_bytes", path=self.path)
        if code in (BUSY, LOCKED):
            return StoreBusy(
                f"cannot {doing} {self.path}: still locked by another writer after {self.retries + 1} attempts "
                f"of {self.busy_timeout:g}s; retry later or raise busy_timeout", path=self.path)
        if code == NOTADB:
            return NotADatabase(f"{self.path} is not an SQLite database; it was left untouched. Use another "
                                "file", path=self.path)
        if code == CORRUPT:
            return StoreError(f"{self.path} is corrupt ({exc}); restore it from a backup or recover it with "
                              "'sqlite3 FILE .recover'", path=self.path)
        hint = "; this Python's SQLite lacks FTS5, install a Python built with it" if "fts5" in str(exc) else ""
        return StoreError(f"cannot {doing} memory file {self.path}: {exc}{hint}; check the path, its "
                          "directory and permissions", path=self.path)

    # -- lifecycle ----------------------------------------------------------------------

    def close(self) -> None:
        """Close every idle connection now and each busy one when its thread's read or write ends
        (that work finishes; nothing is pulled from under it); later use raises ``StoreError``."""
        with self._lock:
            self._closed = True
            idle = [c for _, c in self._conns if id(c) not in self._busy]
            self._conns = [(t, c) for t, c in self._conns if id(c) in self._busy]
        for conn in idle:
            conn.close()
        self._local = threading.local()

    def __del__(self) -> None:
        """Closed when nothing uses it any more (the kernel holds its stores weakly): its write-ahead log is
        merged now, not when the garbage collector reaches the connections."""
        try:
            if not self._closed:
                self.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

    def __repr__(self) -> str:
        return f"<Database {self.path!r} schema={SCHEMA_VERSION} connections={len(self._conns)}>"


_MESSAGES = {"database is locked": BUSY, "database table is locked": LOCKED, "database or disk is full": FULL,
             "file is not a database": NOTADB, "database disk image is malformed": CORRUPT}


def _primary(exc: sqlite3.Error) -> Optional[int]:
    """The primary SQLite result code of an error (extended codes such as SQLITE_BUSY_SNAPSHOT folded).

    Python 3.10 has no ``sqlite_errorcode``; there the code comes from SQLite's message.
    """
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF
    return next((c for text, c in _MESSAGES.items() if text in str(exc)), None)
