"""``ToolThreads``: the worker threads sync tools run in, able to give up on a stuck call.

Python cannot stop a thread. When a sync tool runs past its timeout, the caller
gets a ``timeout`` result, but the thread stays busy until the tool returns,
maybe never. A ``concurrent.futures.ThreadPoolExecutor`` then has one worker
fewer for good: after a few hung calls, healthy calls queue behind them and time
out without having started. Its workers are also joined when the interpreter
exits, so one hung tool keeps the process from ending.

``ToolThreads`` fixes both:

* ``abandon(future)`` (called on timeout) stops counting that worker: the next
  call may start a fresh thread in its place. When the stuck call returns at
  last, its thread exits instead of rejoining the pool, so no more than
  ``max_workers`` threads ever serve calls.
* Workers are daemon threads: a stuck tool does not hold the process open.
* Workers block SIGINT, so Ctrl-C reaches the main thread (see ``zagent.sync``).

Threads start on demand and are reused while idle, like the standard pool.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Executor, Future
from typing import Any, Callable, Optional

from .sync import leave_signals_to_main_thread


class _Call(Future):  # type: ignore[type-arg]
    """A submitted call; ``abandoned`` is set (under the pool's lock) when the caller gave up on it."""

    abandoned = False


class ToolThreads(Executor):
    """A thread pool whose stuck calls can be abandoned (see the module docstring)."""

    def __init__(self, max_workers: int = 16, thread_name_prefix: str = "zagent-tool") -> None:
        if max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers}")
        self.max_workers = max_workers
        self._prefix = thread_name_prefix
        self._queue: "queue.SimpleQueue[Optional[tuple[_Call, Callable[..., Any], tuple, dict]]]" = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._serving = 0  # threads counted against max_workers (abandoned ones are not)
        self._started = 0
        self._shutdown = False

    @property
    def serving(self) -> int:
        """Threads currently counted against ``max_workers`` (idle or busy, not abandoned)."""
        return self._serving

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:  # type: ignore[type-arg]
        call = _Call()
        with self._lock:
            if self._shutdown:
                raise RuntimeError("the kernel's tool threads are shut down (the kernel was closed)")
            self._queue.put((call, fn, args, kwargs))
            if not self._idle.acquire(blocking=False) and self._serving < self.max_workers:
                self._serving += 1
                self._started += 1
                threading.Thread(target=self._work, name=f"{self._prefix}_{self._started}", daemon=True).start()
        return call

    def abandon(self, future: Future) -> bool:  # type: ignore[type-arg]
        """Give up on a call that is still running: its thread stops counting and leaves when the call returns.

        A call still queued is cancelled instead. Returns whether a thread was abandoned."""
        if future.cancel():
            return False
        with self._lock:
            if future.done() or not isinstance(future, _Call) or future.abandoned:
                return False
            future.abandoned = True
            self._serving -= 1
            return True

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shutdown = True
            serving = self._serving
        if cancel_futures:
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[0].cancel()
        for _ in range(serving):
            self._queue.put(None)  # one stop signal per serving thread; they exit after the work before it
        # ``wait`` is accepted for the Executor interface; the threads are daemons and are not joined,
        # since a stuck tool would make the join wait forever.

    def _work(self) -> None:
        leave_signals_to_main_thread()
        while True:
            item = self._queue.get()
            if item is None:
                return
            call, fn, args, kwargs = item
            del item
            if call.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
                    call.set_exception(exc)
                else:
                    call.set_result(result)
                    del result
            with self._lock:
                if call.abandoned:  # a fresh thread took this one's place meanwhile
                    return
            del call, fn, args, kwargs
            self._idle.release()
