"""``PendingTools``: tool sources still finding their tools (MCP servers connecting). ``waiter(name)``
blocks until every tool that could be ``name`` is known; the kernel calls waiters only on a miss and before
listing every tool.
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
