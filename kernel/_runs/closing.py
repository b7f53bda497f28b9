"""Closing a kernel's belongings: the memory stores it handed out (``Owned``), ``zagent_kernel_close`` hooks
and the tool threads; every failure is logged, never raised."""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from .._hooks.runner import HookRunner
from .logs import log
from .._tools.table import ToolPool


class Owned:
    """What a kernel handed out and closes on ``aclose``, held strongly and by identity (unhashable ones too)."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: dict[int, Any] = {}

    def add(self, obj: Any) -> None:
        self._items[id(obj)] = obj

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._items.values()))

    def __len__(self) -> int:
        return len(self._items)


async def close_belongings(kernel: Any, stores: Iterable[Any], hooks: HookRunner, tool_pool: ToolPool) -> None:
    """Close ``stores``, run every ``zagent_kernel_close`` implementation with ``kernel``, stop the tool threads."""
    for store in list(stores):
        await _close_quietly(store)
    for impl in hooks.impls("zagent_kernel_close"):
        try:
            await hooks.acall_one("zagent_kernel_close", impl, {"kernel": kernel})
        except Exception:
            log.exception("plugin %r failed while closing", impl[0])
    tool_pool.shutdown()


async def _close_quietly(store: Any) -> None:
    """Close a memory store the kernel handed out (``aclose`` or ``close``); log, never raise."""
    try:
        if hasattr(store, "aclose"):
            await store.aclose()
        elif hasattr(store, "close"):
            store.close()
    except Exception:
        log.exception("closing %r failed", store)
