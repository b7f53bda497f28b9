"""pause/resume/abort from other threads and tasks, and the 50-step acceptance run."""

import asyncio
import threading

import pytest

from zagent import RunAborted
from zagent.plugins.react import ReActLoop

from zagent.testing import wait_until

from .conftest import call


_wait = wait_until


def test_fifty_steps_paused_ten_times_then_aborted(kernel):
    """A 50-step run paused and resumed 10 times and aborted once loses and repeats no step."""
    executed: list[int] = []
    entered: list[int] = []
    gate = threading.Condition()
    allowed = [0]
    events: list[str] = []

    def tick(i: int) -> int:
        """Runs once the controller allows call i (paces the run without timers)."""
        entered.append(i)
        with gate:
            gate.wait_for(lambda: allowed[0] > i, timeout=60)
        executed.append(i)
        return i

    def allow(n):
        with gate:
            allowed[0] = n
            gate.notify_all()

    class Watch:
        def zagent_event(self, event):
            events.append(event.type)

    kernel.add_tool(tick)
    kernel.add_plugin(Watch())
    llm = kernel.llm("scripted:m", replies=[call("tick", i=i) for i in range(50)] + ["done"])
    loop = ReActLoop(kernel=kernel, llm=llm, tools=["tick"], max_iterations=60)

    def controller():
        mark = 0
        for _ in range(10):
            allow(mark + 3)
            _wait(lambda: len(executed) >= mark + 3, "three more calls")
            loop.pause()
            allow(mark + 4)  # a call blocked at the gate is in flight: let it finish
            _wait(lambda: loop.status == "paused", "pause")
            mark = len(executed)
            loop.resume()
        assert mark <= 40
        allow(45)
        _wait(lambda: len(executed) >= 45, "45 calls")
        _wait(lambda: len(entered) >= 46, "call #45 to be in flight")
        loop.abort()  # call #45 is in flight, blocked at the gate
        _wait(lambda: loop.status == "aborted", "abort")
        allow(50)  # the cancelled call's thread finishes now; its result must not be recorded

    thread = threading.Thread(target=controller)
    thread.start()
    with pytest.raises(RunAborted) as info:
        loop.run("tick 50 times")
    thread.join()
    steps = [s.parameters["i"] for s in info.value.trajectory if s.tool == "tick"]
    assert steps == list(range(45)), "every finished call recorded once, in order"
    _wait(lambda: len(executed) == 46, "the cancelled thread to finish")
    assert executed == list(range(46)), "no call ran twice; only #45 was in flight at the abort"
    assert events.count("paused") == 10 and events.count("resumed") == 10
    assert loop.status == "aborted"


def test_abort_from_another_task_cancels_in_flight_tool(kernel):
    """abort() from another task cancels the running tool call and raises RunAborted."""
    started, cancelled = asyncio.Event(), []

    async def wait_forever() -> str:
        """Never finishes on its own."""
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "never"

    kernel.add_tool(wait_forever, timeout=None)
    llm = kernel.llm("scripted:m", replies=[call("wait_forever")])
    loop = ReActLoop(kernel=kernel, llm=llm, tools=["wait_forever"])

    async def main():
        run = asyncio.ensure_future(loop.arun("wait"))
        await started.wait()
        loop.abort()
        with pytest.raises(RunAborted):
            await run

    asyncio.run(main())
    assert cancelled == [True] and loop.status == "aborted"


def test_pause_from_another_task_holds_between_steps(kernel):
    """pause() from another task stops the run at the next boundary until resume()."""
    llm = kernel.llm("scripted:m", replies=[call("add", a=1, b=1), call("add", a=2, b=2), "done"])
    loop = ReActLoop(kernel=kernel, llm=llm, tools=["add"])

    async def main():
        loop.pause()
        run = asyncio.ensure_future(loop.arun("go"))
        await loop.wait_for_status("paused")
        assert len(llm.requests) == 0, "no step ran while paused"
        loop.resume()
        return await run

    result = asyncio.run(main())
    assert result.content == "done" and len(result.steps) == 3


def test_a_react_run_cancelled_from_outside_ends_with_a_cancelled_run_end(kernel):
    """A ReAct run whose task is cancelled while a tool awaits (``asyncio.wait_for``'s way, not ``abort()``) sends
    ``run_end`` with status ``cancelled`` and its step count, so observers close the run."""
    seen: list = []
    started = []

    class Watch:
        def zagent_event(self, event):
            seen.append((event.type, dict(event.data)))

    async def wait_forever() -> str:
        """Never returns."""
        started[0].set()
        await asyncio.sleep(3600)
        return "late"

    kernel.add_plugin(Watch(), name="watch")
    kernel.add_tool(wait_forever)
    loop = ReActLoop(kernel=kernel, llm=kernel.llm("scripted:c", replies=[call("wait_forever"), "x"]),
                     tools=["wait_forever"])

    async def main():
        started.append(asyncio.Event())
        task = asyncio.ensure_future(loop.arun("go"))
        await started[0].wait()
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())
    ends = [data for type, data in seen if type == "run_end"]
    assert len(ends) == 1 and ends[0]["status"] == ends[0]["outcome"] == "cancelled" and ends[0]["steps"] == 0
