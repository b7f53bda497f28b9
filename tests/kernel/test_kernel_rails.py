"""Rails and events on the tool-run path, observed with the testing kit's ``HookRecorder``."""

import asyncio

from zagent import Deny, Kernel, Rewrite, ToolResult, hookimpl, tool
from zagent.testing import HookRecorder


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Rail:
    """A plugin whose before/after rails are set per test."""

    def __init__(self, before=None, after=None):
        self.before, self.after = before, after

    def zagent_before_tool_call(self, call, ctx):
        return self.before(call, ctx) if self.before else None

    def zagent_after_tool_call(self, call, result, ctx):
        return self.after(call, result, ctx) if self.after else None


def run_add(*plugins, a=2, b=3):
    k = Kernel(list(plugins), entry_points=False, strict=True)
    k.add_tool(add)
    return k, k.run_tool({"name": "add", "arguments": {"a": a, "b": b}})


def test_deny_blocks_with_reason():
    """A rail returning ``Deny(reason)`` blocks the call; the result says why and the tool never runs."""
    _, r = run_add(Rail(before=lambda call, ctx: Deny("no adding on Sundays")))
    assert (r.state, r.error) == ("blocked", "no adding on Sundays") and r.value is None


def test_rewrite_replaces_arguments():
    """A rail returning ``Rewrite(arguments)`` changes what the tool receives."""
    _, r = run_add(Rail(before=lambda call, ctx: Rewrite({"a": 10, "b": 1})))
    assert r.value == 11


def test_rewrite_is_validated_again():
    """Rewritten arguments are validated again; invalid ones give an error result."""
    _, r = run_add(Rail(before=lambda call, ctx: Rewrite({"a": "ten"})))
    assert r.state == "error" and "rewrote" in r.content


def test_rail_raising_fails_closed():
    """A rail that raises blocks the call, with a reason naming the rail."""
    def broken(call, ctx):
        raise KeyError("oops")
    _, r = run_add(Rail(before=broken))
    assert r.state == "blocked" and "Rail-" in r.error and "KeyError" in r.error


def test_rail_returning_garbage_fails_closed():
    """A rail answering something other than None/Deny/Rewrite blocks the call."""
    _, r = run_add(Rail(before=lambda call, ctx: "yes please"))
    assert r.state == "blocked" and "expected None, Deny or Rewrite" in r.error


def test_rewrite_to_non_dict_fails_closed():
    """A ``Rewrite`` whose arguments are not a dict blocks the call instead of crashing the caller."""
    _, r = run_add(Rail(before=lambda call, ctx: Rewrite("a=1")))
    assert r.state == "blocked" and "needs a dict" in r.error


def test_after_rail_returning_garbage_withholds_result():
    """An after-rail answering something other than None/ToolResult withholds the result."""
    _, r = run_add(Rail(after=lambda call, result, ctx: "fine"), a=123000, b=456)
    assert r.state == "blocked" and "123456" not in r.content


def test_async_rail_is_awaited():
    """A rail may be ``async``; its answer is awaited."""
    class AsyncRail:
        async def zagent_before_tool_call(self, call):
            await asyncio.sleep(0)
            return Deny("async no")
    _, r = run_add(AsyncRail())
    assert r.error == "async no"


def test_rails_see_validated_arguments():
    """Rails see arguments after validation, defaults filled in and types converted."""
    seen = []
    def record(call, ctx):
        seen.append(call.arguments)
    k = Kernel([Rail(before=record)], entry_points=False)
    k.add_tool(tool(lambda n=1: n, name="t"))

    def typed(a: int, b: int = 7) -> int:
        """T."""
        return a + b
    k.add_tool(typed)
    k.run_tool({"name": "typed", "arguments": {"a": "3"}})
    assert seen == [{"a": 3, "b": 7}]


def test_first_deny_stops_later_rails():
    """After a deny, later rails are not asked (an approval rail never prompts for a denied call)."""
    asked = []

    class Approver:
        @hookimpl(trylast=True)
        def zagent_before_tool_call(self, call):
            asked.append(call.name)

    run_add(Approver(), Rail(before=lambda call, ctx: Deny("no")))
    assert asked == []


def test_after_rail_replaces_result():
    """An after-rail returning a ``ToolResult`` replaces the result the model sees."""
    def redact(call, result, ctx):
        return ToolResult(call_id=result.call_id, name=result.name, state="success", content="[redacted]")
    _, r = run_add(Rail(after=redact))
    assert r.content == "[redacted]"


