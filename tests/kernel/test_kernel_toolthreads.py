"""Sync tools that hang: a fresh thread takes the stuck one's place, and the process can still exit."""

import subprocess
import sys
import textwrap
import threading

import pytest

from zagent import Kernel, tool
from zagent.testing import wait_until
from zagent._tools.threads import ToolThreads


def _kernel(*tools, threads=1):
    k = Kernel(plugins=[], entry_points=False, config={"tool_threads": threads})
    for t in tools:
        k.add_tool(t)
    return k


def test_a_hung_tool_does_not_starve_the_next_calls():
    """With one tool thread, a call after a hung (timed-out) one still runs and succeeds."""
    release = threading.Event()
    k = _kernel(tool(lambda: release.wait(), name="block", timeout=0.05), tool(lambda: "ok", name="quick"))
    try:
        hung = k.run_tool({"name": "block", "arguments": {}})
        assert hung.state == "timeout" and "keeps running in the background" in hung.content
        assert k.run_tool({"name": "quick", "arguments": {}}).content == "ok"
        assert k.run_tool({"name": "quick", "arguments": {}}).content == "ok"
    finally:
        release.set()
        k.close()


def test_an_abandoned_thread_leaves_when_its_call_returns():
    """Once the stuck call returns, its thread exits: never more than max_workers threads serve calls."""
    pool = ToolThreads(2, thread_name_prefix="tt-test")
    release = threading.Event()
    stuck = pool.submit(release.wait)
    wait_until(lambda: stuck.running(), "the call to start")
    assert pool.abandon(stuck) is True and pool.serving == 0
    assert [pool.submit(lambda i=i: i).result(30) for i in range(4)] == [0, 1, 2, 3]
    assert 1 <= pool.serving <= 2
    release.set()
    wait_until(lambda: not any(t.name == "tt-test_1" for t in threading.enumerate()), "the stuck thread to exit")
    assert stuck.result(30) is True
    alive = [t for t in threading.enumerate() if t.name.startswith("tt-test_")]
    assert len(alive) == pool.serving <= 2
    pool.shutdown()


def test_abandoning_a_queued_call_cancels_it():
    """A call still waiting for a thread is cancelled, not abandoned, and never runs."""
    pool = ToolThreads(1)
    release, ran = threading.Event(), []
    first = pool.submit(release.wait)
    queued = pool.submit(ran.append, 1)
    assert pool.abandon(queued) is False and queued.cancelled()
    release.set()
    assert first.result(30) is True
    assert pool.submit(lambda: "after").result(30) == "after"
    assert ran == []
    pool.shutdown()


def test_submit_after_shutdown_says_the_kernel_is_closed():
    """A closed kernel's threads refuse new work with a clear error."""
    pool = ToolThreads(1)
    pool.shutdown()
    with pytest.raises(RuntimeError, match="kernel was closed"):
        pool.submit(print)


def test_a_hung_tool_does_not_keep_the_process_alive():
    """A script whose sync tool hangs forever gets its timeout result and exits."""
    script = textwrap.dedent('''
        import threading
        from zagent import Kernel, tool
        k = Kernel(plugins=[], entry_points=False)
        k.add_tool(tool(lambda: threading.Event().wait(), name="forever", timeout=0.1))
        print(k.run_tool({"name": "forever", "arguments": {}}).state)
    ''')
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "timeout"


@pytest.mark.skipif(not hasattr(__import__("signal"), "pthread_sigmask"), reason="POSIX signal masks")
def test_zagents_threads_leave_ctrl_c_to_the_main_thread():
    """The background event loop's thread and the tool threads block SIGINT, so Ctrl-C goes to the main thread."""
    import signal

    from zagent import run_sync

    async def loop_mask():
        return signal.pthread_sigmask(signal.SIG_BLOCK, [])

    pool = ToolThreads(1)
    try:
        assert signal.SIGINT in run_sync(loop_mask())
        assert signal.SIGINT in pool.submit(signal.pthread_sigmask, signal.SIG_BLOCK, []).result(30)
        assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    finally:
        pool.shutdown()


