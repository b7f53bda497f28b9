"""Memory plugin: the ``k.memory(name, **options)`` backends ``"inprocess"`` (the default, bounded), ``"sqlite"``,
``"checkpoints"`` and ``"documents"`` (``path=`` required), plus ``zagent memory``. Message stores follow
``zagent.contracts.MemoryStore`` (docs/hooks.md). Bad arguments raise ``zagent.ConfigError``; storage failures
``StoreError`` (``NotADatabase``, ``ForeignDatabase``, ``SchemaTooNew``, ``StoreFull``, ``StoreBusy``). Cheap to import:
backends load on first use.
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


#: runs' states, not an agent's messages: an agent's ``long_term_memory`` naming it is refused before the file is made
make_checkpoints.zagent_message_store = False  # type: ignore[attr-defined]


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


def zagent_config_keys() -> tuple[str, ...]:
    """The settings this plugin reads: ``memory`` (the ``zagent memory`` commands' file)."""
    return ("memory",)


def zagent_register_memory(register: Any, kernel: "Kernel") -> None:
    register("inprocess", make_inprocess)
    register("documents", lambda **options: make_documents(kernel, **options))
    register("sqlite", make_sqlite)
    register("checkpoints", make_checkpoints)


def zagent_register_commands(cli: "CommandGroup", kernel: "Kernel") -> None:
    from .cli import register_commands

    register_commands(cli, kernel)
