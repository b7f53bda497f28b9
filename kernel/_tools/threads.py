"""``ToolThreads``: the daemon threads sync tools run in (a timed-out call's thread is abandoned, capped), and
``InlineProbe``: where a measured tool runs. docs/architecture.md (Design notes) says why."""

from __future__ import annotations

import asyncio
import builtins
import contextvars
import inspect
import logging
import queue
import threading
import time
from concurrent.futures import Executor, Future
from typing import Any, Callable, Optional

from .._runs.sync import leave_signals_to_main_thread

_PENDING, _RUNNING, _DONE, _CANCELLED = 0, 1, 2, 3
PROBES = 8  # calls of a measured tool timed in a thread before it may run on the loop
FAST = 100e-6  # ... once PROBES of them took at most this, wall and CPU (seconds)
SLOW = 2e-3  # a call on the loop using more CPU than this sends the tool back to the threads for good
PROMOTE_TIMEOUT = 60.0  # a tool with a shorter timeout stays in threads, where its timeout holds
_log = logging.getLogger("zagent.tools")

_SAFE_CALLS = frozenset({
    "abs", "all", "any", "bin", "bool", "chr", "dict", "divmod", "enumerate", "filter", "float", "format",
    "frozenset", "hash", "hex", "int", "isinstance", "issubclass", "len", "list", "map", "max", "min", "oct",
    "ord", "pow", "range", "repr", "reversed", "round", "set", "slice", "sorted", "str", "sum", "tuple", "zip"})
_SAFE_ATTRIBUTES = frozenset(name for kind in (str, bytes, list, dict, set, frozenset, tuple, int, float, bool)
                             for name in dir(kind) if not name.startswith("_"))


def may_run_inline(fn: object) -> bool:
    """Whether ``fn`` is a plain function without closures whose code (nested functions' too) names only safe
    builtins (unshadowed), builtin exceptions and attributes of builtin types."""
    if not inspect.isfunction(fn) or fn.__closure__:
        return False
    module_globals = fn.__globals__
    codes = [fn.__code__]
    while codes:
        code = codes.pop()
        if code.co_freevars:
            return False
        for name in code.co_names:
            if name in _SAFE_ATTRIBUTES and name not in module_globals:
                continue
            if name in module_globals or not hasattr(builtins, name):
                return False
            value = getattr(builtins, name)
            if name not in _SAFE_CALLS and not (isinstance(value, type) and issubclass(value, BaseException)):
                return False
        codes.extend(c for c in code.co_consts if inspect.iscode(c))
    return True


class InlineProbe:
    """Where a measured tool (``inline=None``) runs: threads while probed, then the loop, or threads for good."""

    __slots__ = ("name", "fast", "inline", "settled")

    def __init__(self, name: str, fn: object = None) -> None:
        self.name = name
        self.fast = 0  # probe calls that returned within FAST
        self.inline = False
        self.settled = not may_run_inline(fn)  # True once (or from the start) in threads for good

    def timed(self, wall: float, cpu: float) -> None:
        """A probe call in a thread took ``wall`` seconds, ``cpu`` of them on the CPU (a race between worker
        threads miscounts by one at worst): over ``FAST`` of CPU settles it in threads; a call that waited
        neither counts nor settles."""
        if self.settled or self.inline:
            return
        if cpu > FAST:
            self.settled = True
        elif wall <= FAST:
            self.fast += 1
            self.inline = self.fast >= PROBES

    def ran_inline(self, seconds: float) -> None:
        """A call on the loop used ``seconds`` of CPU; past ``SLOW`` the tool goes back to threads for good."""
        if seconds > SLOW and self.inline:
            self.inline, self.settled = False, True
            _log.warning("tool %r took %.1f ms of CPU on the event loop (its first %d calls were quick), so it runs in "
                         "the kernel's tool threads from now on; register it with inline=False if it can block",
                         self.name, seconds * 1e3, PROBES)


class ToolThreadsExhausted(RuntimeError):
    """Too many calls of a tool (or of all tools) are still running after their timeout: refused for now."""


