"""RunControl: pause/resume/abort flags set from other threads wake or cancel the run's loop."""

import asyncio
import threading

from zagent.agentkit.control import RunControl


def test_resume_from_another_thread_ends_the_wait():
    """A run waiting in wait_while wakes when another thread requests resume."""
    control = RunControl()

    async def main():
        control.bind()
        control.request_pause()
        threading.Timer(0.01, control.request_resume).start()
        await control.wait_while(lambda: control.pause_requested)
        return control.pause_requested

    assert asyncio.run(main()) is False


def test_abort_cancels_the_awaiting_task():
    """request_abort from another thread cancels the await inside abortable()."""
    control = RunControl()

    async def main():
        control.bind()
        started = asyncio.Event()

        async def forever():
            started.set()
            await asyncio.sleep(3600)

        async def run():
            await control.abortable(forever())

        task = asyncio.ensure_future(run())
        await started.wait()
        threading.Thread(target=control.request_abort).start()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        return "finished"

    assert asyncio.run(main()) == "cancelled"
    assert control.abort_requested


def test_wait_while_returns_at_once_after_abort():
    """wait_while does not block once an abort was requested, even if still paused."""
    control = RunControl()

    async def main():
        control.bind()
        control.request_pause()
        control.request_abort()
        await control.wait_while(lambda: True)
        return True

    assert asyncio.run(main())
