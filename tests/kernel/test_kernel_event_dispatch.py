"""Event dispatch (zagent._runs.spans, HookRunner.dispatch): sync observers called inline, async ones awaited,
every observer sees every event in order, whatever mix of sync, async and failing observers there is."""

import asyncio

import pytest

from zagent import Kernel


@pytest.fixture
def kernel():
    k = Kernel(entry_points=False)
    yield k
    k.close()


def observers(log):
    """Three observers, in pluggy order: A (sync), B (async, yields to the loop mid-way), C (sync)."""
    class A:
        def zagent_event(self, event):
            log.append(("A", event.type))

    class B:
        async def zagent_event(self, event):
            log.append(("B>", event.type))
            await asyncio.sleep(0)
            log.append(("B<", event.type))

    class C:
        def zagent_event(self, event):
            log.append(("C", event.type))

    return A(), B(), C()


def register(kernel, plugins):
    """Register so pluggy calls them in the given order (last registered is called first)."""
    for i, plugin in reversed(list(enumerate(plugins))):
        kernel.add_plugin(plugin, name=f"obs-{i}")


def test_sync_and_async_observers_get_every_event_in_order(kernel):
    """Each event reaches every observer in turn; an async observer finishes before the next observer or the
    next event sees anything, through ``ctx.aemit`` and ``kernel.aemit`` alike."""
    log = []
    register(kernel, observers(log))
    ctx = kernel.context(agent="a")

    async def go():
        await ctx.aemit("run_start")
        await kernel.aemit("tick", run_id=ctx.run_id, n=1)
        await ctx.aemit("run_end", status="completed")

    asyncio.run(go())
    expected = []
    for type in ("run_start", "tick", "run_end"):
        expected += [("A", type), ("B>", type), ("B<", type), ("C", type)]
    assert log == expected


def test_a_sync_observer_alone_needs_no_await(kernel):
    """With only sync observers ``HookRunner.dispatch`` has called them all by the time it returns (nothing to
    await), and the events carry their paired ids."""
    log = []
    register(kernel, observers(log)[::2])  # A and C
    from zagent._runs import spans
    from zagent.types import Event

    data = {"call_id": "c1"}
    span_id, parent, orphans = spans.tag("tool_start", data, kernel.span_owner)
    event = Event(type="tool_start", time=0.0, span_id=span_id, parent_id=parent, data=data)
    assert kernel.hooks.dispatch(kernel.hooks.impls("zagent_event"), event) is None
    assert log == [("A", "tool_start"), ("C", "tool_start")]
    spans.tag("tool_end", {"call_id": "c1"}, kernel.span_owner)


def test_failing_observers_do_not_stop_the_others(kernel, caplog):
    """A sync observer that raises and an async one that raises after a yield are logged; the observers after
    them still get the event, and the next event too."""
    log = []

    class SyncBroken:
        def zagent_event(self, event):
            log.append(("sync-broken", event.type))
            raise RuntimeError("sync observer bug")

    class AsyncBroken:
        async def zagent_event(self, event):
            log.append(("async-broken", event.type))
            await asyncio.sleep(0)
            raise RuntimeError("async observer bug")

    a, b, c = observers(log)
    register(kernel, [SyncBroken(), a, AsyncBroken(), b, c])
    ctx = kernel.context()

    async def go():
        await ctx.aemit("one")
        await ctx.aemit("two")

    asyncio.run(go())
    for type in ("one", "two"):
        assert [entry for entry in log if entry[1] == type] == [
            ("sync-broken", type), ("A", type), ("async-broken", type), ("B>", type), ("B<", type), ("C", type)]
    assert "sync observer bug" in caplog.text and "async observer bug" in caplog.text


def test_orphan_ends_reach_async_observers_before_the_end_that_closed_them(kernel):
    """Spans left open inside an ending span get their end events first, each seen by every observer (async
    ones awaited) before the next event."""
    log = []
    register(kernel, observers(log))
    seen = []

    class Keep:
        def zagent_event(self, event):
            seen.append(event)

    kernel.add_plugin(Keep(), name="keep")  # registered last: called first
    ctx = kernel.context()

    async def go():
        await ctx.aemit("run_start")
        await ctx.aemit("step_start", step=1)
        await ctx.aemit("tool_start", call_id="c1")
        await ctx.aemit("run_end", status="failed", error="boom")

    asyncio.run(go())
    assert [e.type for e in seen] == ["run_start", "step_start", "tool_start", "tool_end", "step_end", "run_end"]
    run, step, tool, tool_end, step_end, run_end = seen
    assert (tool_end.span_id, step_end.span_id, run_end.span_id) == (tool.span_id, step.span_id, run.span_id)
    assert tool_end.data["outcome"] == step_end.data["outcome"] == "error"
    types = [t for _, t in log]
    assert types == [t for t in ("run_start", "step_start", "tool_start", "tool_end", "step_end", "run_end")
                     for _ in range(4)]


def test_monitors_see_sync_and_async_observer_results(kernel):
    """``HookRunner.add_monitor`` still sees one call per observer and event, with what it returned."""
    log = []
    register(kernel, observers(log))
    calls = []
    kernel.hooks.add_monitor(lambda hook, plugin, kwargs, result: calls.append((hook, plugin, kwargs["event"].type)))
    asyncio.run(kernel.aemit("ping"))
    assert calls == [("zagent_event", f"obs-{i}", "ping") for i in range(3)]


def test_aemit_without_observers_does_nothing_and_is_a_coroutine(kernel):
    """With nobody listening ``ctx.aemit`` and ``kernel.aemit`` still return coroutines (``create_task`` takes
    them) that do nothing."""
    ctx = kernel.context()

    async def go():
        await asyncio.create_task(ctx.aemit("quiet", n=1))
        await asyncio.create_task(kernel.aemit("quiet", n=2))

    asyncio.run(go())
    log = []
    register(kernel, observers(log)[:1])

    async def again():
        await asyncio.create_task(ctx.aemit("heard"))

    asyncio.run(again())
    assert log == [("A", "heard")]


def test_llm_events_carry_the_context_run_id_and_go_to_the_llms_kernel():
    """An LLM call's ``llm_start``/``llm_end`` carry the run context's run id and agent, and reach the observers
    of the kernel the LLM belongs to, also when the context is another kernel's."""
    mine = Kernel(["zagent.plugins.offline"], entry_points=False)
    other = Kernel(["zagent.plugins.offline"], entry_points=False)
    seen, elsewhere = [], []

    class Keep:
        def __init__(self, into):
            self.into = into

        def zagent_event(self, event):
            self.into.append(event)

    mine.add_plugin(Keep(seen), name="keep")
    other.add_plugin(Keep(elsewhere), name="keep")
    llm = mine.llm("test:offline")
    try:
        for ctx in (mine.context(agent="me"), other.context(agent="them")):
            asyncio.run(llm.acomplete("hi", ctx=ctx))
            start, end = seen[-2:]
            assert (start.type, end.type) == ("llm_start", "llm_end")
            assert start.run_id == end.run_id == ctx.run_id and start.agent == end.agent == ctx.agent
            assert end.span_id == start.span_id and end.data["outcome"] == "ok"
        assert elsewhere == []
    finally:
        mine.close()
        other.close()
