"""Memory plugin: short-term, long-term (SQLite) and checkpoint stores, plus ``zagent memory``.

Registered backends (``k.memory(name, **options)``):

* ``"inprocess"`` -- ``InProcessMemory(max_messages=1000)``: bounded, in this process, the default.
* ``"sqlite"`` -- ``SqliteMemory``: ``path=`` (default ``$ZAGENT_MEMORY_DB``, else
  ``~/.local/share/zagent/memory.db``), ``embedder=`` (e.g. ``k.embedder()``), ``busy_timeout=10.0``,
  ``retries=5``, ``max_bytes=None``, ``synchronous="full"``, ``common_ratio=0.05``,
  ``common_min=2000`` (query words in more messages than both are left out: ``fts``),
  ``max_postings=50000`` (the kept words' messages to rank, rarest words first: ``fts``).
* ``"checkpoints"`` -- ``CheckpointStore`` for loop/workflow state: ``path=`` (same default), the
  same file options, and ``keep_last=10`` (steps kept per run on every save; ``None`` keeps all).
  May share a file with ``"sqlite"``.
* ``"documents"`` -- ``DocumentStore``: documents in chunks for retrieval (FTS5, plus embeddings
  from ``embedder=``, by default the kernel's registered embedder); ``path=`` is required. Not a
  message store (``documents.py``).

The memory interface every backend implements (third parties: subclass
``zagent.testing.memory.MemoryBackendTests`` to check yours). A namespace is a
non-empty string, by convention ``"agent/session"``; the part before the first
``/`` is the *agent*, the rest the *session*. Messages are ``zagent.Message``
(dicts are accepted and validated)::

    add(namespace, messages, *, at=None) -> None      # one Message or a list; one transaction
    last(namespace, n=10) -> list[Message]             # newest n, oldest first
    search(namespace, text, limit=10, **filters) -> list[Message]   # best first
        # namespace=None searches every namespace; filters: agent, session, role,
        # since, until (Unix times); semantic=True ranks by embeddings (sqlite + embedder)
        # empty text: the newest messages passing the filters
    clear(namespace) -> int                            # messages deleted
    namespaces() -> list[str]                          # non-empty namespaces, sorted
    count(namespace=None) -> int
    close() -> None

and the async twins ``aadd``, ``alast``, ``asearch``, ``aclear``, ``anamespaces``,
``acount``, ``aclose``. Errors: ``zagent.ConfigError`` for bad arguments,
``zagent.plugins.memory.StoreError`` (and subclasses ``NotADatabase``,
``ForeignDatabase`` (an SQLite file of another application), ``SchemaTooNew``,
``StoreFull``, ``StoreBusy``) for storage failures.

``SQLiteSession(session_id, path)`` keeps one chat's conversation for
``agent.chat(..., session=...)`` (``zagent.plugins.memory.session``).

The checkpoint store is documented in ``zagent.plugins.memory.checkpoints``
(conformance suite: ``zagent.testing.checkpoints.CheckpointStoreTests``).

The factories are named ``make_*``: a plain ``sqlite`` attribute would be
replaced by the submodule of that name as soon as it is imported. This module
stays cheap to import: sqlite3 and the backends load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from .errors import ForeignDatabase, NotADatabase, SchemaTooNew, StoreBusy, StoreError, StoreFull

if TYPE_CHECKING:  # pragma: no cover
    from zagent.contracts import Checkpoints, MemoryStore
    from .documents import DocumentStore
    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup

__all__ = ["ForeignDatabase", "NotADatabase", "SchemaTooNew", "StoreBusy", "StoreError", "StoreFull",
           "zagent_register_memory", "zagent_register_commands"]


def make_inprocess(**options: Any) -> MemoryStore:
    """Factory of ``"inprocess"``."""
    from .inprocess import InProcessMemory

    return InProcessMemory(**options)


def make_sqlite(**options: Any) -> MemoryStore:
    """Factory of ``"sqlite"``."""
    from .sqlite import SqliteMemory

    return SqliteMemory.open(**options)


def make_checkpoints(**options: Any) -> Checkpoints:
    """Factory of ``"checkpoints"``."""
    from .checkpoints import CheckpointStore

    return CheckpointStore.open(**options)


def __getattr__(name: str) -> Any:
    if name == "SQLiteSession":  # a chat's conversation across processes (``session.py``), loaded on use
        from .session import SQLiteSession

        return SQLiteSession
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_documents(kernel: Optional["Kernel"] = None, **options: Any) -> DocumentStore:
    """Factory of ``"documents"``: ``path=`` (required), ``embedder=`` (default: the kernel's registered
    embedder, if any; ``None`` for words only) (``documents.py``)."""
    from .documents import DocumentStore

    if "embedder" not in options and kernel is not None:
        options["embedder"] = kernel.embedder()
    if options.get("path") is None:
        from zagent import ConfigError

        raise ConfigError("k.memory('documents') needs path=: the SQLite file to keep the documents in")
    return DocumentStore(**options)


def zagent_register_memory(register: Any, kernel: "Kernel") -> None:
    register("inprocess", make_inprocess)
    register("documents", lambda **options: make_documents(kernel, **options))
    register("sqlite", make_sqlite)
    register("checkpoints", make_checkpoints)


def zagent_register_commands(cli: "CommandGroup", kernel: "Kernel") -> None:
    from .cli import register_commands

    register_commands(cli, kernel)
