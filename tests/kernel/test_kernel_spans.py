"""Paired events: span ids, parents, durations, outcomes and usage the kernel adds (zagent._runs.spans)."""

import asyncio

import pytest

from zagent import Kernel, PluginError, tool


class Seen:
    """An observer keeping every event."""

    def __init__(self):
        self.events = []

    def zagent_event(self, event):
        self.events.append(event)

    def of(self, type):
        return [e for e in self.events if e.type == type]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture
def kernel():
    k = Kernel(["zagent.plugins.offline"], entry_points=False, strict=True)
    yield k
    k.close()


def test_start_and_end_share_a_span_id_and_end_carries_duration_outcome_usage(kernel):
    """A ``<kind>_start`` and its ``<kind>_end`` carry one span id; the end has duration, outcome and usage."""
    seen = Seen()
    kernel.add_plugin(seen)
    kernel.emit("job_start", name="x")
    kernel.emit("job_end", name="x")
    start, end = seen.events
    assert start.span_id and start.span_id == end.span_id and start.parent_id is None
    assert end.data["duration"] >= 0 and end.data["outcome"] == "ok"
    assert end.data["usage"] == {"input_tokens": 0, "output_tokens": 0, "llm_calls": 0}


def test_spans_nest_and_an_llm_call_s_tokens_count_for_its_ancestors(kernel):
    """An LLM call inside a step inside a run: parents chain, and run_end's usage includes the call's tokens."""
    seen = Seen()
    kernel.add_plugin(seen)
    llm = kernel.llm("test:offline")
    ctx = kernel.context()

    async def run():
        await ctx.aemit("run_start")
        await ctx.aemit("step_start", step=1)
        await llm.acomplete("hello", ctx=ctx)
        await ctx.aemit("step_end", step=1)
        await ctx.aemit("run_end", status="completed")

    asyncio.run(run())
    run_start, step_start, llm_start = seen.of("run_start")[0], seen.of("step_start")[0], seen.of("llm_start")[0]
    llm_end, run_end = seen.of("llm_end")[0], seen.of("run_end")[0]
    assert step_start.parent_id == run_start.span_id and llm_start.parent_id == step_start.span_id
    assert llm_end.span_id == llm_start.span_id
    tokens = llm_end.data["input_tokens"], llm_end.data["output_tokens"]
    assert tokens[0] > 0 and run_end.data["usage"]["input_tokens"] == tokens[0]
    assert run_end.data["usage"]["output_tokens"] == tokens[1] and run_end.data["usage"]["llm_calls"] == 1


def test_parallel_tool_calls_are_siblings_under_the_span_that_started_them(kernel):
    """Tool calls gathered in parallel each get their own span, all children of the enclosing step."""
    seen = Seen()
    kernel.add_plugin(seen)
    kernel.add_tool(add)
    ctx = kernel.context()

    async def run():
        await ctx.aemit("step_start", step=1)
        await kernel.arun_tools([{"name": "add", "arguments": {"a": i, "b": 1}} for i in range(3)], ctx)
        await ctx.aemit("step_end", step=1)

    asyncio.run(run())
    step = seen.of("step_start")[0].span_id
    starts, ends = seen.of("tool_start"), seen.of("tool_end")
    assert len({e.span_id for e in starts}) == 3 and {e.parent_id for e in starts + ends} == {step}
    assert {e.span_id for e in starts} == {e.span_id for e in ends}


def test_a_failed_tool_call_ends_with_outcome_error(kernel):
    """A tool that raises: its tool_end has outcome ``error``."""
    seen = Seen()
    kernel.add_plugin(seen)

    def boom() -> str:
        """Fail."""
        raise RuntimeError("no")

    kernel.add_tool(boom)
    kernel.run_tool({"name": "boom", "arguments": {}})
    assert seen.of("tool_end")[0].data["outcome"] == "error"


def test_an_llm_call_that_raises_still_ends_its_span_with_the_error(kernel):
    """A provider error: llm_end is sent with outcome ``error`` and the exception named, then it propagates."""
    seen = Seen()
    kernel.add_plugin(seen)
    llm = kernel.llm("scripted:x", replies=[])
    with pytest.raises(Exception) as info:
        llm.complete("hi")
    end = seen.of("llm_end")[0]
    assert end.span_id == seen.of("llm_start")[0].span_id and end.data["outcome"] == "error"
    assert type(info.value).__name__ in end.data["error"]


