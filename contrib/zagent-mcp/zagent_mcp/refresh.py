"""``Relister``: a server's tool list read again after ``notifications/tools/list_changed``, at most once per
``REFRESH_INTERVAL``; notifications coming meanwhile ask for one more read, not one each (a server re-announcing
after every listing was read again without pause)."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Optional

__all__ = ["REFRESH_INTERVAL", "Relister"]

#: seconds from one reading of a server's tool list to the next one a ``list_changed`` asks for
REFRESH_INTERVAL = 1.0


class Relister:
    """Calls ``read()`` (on the runtime's loop) after ``changed()``, coalesced and spaced out."""

    def __init__(self, read: Callable[[], Awaitable[None]], name: str):
        self.read, self.name = read, name
        self.last = float("-inf")  # the loop's time of the last read (the connect's listing too: ``listed``)
        self.again = False
        self.task: Optional["asyncio.Task[None]"] = None

    def listed(self) -> None:
        """The list was just read (by the connect)."""
        self.last = asyncio.get_running_loop().time()

    def changed(self) -> None:
        """The server said its list changed: read it again once the interval has passed."""
        if self.task is not None and not self.task.done():
            self.again = True
            return
        self.task = asyncio.get_running_loop().create_task(self._run(), name=f"zagent-mcp-refresh:{self.name}")

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        self.again = True
        while self.again:
            wait = self.last + REFRESH_INTERVAL - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            self.again = False
            try:
                await self.read()
            finally:
                self.last = loop.time()

    def cancel(self) -> Any:
        """Stop a read waiting or under way (the server is closing)."""
        task, self.task = self.task, None
        if task is not None and not task.done():
            task.cancel()
        return task
