"""Requests enter httpx's connection pool one at a time, each once the one before it holds a connection.

httpcore's pool (httpx 0.28, httpcore 1.0) hands an idle connection to
*every* request that arrives before the first of them has started using it:
a connection stays "available" until its request's task runs again, which
takes a few event-loop turns. All but one of those requests then fail over
(``ConnectionNotAvailable``) and go round the pool again, rescanning every
request and connection each time. Measured against the peers' mock server at
1,000 concurrent agent calls: five extra trips round the pool per request,
about half the client's CPU.

The fix stays outside httpcore: zagent lets a request into the pool only when
the previous one has its connection. Each request carries a ``trace``
extension (httpcore's public hook, ``Claim``); its first event
(``connection.connect_tcp.started`` on a new connection,
``http11.send_request_headers.started`` on a reused one) means the request
has a connection that nobody else can be handed, and lets the next request
in. The wait is a few event-loop turns, never the server's reply, and the
hold ends however the request ends (``Claim.finish``).

Only clients whose pool is known to trace are guarded (``guard_for``): an
``httpx.AsyncClient`` over httpx's own transport and httpcore's pool, HTTP/1.1
only, with no proxy mounts. Another transport (a user's, a mock, a proxy, httpx2) is left
as it is: a request that held the entry without a single trace event would
hold every other request back for its whole exchange, so a client whose
request succeeds without one is never guarded again.
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