def test_a_span_left_open_is_ended_before_its_parent(kernel):
    """A step whose owner raised before step_end: run_end first sends the step's end, outcome error."""
    seen = Seen()
    kernel.add_plugin(seen)
    ctx = kernel.context()

    async def run():
        await ctx.aemit("run_start")
        await ctx.aemit("step_start", step=1)
        await ctx.aemit("run_end", status="failed", error="boom")

    asyncio.run(run())
    types = [e.type for e in seen.events]
    assert types == ["run_start", "step_start", "step_end", "run_end"]
    assert seen.events[2].span_id == seen.events[1].span_id and seen.events[2].data["outcome"] == "error"
    assert seen.events[3].data["outcome"] == "error"


def test_point_events_get_the_open_span_as_parent_and_no_span_id(kernel):
    """An event that is neither start nor end is tagged with the innermost open span."""
    seen = Seen()
    kernel.add_plugin(seen)
    kernel.emit("chat_start")
    kernel.emit("speaker_selected", speaker="A")
    assert seen.events[1].span_id is None and seen.events[1].parent_id == seen.events[0].span_id


def test_an_end_for_another_node_does_not_close_the_open_one(kernel):
    """node_end for node B (skipped, never started) leaves node A's span open and unpaired."""
    seen = Seen()
    kernel.add_plugin(seen)
    kernel.emit("node_start", node="A")
    kernel.emit("node_end", node="B", status="skipped")
    kernel.emit("node_end", node="A", status="done")
    a, b, a_end = seen.events
    assert b.span_id is None and b.parent_id == a.span_id and a_end.span_id == a.span_id


def test_nothing_is_computed_when_nobody_listens(kernel, monkeypatch):
    """Without a zagent_event implementation the pairing code never runs."""
    from zagent._runs import spans

    def fail(*args, **kwargs):
        raise AssertionError("spans.tag ran without listeners")

    monkeypatch.setattr(spans, "tag", fail)
    kernel.add_tool(add)
    kernel.emit("run_start")
    assert kernel.run_tool({"name": "add", "arguments": {"a": 1, "b": 2}}).content == "3"
    kernel.llm("test:offline").complete("hi")


def test_kernel_start_runs_once_per_plugin_after_registrations(kernel):
    """zagent_kernel_start sees the plugin's registrations done, and may add an observer."""
    calls = []

    class Plugin:
        def zagent_register_tools(self, register):
            register(add)

        def zagent_kernel_start(self, kernel):
            calls.append("add" in kernel.registries["tools"])
            kernel.add_plugin(Seen(), name="plugin.observer")

    kernel.add_plugin(Plugin())
    assert calls == [True] and kernel.pm.has_plugin("plugin.observer")


def test_kernel_start_that_raises_is_a_plugin_problem():
    """A zagent_kernel_start that raises is reported (strict: PluginError naming the hook)."""

    class Broken:
        def zagent_kernel_start(self):
            raise RuntimeError("no config")

    k = Kernel(entry_points=False)
    k.add_plugin(Seen())
    with pytest.raises(PluginError, match="zagent_kernel_start"):
        k.add_plugin(Broken())
    k.close()


def test_a_span_another_kernel_left_open_does_not_adopt_this_kernel_s_events(kernel):
    """Kernel A leaves run_start open in this thread; kernel B's events still start at the top."""
    other = Kernel(entry_points=False)
    other.add_plugin(Seen())
    other.emit("run_start")  # never ended
    seen = Seen()
    kernel.add_plugin(seen)
    kernel.emit("run_start")
    kernel.emit("run_end")
    assert seen.events[0].parent_id is None and seen.events[1].span_id == seen.events[0].span_id
    other.emit("run_end")
    other.close()


def test_a_new_kernel_at_a_dead_kernels_address_does_not_adopt_its_open_spans():
    """Spans pair by a per-kernel token that is never reused, not by id(): a kernel created where a
    closed one lived starts its events at the top even if the old one left a span open in this thread."""
    import gc

    seen_old = Seen()
    old = Kernel(entry_points=False)
    old.add_plugin(seen_old)
    old.emit("run_start")  # never ended
    old_token, old_id = old.span_owner, id(old)
    old.close()
    del old
    gc.collect()
    for _ in range(200):  # try to land on the same address
        k = Kernel(entry_points=False)
        if id(k) == old_id:
            break
    assert k.span_owner != old_token
    seen = Seen()
    k.add_plugin(seen)
    k.emit("run_start")
    k.emit("run_end")
    assert seen.events[0].parent_id is None