def _zagent_threads():
    return [t for t in threading.enumerate() if t.name.startswith("zagent-tool")]


def test_300_calls_of_a_hanging_tool_keep_the_thread_count_bounded():
    """A sync tool that always hangs, called 300 times, holds at most its cap of threads; the rest are refused."""
    release = threading.Event()
    k = Kernel(plugins=[], entry_points=False, config={"tool_threads": 2, "tool_threads_abandoned_per_tool": 5})
    k.add_tool(tool(lambda: release.wait(), name="hang", timeout=0.01))
    k.add_tool(tool(lambda: "ok", name="quick"))
    before = set(_zagent_threads())  # other tests' stuck threads may still be around
    try:
        results = [k.run_tool({"name": "hang", "arguments": {}}) for _ in range(300)]
        # the first 5 time out while running (abandoned); on a loaded machine a call can also time out still
        # queued, before any thread took it (cancelled, not abandoned): a few more timeouts, never more threads
        assert [r.state for r in results[:5]] == ["timeout"] * 5
        assert {r.state for r in results} == {"timeout", "error"}
        refused = [r for r in results if r.state == "error"]
        assert len(refused) >= 250
        assert "'hang' is refused: 5 of its calls ran past their timeout" in refused[0].content
        assert "tool_threads_abandoned_per_tool" in refused[0].content
        assert len(set(_zagent_threads()) - before) <= 5 + 2
        assert k.run_tool({"name": "quick", "arguments": {}}).content == "ok"  # other tools still run
    finally:
        release.set()
    wait_until(lambda: k.tool_executor().abandoned == 0, "the stuck calls to return")
    release.clear()
    assert k.run_tool({"name": "hang", "arguments": {}}).state == "timeout"  # accepted again once they returned
    release.set()
    k.close()


def test_the_kernel_wide_cap_refuses_every_sync_tool():
    """Past the kernel's cap of abandoned calls (over several tools), any sync tool is refused until some return."""
    release = threading.Event()
    k = Kernel(plugins=[], entry_points=False, config={"tool_threads_abandoned": 3})
    for name in ("a", "b", "c", "d"):
        k.add_tool(tool(lambda: release.wait(), name=name, timeout=0.01))
    try:
        # until 3 calls are abandoned while running (on a loaded machine a call can also time out still queued,
        # before a thread took it: cancelled, not abandoned, so it does not count)
        states = []
        while k.tool_executor().abandoned < 3 and len(states) < 30:
            states.append(k.run_tool({"name": "abc"[len(states) % 3], "arguments": {}}).state)
        assert k.tool_executor().abandoned == 3 and set(states) == {"timeout"}
        refused = k.run_tool({"name": "d", "arguments": {}})
        assert refused.state == "error" and "3 sync tool calls ran past their timeout" in refused.content
        assert "tool_threads_abandoned'" in refused.content
    finally:
        release.set()
        k.close()


def test_bad_caps_are_refused():
    """Caps must be integers of at least 1."""
    with pytest.raises(ValueError, match="max_abandoned_per_tool"):
        ToolThreads(1, max_abandoned_per_tool=0)
    with pytest.raises(ValueError, match="max_abandoned"):
        ToolThreads(1, max_abandoned=True)


def _counting_kernel(fn, **options):
    """A kernel with ``fn`` as tool "t", and a list counting the calls handed to its tool threads."""
    k = Kernel(plugins=[], entry_points=False)
    k.add_tool(tool(fn, name="t", **options))
    threads, started = k.tool_executor(), []
    original = threads.start

    def start(*args, **kwargs):
        started.append(1)
        return original(*args, **kwargs)

    threads.start = start
    return k, started


def _calls(k, times, **arguments):
    results = [k.run_tool({"name": "t", "arguments": arguments}) for _ in range(times)]
    assert {r.state for r in results} == {"success"}, results[0].content
    return results


