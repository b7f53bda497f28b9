"""``tool_rpm``: calls per minute per tool, shared by the kernel's runs; waits for a slot or denies (issue 17, item 5)."""

import asyncio


from zagent import Kernel
from zagent.plugins.rails.ratelimit import WINDOWS, RateWindows


class FakeClock:
    def __init__(self):
        self.now = 1000.0
        self.slept = []

    def __call__(self):
        return self.now

    async def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def make(rails=None):
    k = Kernel(plugins=["zagent.plugins.rails"], entry_points=False, config={"rails": rails} if rails else None)
    calls = []
    k.add_tool(lambda q: calls.append(q) or q, name="search", toolset="web")
    clock = FakeClock()
    k.stash[WINDOWS] = RateWindows(clock=clock, sleep=clock.sleep)
    return k, calls, clock


def call(k, ctx=None, q="x"):
    return k.run_tool({"name": "search", "arguments": {"q": q}}, ctx)


def test_calls_under_the_limit_run_at_once():
    """Up to N calls in a minute run without waiting."""
    k, calls, clock = make({"tool_rpm": {"search": 3}})
    assert [call(k).state for _ in range(3)] == ["success"] * 3
    assert clock.slept == []


def test_the_next_call_waits_for_the_oldest_to_leave_the_window():
    """The (N+1)th call in a minute waits until the first is 60 s old, then runs."""
    k, calls, clock = make({"tool_rpm": {"search": 2}})
    call(k)
    clock.now += 10
    call(k)
    assert call(k).state == "success"
    assert clock.slept == [50.0] and len(calls) == 3


def test_without_waiting_the_call_is_denied_with_the_limit_named():
    """With tool_rpm_wait false, a call over the limit is blocked, naming the limit and when to retry."""
    k, calls, clock = make({"tool_rpm": {"toolset:web": 1}, "tool_rpm_wait": False})
    call(k)
    result = call(k)
    assert result.state == "blocked" and "1 per minute" in result.content and "toolset:web" in result.content
    assert len(calls) == 1


def test_the_kernel_limit_is_shared_by_every_run():
    """Runs of different agents share the kernel's window."""
    k, calls, clock = make({"tool_rpm": {"*": 1}, "tool_rpm_wait": False})
    assert call(k, k.context(agent="a")).state == "success"
    assert call(k, k.context(agent="b")).state == "blocked"


def test_an_agent_limit_tightens_and_counts_per_agent():
    """An agent's own tool_rpm applies to its calls only; the kernel's higher limit still counts everyone."""
    k, calls, clock = make({"tool_rpm": {"search": 10}, "tool_rpm_wait": False})
    tight = {"rails": {"tool_rpm": {"search": 1}}}
    assert call(k, k.context(agent="a", agent_config=tight)).state == "success"
    assert call(k, k.context(agent="a", agent_config=tight)).state == "blocked"
    assert call(k, k.context(agent="b")).state == "success"


def test_an_agent_cannot_raise_the_kernel_limit():
    """An agent asking for more calls per minute than the kernel allows still meets the kernel's limit."""
    k, calls, clock = make({"tool_rpm": {"search": 1}, "tool_rpm_wait": False})
    loose = {"rails": {"tool_rpm": {"search": 100}}}
    call(k, k.context(agent="a", agent_config=loose))
    assert call(k, k.context(agent="a", agent_config=loose)).state == "blocked"


def test_a_denied_call_uses_no_slot():
    """A call denied by another rail (deny list) before the rate check does not take a slot."""
    k, calls, clock = make({"tool_rpm": {"*": 1}, "tool_rpm_wait": False})
    denied = {"rails": {"deny_tools": ["search"]}}
    assert call(k, k.context(agent="a", agent_config=denied)).state == "blocked"
    assert call(k).state == "success"


def test_concurrent_calls_respect_the_window():
    """Many calls at once: exactly N run in the first minute, the rest wait for a later window."""
    k, calls, clock = make({"tool_rpm": {"search": 3}})

    async def many():
        return await asyncio.gather(*(k.arun_tool({"name": "search", "arguments": {"q": str(i)}}) for i in range(5)))

    times = []
    k.remove_tool("search")
    # inline: the tool notes the fake clock as it runs; in a tool thread it may run after another call's fake
    # sleep has moved the clock a minute on, which says nothing about the limiter
    k.add_tool(lambda q: times.append(clock.now) or q, name="search", toolset="web", inline=True)
    results = asyncio.run(many())
    assert [r.state for r in results] == ["success"] * 5
    assert clock.slept and all(s > 0 for s in clock.slept)
    assert all(sum(1 for u in times if t <= u < t + 60) <= 3 for t in times)
