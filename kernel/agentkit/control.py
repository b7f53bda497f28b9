"""``RunControl``: pause, resume and abort one run from any thread or task. Its owner calls ``bind()``/``unbind()``
around the run, ``await wait_while(paused)`` at its boundaries and ``await abortable(aw)`` around what an abort must
interrupt; an abort cancels the awaiting task, and the owner raises ``RunAborted``.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional

__all__ = ["RunControl"]


class RunControl:
    """Thread-safe pause/resume/abort flags plus the wake-up and cancel plumbing of one run."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pause_requested = False
        self.abort_requested = False
        self._loop: Optional[Any] = None
        self._wake: Optional[Any] = None
        self._inflight: set[Any] = set()

    # -- any thread ---------------------------------------------------------------

    def request_pause(self) -> None:
        with self.lock:
            self.pause_requested = True

    def request_resume(self) -> None:
        with self.lock:
            self.pause_requested = False
        self.wakeup()

    def request_abort(self) -> None:
        with self.lock:
            self.abort_requested = True
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._cancel_inflight)
        self.wakeup()

    def wakeup(self) -> None:
        """Make a run waiting in ``wait_while`` look at its flags again."""
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None and not loop.is_closed():
            loop.call_soon_threadsafe(wake.set)

    # -- the run's own loop ---------------------------------------------------------

    def bind(self) -> None:
        """Attach to the running event loop (call when the run starts)."""
        import asyncio

        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()

    def unbind(self) -> None:
        self._loop = self._wake = None

    @property
    def loop(self) -> Optional[Any]:
        return self._loop

    async def wait_while(self, paused: Callable[[], bool], on_wait: Optional[Callable[[], None]] = None) -> None:
        """Wait until ``paused()`` is false or an abort is requested; ``on_wait`` runs before each wait."""
        while paused() and not self.abort_requested:
            if on_wait is not None:
                on_wait()
            wake = self._wake
            assert wake is not None, "RunControl.wait_while before bind()"
            wake.clear()
            await wake.wait()

    async def abortable(self, awaitable: Any) -> Any:
        """Await ``awaitable`` in the current task, which ``request_abort`` cancels while it waits."""
        import asyncio

        task = asyncio.current_task()
        self._inflight.add(task)
        try:
            return await awaitable
        finally:
            self._inflight.discard(task)

    def _cancel_inflight(self) -> None:
        for task in list(self._inflight):
            task.cancel()