def test_after_rail_sees_rewritten_call():
    """After-rails see the call as it ran, after any rewrite."""
    seen = []
    rail = Rail(before=lambda call, ctx: Rewrite({"a": 1, "b": 1}),
                after=lambda call, result, ctx: seen.append(call.arguments))
    run_add(rail)
    assert seen == [{"a": 1, "b": 1}]


def test_after_rail_raising_withholds_result():
    """An after-rail that raises withholds the result (fail closed)."""
    def broken(call, result, ctx):
        raise RuntimeError("scanner down")
    _, r = run_add(Rail(after=broken), a=123000, b=456)
    assert r.state == "blocked" and "scanner down" in r.error and "123456" not in r.content


def test_recorder_sees_before_tool_call_arguments():
    """The hook recorder asserts in one line what ``zagent_before_tool_call`` was called with."""
    k = Kernel(entry_points=False)
    k.add_tool(add)
    rec = HookRecorder(k)
    k.run_tool({"name": "add", "arguments": {"a": 1, "b": 2}})
    rec.assert_called("zagent_before_tool_call", call=lambda c: c.arguments == {"a": 1, "b": 2})
    rec.assert_called("zagent_after_tool_call", result=lambda r: r.value == 3)


def test_tool_events_are_emitted():
    """``tool_start`` and ``tool_end`` events surround every call, tagged with the run id."""
    k = Kernel(entry_points=False)
    k.add_tool(add)
    rec = HookRecorder(k)
    ctx = k.context()
    k.run_tool({"name": "add", "arguments": {"a": 1, "b": 2}}, ctx)
    assert [e.type for e in rec.events()] == ["tool_start", "tool_end"]
    end = rec.events("tool_end")[0]
    assert (end.run_id, end.data["state"], end.data["tool"]) == (ctx.run_id, "success", "add")


def test_blocked_call_event_says_blocked():
    """The ``tool_end`` event of a denied call has state ``blocked``."""
    k = Kernel([Rail(before=lambda call, ctx: Deny("no"))], entry_points=False)
    k.add_tool(add)
    rec = HookRecorder(k)
    k.run_tool({"name": "add", "arguments": {"a": 1, "b": 2}})
    assert rec.events("tool_end")[0].data["state"] == "blocked"


def test_event_observer_error_never_breaks_the_run():
    """An event observer that raises is logged; the tool call still succeeds."""
    class Broken:
        def zagent_event(self, event):
            raise RuntimeError("observer bug")
    _, r = run_add(Broken())
    assert r.state == "success"


def test_emit_reaches_async_observers():
    """``k.emit`` sends plugin-defined events; async observers are awaited."""
    seen = []

    class Observer:
        async def zagent_event(self, event):
            seen.append((event.type, event.data))
    k = Kernel([Observer()], entry_points=False)
    k.emit("custom", answer=42)
    assert seen == [("custom", {"answer": 42})]


def test_llm_rails_run_in_order():
    """``zagent_before_llm_call``/``zagent_after_llm_call`` rails may replace the request and the reply."""
    from zagent import Completion, LLMRequest, Message

    class LLMRails:
        def zagent_before_llm_call(self, request, ctx):
            return LLMRequest(model=request.model, messages=[Message.user("rewritten")])

        def zagent_after_llm_call(self, request, response, ctx):
            return Completion(message=Message.assistant("saw " + request.messages[0].content))
    k = Kernel([LLMRails()], entry_points=False)
    ctx = k.context()

    async def go():
        request = await k.hooks.before_llm(LLMRequest(model="m", messages=[Message.user("hi")]), ctx)
        return await k.hooks.after_llm(request, Completion(message=Message.assistant("x")), ctx)
    assert asyncio.run(go()).text == "saw rewritten"


def test_llm_deny_raises_tool_blocked():
    """A deny from ``zagent_before_llm_call`` raises ``ToolBlocked`` naming the rail."""
    import pytest

    from zagent import LLMRequest, Message, ToolBlocked

    class NoLLM:
        def zagent_before_llm_call(self, request):
            return Deny("budget spent")
    k = Kernel([NoLLM()], entry_points=False)
    with pytest.raises(ToolBlocked, match="budget spent"):
        asyncio.run(k.hooks.before_llm(LLMRequest(model="m", messages=[Message.user("hi")]), k.context()))


def test_kernel_close_hook_runs():
    """``zagent_kernel_close`` runs once when the kernel closes."""
    closed = []

    class Closer:
        def zagent_kernel_close(self, kernel):
            closed.append(kernel)
    k = Kernel([Closer()], entry_points=False)
    k.close()
    k.close()
    assert closed == [k]