def _probe(k):
    from zagent._tools.run import _probes

    return _probes[k.tools(["t"])[0]]


def _promote(k, **arguments):
    """Call "t" until it runs on the loop (a probe whose wall time a busy machine stretched does not count)."""
    for calls in range(1, 500):
        _calls(k, 1, **arguments)
        if _probe(k).inline:
            return calls
    raise AssertionError("the tool was never moved to the event loop")


def add(a: int, b: int) -> int:
    """Add two integers (pure: only its arguments)."""
    return a + b


def work(n: int) -> int:
    """Sum the first n integers (pure; its CPU time grows with n)."""
    return sum(range(n))


def test_a_quick_pure_sync_tool_moves_to_the_event_loop_after_its_probes():
    """A pure sync tool with default options runs its first PROBES calls in tool threads, then on the loop."""
    from zagent._tools.threads import PROBES

    k, started = _counting_kernel(add)
    assert _promote(k, a=1, b=2) >= PROBES and len(started) >= PROBES
    before = len(started)
    _calls(k, 5, a=1, b=2)
    assert len(started) == before
    k.close()


def test_a_tool_that_reaches_beyond_its_arguments_always_runs_in_threads():
    """A tool naming a module global or a closure variable (it could block on it) is never measured or moved."""
    from zagent._tools.threads import PROBES

    lock = threading.Lock()

    def guarded(a: int) -> int:
        """Quick, but it takes a lock."""
        with lock:
            return a

    k, started = _counting_kernel(guarded)
    _calls(k, PROBES + 5, a=1)
    assert len(started) == PROBES + 5 and _probe(k).settled
    k.close()


def test_a_cpu_heavy_pure_tool_settles_in_threads():
    """A pure tool whose call uses more than FAST of CPU stays in threads for good, even if later calls are quick."""
    from zagent._tools.threads import PROBES

    k, started = _counting_kernel(work)
    _calls(k, 1, n=2_000_000)
    _calls(k, PROBES + 3, n=3)
    assert len(started) == PROBES + 4 and _probe(k).settled
    k.close()


def test_inline_false_keeps_a_quick_pure_tool_in_threads():
    """inline=False opts out of the measurement: every call runs in a tool thread."""
    from zagent._tools.threads import PROBES

    k, started = _counting_kernel(add, inline=False)
    _calls(k, PROBES + 3, a=1, b=2)
    assert len(started) == PROBES + 3
    k.close()


def test_a_promoted_tool_that_turns_slow_goes_back_to_threads_with_a_warning(caplog):
    """A call on the loop slower than SLOW sends the tool back to threads for good, and a warning names it."""
    k, started = _counting_kernel(work)
    _promote(k, n=3)
    before = len(started)
    with caplog.at_level("WARNING", logger="zagent.tools"):
        _calls(k, 1, n=5_000_000)  # on the loop: it stalls it once
    assert len(started) == before
    assert "'t' took" in caplog.text and "inline=False" in caplog.text
    _calls(k, 3, n=3)
    assert len(started) == before + 3 and _probe(k).settled
    k.close()


def test_may_run_inline_accepts_only_self_contained_functions():
    """Pure code on its arguments qualifies; globals, closures, shadowed builtins and non-functions do not."""
    from zagent._tools.threads import may_run_inline

    def words(text: str) -> int:
        return len([w for w in text.split() if w.isalpha()])

    def checked(x: int) -> int:
        if x < 0:
            raise ValueError("negative")
        return abs(x)

    n = 3

    def closure(x: int) -> int:
        return x + n

    assert may_run_inline(add) and may_run_inline(words) and may_run_inline(checked)
    assert may_run_inline(lambda a, b: a * b)
    assert not may_run_inline(closure)
    assert not may_run_inline(_calls)  # names module globals
    assert not may_run_inline(lambda: open("/dev/null"))  # a builtin that does I/O
    assert not may_run_inline(lambda: threading.Event().wait())
    assert not may_run_inline(print) and not may_run_inline(len) and not may_run_inline(None)
