"""Requests enter httpx's connection pool one at a time, each once the one before it holds a connection
(``guard_for``, ``Claim``: its first ``trace`` event). The wait is a few event-loop turns, never the server's reply;
only an httpx ``AsyncClient`` on httpcore's HTTP/1.1 pool without proxy mounts is guarded (docs/http.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    import asyncio


class Claim:
    """The ``trace`` extension of one request: gives the entry back at the first pool event."""

    __slots__ = ("_lock", "_extensions", "held")

    def __init__(self, lock: asyncio.Lock, extensions: dict[str, Any]) -> None:
        self._lock = lock
        self._extensions = extensions
        self.held = True
        extensions["trace"] = self

    async def __call__(self, name: str, info: Any) -> None:
        self.finish()

    def finish(self) -> bool:
        """Give the entry back, once: at the first pool event, or when the request ended before any (it failed
        early, or was cancelled). The extension is removed, so the request's later phases skip tracing.

        Returns True when this call gave it back, i.e. at the end of a request: no event came for it.
        """
        if not self.held:
            return False
        self.held = False
        self._lock.release()
        self._extensions.pop("trace", None)
        return True


def guard_for(mod: Any, client: Any) -> Optional[asyncio.Lock]:
    """The entry lock for ``client`` (``None``: its pool is not one this guard knows to trace)."""
    if getattr(mod, "__name__", "") != "httpx" or type(client) is not mod.AsyncClient:
        return None
    transport = getattr(client, "_transport", None)
    if type(transport) is not mod.AsyncHTTPTransport or getattr(client, "_mounts", True):
        return None  # a custom transport, or proxies from the environment (or an httpx without these fields)
    try:
        import httpcore
    except ImportError:  # pragma: no cover - httpx depends on it
        return None
    pool = getattr(transport, "_pool", None)
    if type(pool) is not httpcore.AsyncConnectionPool or getattr(pool, "_http2", True):
        return None  # HTTP/2 multiplexes: requests may wait for a stream (untraced) where another could go on
    import asyncio

    return asyncio.Lock()
