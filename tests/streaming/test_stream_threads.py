"""Events sent to a stream from another thread (a sync tool in its worker thread calling ``Kernel.emit``, which
runs on zagent's background loop) reach the stream's queue through its own loop, in order and without waiting.

Round sixteen: the sink put them on the stream's ``asyncio.Queue`` from the sending thread, which is not thread-safe
(asyncio's debug mode refuses it: the tool failed)."""

import asyncio
import logging
import time

import pytest

from zagent import Kernel, tool
from zagent.agentkit.streaming import astream_run


@pytest.fixture
def k():
    kernel = Kernel(entry_points=False, strict=True)
    yield kernel
    kernel.close()


@pytest.mark.timeout(120)
def test_a_sync_tool_emitting_from_its_thread_reaches_the_stream_in_order(k, caplog):
    """A sync tool running in a worker thread emits twenty events with ``Kernel.emit`` (pausing between them, so the
    consumer is waiting for the next) during a streamed run on a loop in debug mode, which refuses calls from the
    wrong thread: no observer fails, and the stream yields the twenty events, in order, then the result."""
    def noisy() -> str:
        """Reports progress."""
        for step in range(20):
            k.emit("progress", step=step)
            time.sleep(0.002)  # pacing only: the consumer drains the stream and waits again
        return "done"
    k.add_tool(tool(noisy))  # a closure: it runs in a worker thread

    async def go():
        return [item async for item in astream_run(k, lambda: k.arun_tool({"name": "noisy", "arguments": {}}))]

    with caplog.at_level(logging.ERROR):
        items = asyncio.run(go(), debug=True)
    assert not [r for r in caplog.records if "observer" in r.getMessage()]
    steps = [i.event.data["step"] for i in items if i.type == "event" and i.event.type == "progress"]
    assert steps == list(range(20))
    assert items[-1].type == "result" and items[-1].result.value == "done"
