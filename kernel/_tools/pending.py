"""``PendingTools``: tool sources still finding their tools (e.g. MCP servers connecting in the background).

A plugin whose tools are not known when its registration hook runs (it must
first connect somewhere) registers them later with ``kernel.add_tool`` and
adds a *waiter* here: ``waiter(name)`` blocks until every tool that could be
called ``name`` (``None``: any tool of the source) is registered or known to
be unavailable, and returns at once when nothing is pending. The kernel calls
the waiters only on a miss (``Kernel.tool(name)`` finding nothing, the tool
path meeting an unknown name) and before listing every tool, so a kernel with
no pending source pays nothing, and ``Kernel()`` never waits for a slow server.
"""

from __future__ import annotations

from typing import Callable, Optional

Waiter = Callable[[Optional[str]], None]


class PendingTools:
    """The waiters of one kernel (see the module docstring)."""

    def __init__(self) -> None:
        self._waiters: list[Waiter] = []

    def __bool__(self) -> bool:
        return bool(self._waiters)

    def add(self, waiter: Waiter) -> Callable[[], None]:
        """Add ``waiter``; return a function that removes it."""
        self._waiters.append(waiter)
        return lambda: self._waiters.remove(waiter) if waiter in self._waiters else None

    def wait(self, name: Optional[str] = None) -> bool:
        """Run every waiter for ``name`` (in this thread); True if there was any."""
        waiters = list(self._waiters)
        for waiter in waiters:
            waiter(name)
        return bool(waiters)

    async def await_(self, name: Optional[str] = None) -> bool:
        """``wait`` from async code, in a worker thread so the event loop keeps running."""
        if not self._waiters:
            return False
        import asyncio  # not at import time: ``import zagent`` stays light

        return await asyncio.to_thread(self.wait, name)
