"""Sync twins of async entry points: ``run_sync(coro)``, on one background event loop per process (in a
daemon thread); works in scripts, inside a running loop and from threads, and raises when called from that
loop's own thread. asyncio is imported on first use.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Awaitable, Optional, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: Optional[Any] = None
_thread: Optional[threading.Thread] = None


def _forget_loop_after_fork() -> None:
    """A forked child has the loop object but not its thread: start afresh on next use."""
    global _loop, _thread, _lock
    _loop, _thread, _lock = None, None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_loop_after_fork)


def leave_signals_to_main_thread() -> None:
    """Block SIGINT in the calling thread (one zagent started), so the OS delivers Ctrl-C to the
    main thread, where Python runs signal handlers and the app's waits get interrupted."""
    import signal

    if hasattr(signal, "pthread_sigmask"):  # POSIX; elsewhere signals already go to the main thread
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _background_loop() -> Any:
    global _loop, _thread
    with _lock:
        if _loop is None or _loop.is_closed():
            import asyncio

            loop = asyncio.new_event_loop()
            loop.set_task_factory(_held_task_factory())
            ready = threading.Event()

            def serve() -> None:
                leave_signals_to_main_thread()
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            _thread = threading.Thread(target=serve, name="zagent-sync-loop", daemon=True)
            _thread.start()
            ready.wait()
            _loop = loop
            import atexit

            atexit.register(_shutdown, loop, _thread)
        return _loop


def _held_task_factory() -> Any:
    """A task factory keeping each task referenced until it is done (see the module docstring)."""
    import asyncio

    held: set[Any] = set()

    def factory(loop: Any, coro: Any, **kwargs: Any) -> Any:
        task = asyncio.Task(coro, loop=loop, **kwargs)
        held.add(task)
        task.add_done_callback(held.discard)
        return task

    return factory


def _shutdown(loop: Any, thread: threading.Thread, grace: float = 1.0) -> None:
    """At interpreter exit: cancel what still runs on the background loop, stop it and close it.

    Without this, tasks left pending (a run abandoned by its caller) are
    reported as "Task was destroyed but it is pending!" at exit.
    """
    import asyncio

    if loop.is_closed() or not thread.is_alive():
        return

    async def cancel_pending() -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    try:
        asyncio.run_coroutine_threadsafe(cancel_pending(), loop).result(timeout=grace)
    except Exception:  # a task ignoring cancellation: give up, the process is exiting anyway
        pass
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=grace)
    if not loop.is_running():
        loop.close()


def run_sync(awaitable: Awaitable[T]) -> T:
    """Run ``awaitable`` to completion from synchronous code and return its result.

    Exceptions propagate unchanged. A ``KeyboardInterrupt`` while waiting
    cancels the coroutine before re-raising.
    """
    import asyncio

    loop = _background_loop()
    if threading.current_thread() is _thread:
        close = getattr(awaitable, "close", None)
        if close is not None:  # a coroutine that will never run: no "never awaited" warning
            close()
        raise RuntimeError(
            "a zagent sync method was called from inside zagent's own event loop; "
            "use the async twin (acall/arun/...) there"
        )
    future = asyncio.run_coroutine_threadsafe(_as_coroutine(awaitable), loop)
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        raise


def run_sync_to_end(awaitable: Awaitable[T], grace: float = 10.0) -> T:
    """``run_sync`` for work that must not be cut half way (``Kernel.close``: stores, the run log).

    A ``KeyboardInterrupt`` while it runs does not cancel it: the work goes on (a second Ctrl-C during
    a close loses no run-log rows) for up to ``grace`` more seconds, then ``KeyboardInterrupt`` is raised.
    In the main thread with Python's own Ctrl-C handler, that handler is swapped for one that only notes
    the press while the work is handed to the loop and waited for, so a press can never land half way
    through the hand-over (it did: the close then never ran).
    """
    import asyncio
    import concurrent.futures
    import signal
    import time

    loop = _background_loop()
    if threading.current_thread() is _thread:
        return run_sync(awaitable)  # raises the usual error
    pressed: list[float] = []
    swapped = (threading.current_thread() is threading.main_thread()
               and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    if swapped:
        signal.signal(signal.SIGINT, lambda *_: pressed.append(time.monotonic()))
    try:
        future = asyncio.run_coroutine_threadsafe(_as_coroutine(awaitable), loop)
        while True:
            until = pressed[0] + grace if pressed else None
            wait = 0.1 if swapped else None  # a noted press wakes nothing: look again soon
            if until is not None:
                wait = max(0.0, min(wait or until, until - time.monotonic()))
            try:
                concurrent.futures.wait([future], wait)
            except KeyboardInterrupt:  # another handler's Ctrl-C (not swapped)
                pressed.append(time.monotonic())
                continue
            if future.done():
                break
            if until is not None and time.monotonic() >= until:
                future.cancel()
                raise KeyboardInterrupt from None
    finally:
        if swapped:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    if pressed:
        raise KeyboardInterrupt
    return future.result()


async def _as_coroutine(awaitable: Awaitable[T]) -> T:
    return await awaitable
