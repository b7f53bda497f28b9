"""``run_sync(coro)``: sync twins of async entry points, run on one background event loop per process (a
daemon thread started on first use)."""

from __future__ import annotations

import os
import threading
from typing import Any, Awaitable, Optional, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: Optional[Any] = None
_thread: Optional[threading.Thread] = None


def _forget_loop_after_fork() -> None:  # a forked child has the loop but not its thread
    global _loop, _thread, _lock
    _loop, _thread, _lock = None, None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_loop_after_fork)


def leave_signals_to_main_thread() -> None:
    """Block SIGINT in this thread (one zagent started), so Ctrl-C goes to the main thread."""
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
    """A task factory keeping each task referenced until it is done."""
    import asyncio

    held: set[Any] = set()

    def factory(loop: Any, coro: Any, **kwargs: Any) -> Any:
        task = asyncio.Task(coro, loop=loop, **kwargs)
        held.add(task)
        task.add_done_callback(held.discard)
        return task

    return factory


def _shutdown(loop: Any, thread: threading.Thread, grace: float = 1.0) -> None:
    """At exit: cancel what still runs on the background loop (no "Task was destroyed but it is pending!"),
    stop it and close it."""
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
    """Run ``awaitable`` to completion on the background loop and return its result (exceptions unchanged;
    a ``KeyboardInterrupt`` while waiting cancels it); ``RuntimeError`` from that loop's own thread."""
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
    """``run_sync`` for work that must not be cut half way (``Kernel.close``): Ctrl-C lets it go on for up to
    ``grace`` more seconds, then raises ``KeyboardInterrupt``."""
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