class _Call(Future):  # type: ignore[type-arg]
    """A call made through ``submit``: a concurrent future (the job's fields as in ``_LoopCall``)."""

    key: Any = None
    abandoned = False
    state = _PENDING
    probe: Optional[InlineProbe] = None
    loop: Optional[asyncio.AbstractEventLoop] = None

    @property
    def future(self) -> "_Call":
        return self


class _LoopCall:
    """A call made through ``start``: ``future`` is an asyncio future of ``loop``, the one that started it."""

    __slots__ = ("future", "key", "abandoned", "state", "probe", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop, key: Any, probe: Optional[InlineProbe] = None) -> None:
        self.loop = loop
        self.future: "asyncio.Future[Any]" = loop.create_future()
        self.key = key
        self.abandoned = False
        self.state = _PENDING  # changed under the pool's lock
        self.probe = probe


def _run(job: Any, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    future, loop = job.future, job.loop
    if loop is None and not future.set_running_or_notify_cancel():
        return
    started, cpu = time.perf_counter(), time.thread_time()
    how: Callable[[Any, Any], None]
    try:
        how, value = _set_result, fn(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
        how, value = _set_exception, exc
    if job.probe is not None:  # before the caller hears back, so its next call sees this timing
        job.probe.timed(time.perf_counter() - started, time.thread_time() - cpu)
    if loop is None:
        how(future, value)
        return
    try:
        loop.call_soon_threadsafe(how, future, value)
    except RuntimeError:  # the loop was closed meanwhile: nobody is waiting
        pass


def _set_result(future: Any, value: Any) -> None:
    if not future.done():
        future.set_result(value)


def _set_exception(future: Any, exc: Any) -> None:
    if not future.done():
        future.set_exception(exc)


class ToolThreads(Executor):
    """A thread pool whose stuck calls can be abandoned, up to a cap per tool (``key``) and in all."""

    def __init__(self, max_workers: int = 16, thread_name_prefix: str = "zagent-tool", *,
                 max_abandoned: int = 64, max_abandoned_per_tool: int = 8) -> None:
        for name, value in (("max_workers", max_workers), ("max_abandoned", max_abandoned),
                            ("max_abandoned_per_tool", max_abandoned_per_tool)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer of at least 1, got {value!r}")
        self.max_workers = max_workers
        self.max_abandoned = max_abandoned
        self.max_abandoned_per_tool = max_abandoned_per_tool
        self._prefix = thread_name_prefix
        self._queue: "queue.SimpleQueue[Optional[tuple[Any, Callable[..., Any], tuple[Any, ...], dict[str, Any]]]]" = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self.serving = 0  # threads counted against max_workers: idle or busy, not abandoned
        self._started = 0
        self._abandoned: dict[Any, int] = {}  # key -> calls abandoned and still running
        self.abandoned = 0  # calls given up on that are still running (each holds a thread)
        self._shutdown = False
        self.tasks: dict[Any, int] = {}  # key -> async calls past their timeout ignoring cancellation (one loop's)

    def start(self, key: Any, fn: Callable[..., Any], kwargs: dict[str, Any],
              probe: Optional[InlineProbe] = None) -> _LoopCall:
        """Run ``fn(**kwargs)`` in a worker for the running loop, timed for ``probe``; ``key`` names the tool for
        the caps (``ToolThreadsExhausted`` when at one)."""
        job = _LoopCall(asyncio.get_running_loop(), key, probe)
        self._put(job, contextvars.copy_context().run, (fn,), kwargs)
        return job

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:  # type: ignore[type-arg]
        call = _Call()
        self._put(call, fn, args, kwargs)
        return call

    def _put(self, job: Any, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        with self._lock:
            if self._shutdown:
                raise RuntimeError("the kernel's tool threads are shut down (the kernel was closed)")
            if job.key is not None:
                self._check_cap(job.key)
            self._queue.put((job, fn, args, kwargs))
            if not self._idle.acquire(blocking=False) and self.serving < self.max_workers:
                self.serving += 1
                self._started += 1
                threading.Thread(target=self._work, name=f"{self._prefix}_{self._started}", daemon=True).start()

    def _check_cap(self, key: Any) -> None:
        stuck = self._abandoned.get(key, 0)
        if stuck >= self.max_abandoned_per_tool:
            raise ToolThreadsExhausted(
                f"tool {key!r} is refused: {stuck} of its calls ran past their timeout and are still running "
                f"(at most {self.max_abandoned_per_tool} per tool); it runs again once they return. Fix the tool "
                "so it returns, give it a longer timeout, or raise Kernel config 'tool_threads_abandoned_per_tool'")
        if self.abandoned >= self.max_abandoned:
            raise ToolThreadsExhausted(
                f"tool {key!r} is refused: {self.abandoned} sync tool calls ran past their timeout and are "
                f"still running (at most {self.max_abandoned} in all); sync tools run again once some return. "
                "Fix the hanging tools or raise Kernel config 'tool_threads_abandoned'")

    def check_tasks(self, key: Any) -> None:
        """``ToolThreadsExhausted`` when too many async calls of tool ``key`` ignored their cancellation."""
        stuck = self.tasks.get(key, 0)
        if sum(self.tasks.values()) >= self.max_abandoned:
            raise ToolThreadsExhausted(
                f"tool {key!r} is refused: {sum(self.tasks.values())} async tool calls ignored their cancellation "
                f"after their timeout and are still running (at most {self.max_abandoned} in all). Fix those tools "
                "or raise Kernel config 'tool_threads_abandoned'")
        if stuck >= self.max_abandoned_per_tool:
            raise ToolThreadsExhausted(
                f"tool {key!r} is refused: {stuck} of its async calls ignored their cancellation after their timeout "
                f"and are still running (at most {self.max_abandoned_per_tool} per tool); it runs again once they "
                "end. Fix the tool so it lets asyncio.CancelledError through, or raise Kernel config "
                "'tool_threads_abandoned_per_tool'")

    def hold_task(self, key: Any, task: "asyncio.Future[Any]") -> None:
        """Count ``task`` (tool ``key``'s, past its timeout, ignoring its cancellation) until it ends."""
        self.tasks[key] = self.tasks.get(key, 0) + 1

        def ended(done: "asyncio.Future[Any]") -> None:
            left = self.tasks.pop(key) - 1
            if left:
                self.tasks[key] = left
            if not done.cancelled():
                done.exception()  # retrieved: nobody waits for it

        task.add_done_callback(ended)

    def abandon(self, job: Any) -> bool:
        """Give up on a running call (its thread stops counting, and leaves when the call returns) or cancel a
        queued one; whether a thread was abandoned."""
        with self._lock:
            if job.state == _PENDING:
                job.state = _CANCELLED
                if job.loop is None:
                    job.future.cancel()
                return False
            if job.state != _RUNNING or job.abandoned:
                return False
            job.abandoned = True
            self.serving -= 1
            self.abandoned += 1
            if job.key is not None:
                self._abandoned[job.key] = self._abandoned.get(job.key, 0) + 1
            return True

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shutdown = True
            serving = self.serving
        if cancel_futures:
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    self._cancel(item[0])
        for _ in range(serving):
            self._queue.put(None)  # one stop signal per serving thread; they exit after the work before it
        # ``wait`` is for the Executor interface: the daemon threads are not joined (a stuck tool would hang it)

    def _cancel(self, job: Any) -> None:
        with self._lock:
            if job.state == _PENDING:
                job.state = _CANCELLED
        if job.loop is None:
            job.future.cancel()
        else:
            job.loop.call_soon_threadsafe(job.future.cancel)

    def _work(self) -> None:
        leave_signals_to_main_thread()
        lock = self._lock
        while True:
            item = self._queue.get()
            if item is None:
                return
            job, fn, args, kwargs = item
            del item
            with lock:
                runs = job.state == _PENDING
                if runs:
                    job.state = _RUNNING
            if runs:
                _run(job, fn, args, kwargs)
            with lock:
                job.state = _DONE
                if job.abandoned:  # a fresh thread took this one's place meanwhile
                    self.abandoned -= 1
                    if job.key is not None:
                        left = self._abandoned[job.key] - 1
                        if left:
                            self._abandoned[job.key] = left
                        else:
                            del self._abandoned[job.key]
                    return
            del job, fn, args, kwargs
            self._idle.release()
