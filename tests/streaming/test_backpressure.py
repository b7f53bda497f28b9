"""``astream()`` holds at most ``MAX_QUEUED`` items for a consumer that reads slowly: the run waits (backpressure)
instead of filling memory, a consumer that stops early still cancels a waiting run, and nothing is lost or reordered.

Round fifteen: the stream's queue was unbounded, so a model streaming a long reply (or a run sending many events)
to a consumer that read slowly, or not at all, grew memory without bound.
"""

import asyncio

import pytest

from zagent import Kernel
from zagent.agentkit.streaming import _RELAY, MAX_QUEUED, astream_run

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions"]
WORDS = 5 * MAX_QUEUED  # a reply of this many word deltas fills the stream several times over


@pytest.fixture
def k():
    kernel = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    yield kernel
    kernel.close()


class Recorder:
    def __init__(self):
        self.events = []

    def zagent_event(self, event):
        self.events.append(event)


def writer(k, reply):
    agent = k.agent({"name": "Writer", "prompt": "Write about {topic}", "inputs": [{"name": "topic"}],
                     "outputs": [{"name": "answer"}], "parse_mode": "str"})
    agent.llm = k.llm("scripted:long", replies=[reply])
    return agent


async def stall(turns=200):
    """Let every other task run as far as it can (no timers)."""
    for _ in range(turns):
        await asyncio.sleep(0)


@pytest.mark.timeout(120)
def test_a_fast_model_waits_for_a_consumer_that_stopped_reading(k):
    """Attack: a model streams a reply of 5,120 deltas (it never pauses: the scripted model yields them all at once)
    while the consumer reads one item and stops. Defence: the run waits once the stream holds ``MAX_QUEUED`` items,
    so it has not finished the reply (no ``llm_end``) while nobody reads; read on, every delta arrives in order."""
    recorder = Recorder()
    k.add_plugin(recorder)
    reply = " ".join(f"w{i}" for i in range(WORDS))

    async def go():
        stream = writer(k, reply).astream(topic="x")
        first = await stream.__anext__()
        await stall()
        stalled = [e.type for e in recorder.events]
        rest = [item async for item in stream]
        return stalled, [first, *rest]

    stalled, items = asyncio.run(go())
    assert "llm_start" in stalled and "llm_end" not in stalled
    assert "".join(i.text for i in items if i.type == "text") == reply
    assert items[-1].type == "result" and items[-1].result.answer == reply


@pytest.mark.timeout(120)
def test_closing_the_stream_cancels_a_run_waiting_for_room(k):
    """Attack: the consumer stops reading while the run waits for room in the full stream, then closes the
    iterator. Defence: no deadlock: ``aclose()`` returns, the run is cancelled (``run_end`` cancelled) and the
    stream's event observer is gone."""
    recorder = Recorder()
    k.add_plugin(recorder)

    async def go():
        stream = writer(k, " ".join(["word"] * WORDS)).astream(topic="x")
        await stream.__anext__()
        await stall()  # the run is now waiting for room
        await stream.aclose()

    asyncio.run(go())
    assert [e.data.get("status") for e in recorder.events if e.type == "run_end"] == ["cancelled"]
    assert [e.data.get("outcome") for e in recorder.events if e.type == "llm_end"] == ["cancelled"]
    assert k.stash.get(_RELAY) is None  # the stream's observer left with it


@pytest.mark.timeout(120)
def test_breaking_out_of_the_loop_cancels_a_waiting_run(k):
    """Attack: ``async for ... break`` while the run waits for room (the loop drops the iterator without an
    explicit ``aclose``). Defence: the iterator's finalizer cancels the run; ``asyncio.run`` ends (no hang)."""
    recorder = Recorder()
    k.add_plugin(recorder)

    async def go():
        async for _item in writer(k, " ".join(["word"] * WORDS)).astream(topic="x"):
            await stall()
            break
        await stall()

    asyncio.run(go())
    assert [e.data.get("status") for e in recorder.events if e.type == "run_end"] == ["cancelled"]


@pytest.mark.timeout(120)
def test_a_chatty_run_of_events_waits_too_and_loses_nothing(k):
    """Attack: a run sends 5,120 events as fast as it can (a chatty tool) to a consumer that stops reading. Defence:
    events wait for room as deltas do (the stream's observer hands the wait to the event's sender), so at most
    about ``MAX_QUEUED`` are sent while nobody reads; read on, all arrive, in order."""
    sent = []

    async def chatty():
        for n in range(WORDS):
            await k.aemit("tick", n=n)
            sent.append(n)
        return "done"

    async def go():
        stream = astream_run(k, chatty)
        first = await stream.__anext__()
        await stall()
        stalled = len(sent)
        rest = [item async for item in stream]
        return stalled, [first, *rest]

    stalled, items = asyncio.run(go())
    assert stalled <= MAX_QUEUED + 1
    assert [i.event.data["n"] for i in items if i.type == "event"] == list(range(WORDS))
    assert items[-1].result == "done"


@pytest.mark.timeout(120)
def test_a_consumer_that_keeps_up_never_makes_the_run_wait(k, monkeypatch):
    """The normal path stays as it was: a consumer reading as items come never finds the stream full, so the
    sink never hands back a wait (no extra task switches per delta)."""
    from zagent.agentkit import streaming

    waits = []
    real = streaming._Sink.__call__

    def counting(self, item):
        result = real(self, item)
        if result is not None:
            waits.append(item)
        return result

    monkeypatch.setattr(streaming._Sink, "__call__", counting)

    async def slow_model_run():
        for n in range(3 * MAX_QUEUED):
            await k.aemit("tick", n=n)
            await asyncio.sleep(0)  # a real model's deltas come over the network: the consumer gets a turn
        return "done"

    async def go():
        return [item async for item in astream_run(k, slow_model_run)]

    items = asyncio.run(go())
    assert waits == [] and len([i for i in items if i.type == "event"]) == 3 * MAX_QUEUED
