"""Closing what a kernel handed out: memory stores (``aclose`` or ``close``), logged, never raised."""

from __future__ import annotations

from typing import Any

from .logs import log


async def _close_quietly(store: Any) -> None:
    """Close a memory store the kernel handed out (``aclose`` or ``close``); log, never raise."""
    try:
        if hasattr(store, "aclose"):
            await store.aclose()
        elif hasattr(store, "close"):
            store.close()
    except Exception:
        log.exception("closing %r failed", store)
