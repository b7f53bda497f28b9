"""Closing a kernel's belongings: the memory stores it handed out (``Owned``), ``zagent_kernel_close`` hooks
and the tool threads; every failure is logged, never raised."""

from __future__ import annotations

import weakref
from typing import Any, Iterable, Iterator

from .._hooks.runner import HookRunner
from .logs import log
from .._tools.table import ToolPool


class Owned:
    """What a kernel handed out and closes on ``aclose``, by identity (unhashable ones too), held weakly when it
    can be: a store nobody uses any more is closed by the garbage collector, not kept open (a store per agent
    built from a spec ran the process out of file descriptors)."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: dict[int, Any] = {}

    def add(self, obj: Any) -> None:
        key, items = id(obj), self._items
        try:
            items[key] = weakref.ref(obj, lambda ref: items.pop(key) if items.get(key) is ref else None)
        except TypeError:  # no weak references to it: held
            items[key] = obj

    def __iter__(self) -> Iterator[Any]:
        found = (v() if isinstance(v, weakref.ref) else v for v in list(self._items.values()))
        return iter([v for v in found if v is not None])

    def __len__(self) -> int:
        return len(self._items)


async def close_belongings(kernel: Any, stores: Iterable[Any], hooks: HookRunner, tool_pool: ToolPool) -> None:
    """Close ``stores``, run every ``zagent_kernel_close`` implementation with ``kernel``, stop the tool threads."""
    for store in list(stores):
        await _close_quietly(store, getattr(kernel, "config", None))
    for impl in hooks.impls("zagent_kernel_close"):
        try:
            await hooks.acall_one("zagent_kernel_close", impl, {"kernel": kernel})
        except Exception as exc:
            from .._trust.secrets import mask_exception
            from .._trust.settings import config_masker

            mask_exception(exc, config_masker(getattr(kernel, "config", None)))  # the token the app gave the plugin
            log.exception("plugin %r failed while closing", impl[0])
    tool_pool.shutdown()


async def _close_quietly(store: Any, config: Any = None) -> None:
    """Close a memory store the kernel handed out (``aclose`` or ``close``); log (the kernel ``config``'s secrets
    masked: a store's client may quote the token the app configured), never raise."""
    try:
        if hasattr(store, "aclose"):
            await store.aclose()
        elif hasattr(store, "close"):
            store.close()
    except Exception as exc:
        from .._trust.secrets import mask_exception
        from .._trust.settings import config_masker

        masker = config_masker(config)
        mask_exception(exc, masker)
        log.exception("closing %s failed", masker(repr(store)))
