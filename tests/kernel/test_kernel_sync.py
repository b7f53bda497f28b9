"""Sync twins work in a plain script, inside a running event loop and from worker threads."""

import asyncio
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest

from zagent import Kernel, run_sync, tool


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def make_kernel():
    k = Kernel(entry_points=False)
    k.add_tool(add)
    return k


def test_sync_twin_in_plain_script():
    """``run_tool`` works in a plain script (a fresh interpreter, no event loop)."""
    code = textwrap.dedent("""
        import zagent
        k = zagent.Kernel(entry_points=False)
        k.add_tool(zagent.tool(lambda a, b: a + b, name="add"))
        print(k.run_tool({"name": "add", "arguments": {"a": 2, "b": 2}}).content)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "4"


def test_sync_twin_inside_running_loop():
    """``run_tool`` works when called from code already running in an event loop (notebooks, web apps)."""
    k = make_kernel()

    async def handler():
        return k.run_tool({"name": "add", "arguments": {"a": 1, "b": 2}}).value
    assert asyncio.run(handler()) == 3


def test_sync_twin_from_worker_threads():
    """``run_tool`` works from several worker threads at once."""
    k = make_kernel()
    with ThreadPoolExecutor(4) as pool:
        values = list(pool.map(lambda i: k.run_tool({"name": "add", "arguments": {"a": i, "b": i}}).value, range(8)))
    assert values == [2 * i for i in range(8)]


def test_run_sync_propagates_exceptions():
    """Exceptions of the coroutine reach the sync caller unchanged."""
    async def fail():
        raise LookupError("missing")
    with pytest.raises(LookupError, match="missing"):
        run_sync(fail())


def test_sync_tool_calling_sync_twin():
    """A sync tool (run in a worker thread) may itself call the kernel's sync twins."""
    k = make_kernel()
    k.add_tool(tool(lambda: k.run_tool({"name": "add", "arguments": {"a": 5, "b": 5}}).value, name="nested"))
    assert k.run_tool({"name": "nested", "arguments": {}}).value == 10


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
# forking while zagent's loop thread runs is the case under test (gunicorn, multiprocessing's fork start method)
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded, use of fork:DeprecationWarning")
def test_sync_twin_in_forked_child():
    """After ``os.fork`` (gunicorn, multiprocessing), sync twins work in the child."""
    import os

    k = make_kernel()
    k.run_tool({"name": "add", "arguments": {"a": 1, "b": 1}})  # start the parent's loop first
    pid = os.fork()
    if pid == 0:  # child: exit code 0 only if the call works
        try:
            ok = k.run_tool({"name": "add", "arguments": {"a": 2, "b": 2}}).value == 4
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_sync_twin_inside_zagent_loop_says_use_async():
    """An async tool calling a sync twin on zagent's own loop gets an error naming the async twin, not a deadlock."""
    k = make_kernel()

    async def inner() -> int:
        """Calls the sync twin from the loop."""
        return k.run_tool({"name": "add", "arguments": {"a": 1, "b": 1}}).value
    k.add_tool(tool(inner))
    r = k.run_tool({"name": "inner", "arguments": {}})
    assert r.state == "error" and "async twin" in r.content


_ABANDONED = """
import asyncio, gc, time, zagent
from zagent._runs import sync

async def abandoned():
    try:
        await asyncio.Event().wait()
    finally:
        print("cleaned up", flush=True)

asyncio.run_coroutine_threadsafe(abandoned(), sync._background_loop())
"""


def _abandon(then: str = "") -> subprocess.CompletedProcess:
    """A process leaving a run pending on zagent's background loop, running ``then`` before it exits."""
    return subprocess.run([sys.executable, "-c", _ABANDONED + textwrap.dedent(then)], capture_output=True,
                          text=True, timeout=60)


def test_abandoned_run_is_cancelled_at_exit():
    """A run still pending on the background loop at interpreter exit is cancelled, so its clean-up runs."""
    proc = _abandon()
    assert proc.stdout.strip() == "cleaned up" and "Task was destroyed" not in proc.stderr, proc.stderr


def test_abandoned_run_survives_the_cycle_collector():
    """A pending run nobody refers to (its task and its waiter refer only to each other) is not destroyed
    by a garbage collection: the background loop holds it until it ends, and exit cancels it."""
    proc = _abandon("""
        time.sleep(0.2)  # the task is waiting now
        gc.collect()
        print("collected", flush=True)
    """)
    assert proc.stdout.split() == ["collected", "cleaned", "up"] and "Task was destroyed" not in proc.stderr, \
        (proc.stdout, proc.stderr)


def test_ctrl_c_during_a_close_lets_the_close_finish_then_raises():
    """A Ctrl-C (a real SIGINT to this process) while ``run_sync_to_end``'s work runs does not cut it: the
    work finishes, Python's own handler is back, and then ``KeyboardInterrupt`` is raised."""
    import asyncio
    import os
    import signal

    from zagent._runs.sync import run_sync_to_end

    finished = []

    async def close():
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.sleep(0.3)
        finished.append(True)

    # Python's own handler, as in a terminal (a suite started as a background job begins with SIGINT ignored)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_sync_to_end(close())
        assert finished == [True]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)
