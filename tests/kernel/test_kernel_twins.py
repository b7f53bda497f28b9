"""Sync twins and emit naming: ``LLM.send``/``asend``, ``Kernel.run_tools``/``arun_tools``,
``emit`` (sync) / ``aemit`` (async) on both ``Kernel`` and ``RunContext``."""

import asyncio

import pytest

from zagent import Kernel, ToolCall


class Recorder:
    def __init__(self):
        self.events, self.requests = [], []

    def zagent_event(self, event):
        self.events.append(event)

    def zagent_before_llm_call(self, request, ctx):
        self.requests.append((request, ctx.run_id))


@pytest.fixture
def kernel():
    k = Kernel(plugins=["zagent.plugins.offline"], entry_points=False, strict=True)
    yield k
    k.close()


def test_llm_send_is_the_sync_twin_of_asend(kernel):
    """send(request, ctx) returns the completion, with rails and events as asend (run id of ctx)."""
    rec = Recorder()
    kernel.add_plugin(rec, name="rec")
    llm = kernel.llm("scripted:twin", replies=["hello"])
    ctx = kernel.context()
    completion = llm.send(llm.request("hi"), ctx)
    assert completion.text == "hello"
    assert [r[1] for r in rec.requests] == [ctx.run_id]
    assert [e.type for e in rec.events] == ["llm_start", "llm_end"] and rec.events[0].run_id == ctx.run_id


def test_kernel_run_tools_is_the_sync_twin_of_arun_tools(kernel):
    """run_tools runs several calls (dicts or ToolCalls) and returns results in the calls' order."""

    def double(x: int) -> int:
        """Double x."""
        return 2 * x

    kernel.add_tool(double)
    results = kernel.run_tools([ToolCall(id="a", name="double", arguments={"x": 3}),
                                {"id": "b", "name": "double", "arguments": {"x": 5}}], max_concurrency=1)
    assert [(r.call_id, r.value) for r in results] == [("a", 6), ("b", 10)]


def test_runcontext_emit_is_sync_and_tags_the_run(kernel):
    """ctx.emit(...) from sync code sends the event at once, with the run's id and agent, like Kernel.emit."""
    rec = Recorder()
    kernel.add_plugin(rec, name="rec")
    ctx = kernel.context(agent="writer")
    assert ctx.emit("note", text="x") is None
    [event] = rec.events
    assert (event.type, event.run_id, event.agent, event.data) == ("note", ctx.run_id, "writer", {"text": "x"})


def test_kernel_emit_accepts_run_id_and_agent(kernel):
    """Kernel.emit(type, run_id=..., agent=...) tags the event, as Kernel.aemit does."""
    rec = Recorder()
    kernel.add_plugin(rec, name="rec")
    kernel.emit("note", run_id="r1", agent="a", n=1)
    assert [(e.run_id, e.agent, e.data) for e in rec.events] == [("r1", "a", {"n": 1})]


def test_runcontext_aemit_is_the_async_one(kernel):
    """await ctx.aemit(...) sends the event from async code."""
    rec = Recorder()
    kernel.add_plugin(rec, name="rec")
    ctx = kernel.context()

    async def main():
        await ctx.aemit("note", n=2)

    asyncio.run(main())
    assert [(e.type, e.run_id) for e in rec.events] == [("note", ctx.run_id)]


def test_runcontext_emit_in_an_app_loop_is_sync_like_kernel_emit(kernel):
    """ctx.emit(...) called inside an app's running loop sends the event before returning (None), as
    Kernel.emit does there; it no longer hands back an awaitable."""
    rec = Recorder()
    kernel.add_plugin(rec, name="rec")
    ctx = kernel.context()

    async def main():
        returned = ctx.emit("note", n=3)
        return returned, [e.data for e in rec.events]

    assert asyncio.run(main()) == (None, [{"n": 3}])
