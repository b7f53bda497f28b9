"""``kernel.pending_tools``: tools registered after start-up are waited for on a miss, never at Kernel()."""

import asyncio
import threading

import zagent


def late_source(k, name="late.echo"):
    """A source that registers its tool from another thread once released; returns (release, calls)."""
    release = threading.Event()
    calls = []

    def register_later():
        release.wait(30)
        k.add_tool(lambda text: text, name=name, plugin="late-source")

    threading.Thread(target=register_later, daemon=True).start()

    def waiter(wanted):
        calls.append(wanted)
        release.set()
        for _ in range(3000):
            if name in k.registries["tools"]:
                return
            threading.Event().wait(0.01)

    k.pending_tools.add(waiter)
    return release, calls


def test_no_waiter_runs_while_names_are_found():
    """A lookup that finds its tool does not call any waiter."""
    k = zagent.Kernel(entry_points=False)
    k.add_tool(lambda: 1, name="now")
    release, calls = late_source(k)
    assert k.tool("now").name == "now"
    assert calls == [] and not release.is_set()


def test_a_miss_waits_then_finds_the_late_tool():
    """Kernel.tool() on an unknown name runs the waiters and finds the tool registered meanwhile."""
    k = zagent.Kernel(entry_points=False)
    _, calls = late_source(k)
    assert k.tool("late.echo").name == "late.echo"
    assert calls == ["late.echo"]


def test_the_async_tool_path_waits_too():
    """arun_tool with an unknown name waits (off the event loop) and runs the late tool."""
    k = zagent.Kernel(entry_points=False)
    late_source(k)
    result = asyncio.run(k.arun_tool({"name": "late.echo", "arguments": {"text": "hi"}}))
    assert result.state == "success" and result.content == "hi"


def test_listing_every_tool_waits_for_all_sources():
    """k.tools() runs the waiters with None (every tool) before listing."""
    k = zagent.Kernel(entry_points=False)
    _, calls = late_source(k)
    assert "late.echo" in [t.name for t in k.tools()] and calls == [None]


def test_late_tools_belong_to_their_plugin():
    """A tool added with plugin=... is attributed to it, so remove_plugin-style drops reach it."""
    k = zagent.Kernel(entry_points=False)
    k.add_tool(lambda: 1, name="mine", plugin="source")
    assert k.registries["tools"].entry("mine").plugin == "source"
