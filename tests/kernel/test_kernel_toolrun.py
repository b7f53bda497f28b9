"""The tool-run path: validation, sync/async handlers, errors, timeouts, concurrency, availability."""

import asyncio
import threading

import pytest

from zagent import Kernel, ToolCall, ToolError, tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def aadd(a: int, b: int) -> int:
    """Add two integers, asynchronously."""
    return a + b


@tool
def explode() -> str:
    """Always fails."""
    raise ValueError("kaboom")


def kernel_with(*tools):
    k = Kernel(entry_points=False)
    for t in tools:
        k.add_tool(t)
    return k


def test_sync_tool_success():
    """A sync tool runs (in a worker thread) and its value becomes the result."""
    r = kernel_with(add).run_tool({"name": "add", "arguments": {"a": 2, "b": 3}})
    assert (r.state, r.value, r.content) == ("success", 5, "5")


def test_async_tool_success():
    """An async tool is awaited."""
    r = kernel_with(aadd).run_tool({"name": "aadd", "arguments": {"a": 2, "b": 3}})
    assert (r.state, r.value) == ("success", 5)


def test_call_id_is_kept():
    """The result carries the call's id, so the model can match it."""
    r = kernel_with(add).run_tool(ToolCall(id="c42", name="add", arguments={"a": 1, "b": 1}))
    assert r.call_id == "c42" and r.to_message().tool_call_id == "c42"


def test_structured_value_is_json_for_the_model():
    """A non-text value is given to the model as JSON."""
    k = kernel_with(tool(lambda: {"x": [1, 2]}, name="data"))
    assert k.run_tool({"name": "data", "arguments": {}}).content == '{"x":[1,2]}'


def test_wrong_argument_type_is_an_error_result():
    """Arguments of the wrong type give an ``error`` result the model can act on; the tool does not run."""
    r = kernel_with(add).run_tool({"name": "add", "arguments": {"a": "two", "b": 3}})
    assert r.state == "error" and "$.a" in r.content and r.content.startswith("Error:")


def test_tool_exception_is_an_error_result():
    """A tool raising gives an ``error`` result naming the exception; the caller does not crash."""
    r = kernel_with(explode).run_tool({"name": "explode", "arguments": {}})
    assert r.state == "error" and "ValueError: kaboom" in r.content


def test_unknown_tool_is_an_error_result_listing_tools():
    """Calling an unknown tool gives an ``error`` result naming the available tools."""
    r = kernel_with(add).run_tool({"name": "nope", "arguments": {}})
    assert r.state == "error" and "'nope'" in r.content and "add" in r.content


def test_unknown_tool_lookup_raises_for_programs():
    """``k.tool(name)`` raises ``ToolError`` for programs, naming the registered tools."""
    with pytest.raises(ToolError, match="registered tools: add"):
        kernel_with(add).tool("nope")


def test_hanging_async_tool_times_out():
    """An async tool exceeding its timeout gives a ``timeout`` result."""
    async def hang():
        await asyncio.Event().wait()
    r = kernel_with(tool(hang, timeout=0.05)).run_tool({"name": "hang", "arguments": {}})
    assert r.state == "timeout" and "did not finish" in r.content


def test_hanging_sync_tool_times_out():
    """A sync tool exceeding its timeout gives a ``timeout`` result (its thread is left to finish)."""
    release = threading.Event()
    k = kernel_with(tool(lambda: release.wait(), name="block", timeout=0.05))
    try:
        assert k.run_tool({"name": "block", "arguments": {}}).state == "timeout"
    finally:
        release.set()


def test_run_context_is_injected():
    """A tool asking for ``RunContext`` receives the run's context."""
    from zagent import RunContext

    def whoami(ctx: RunContext) -> str:
        """Say the agent."""
        return ctx.agent
    k = kernel_with(tool(whoami))
    assert k.run_tool({"name": "whoami", "arguments": {}}, k.context(agent="bob")).content == "bob"


def test_bad_call_object_raises_tool_error():
    """Something that is not a call (no name) raises ``ToolError`` saying what to give."""
    with pytest.raises(ToolError, match="'name'"):
        kernel_with(add).run_tool({"arguments": {}})


def _concurrency_probe():
    state = {"active": 0, "max": 0}

    async def probe() -> int:
        """Count how many run at once."""
        state["active"] += 1
        state["max"] = max(state["max"], state["active"])
        for _ in range(5):
            await asyncio.sleep(0)
        state["active"] -= 1
        return 1
    return state, tool(probe)


def test_max_concurrency_limits_parallel_calls():
    """``arun_tools(max_concurrency=2)`` never runs more than two calls at once."""
    state, probe = _concurrency_probe()
    k = kernel_with(probe)
    calls = [{"name": "probe", "arguments": {}, "id": f"c{i}"} for i in range(6)]
    results = asyncio.run(k.arun_tools(calls, max_concurrency=2))
    assert state["max"] == 2 and [r.call_id for r in results] == [f"c{i}" for i in range(6)]


def test_without_limit_calls_run_together():
    """Without a limit, all calls of a batch run at once."""
    state, probe = _concurrency_probe()
    k = kernel_with(probe)
    asyncio.run(k.arun_tools([{"name": "probe", "arguments": {}, "id": f"c{i}"} for i in range(6)]))
    assert state["max"] == 6


def test_config_sets_default_concurrency():
    """``config["max_tool_concurrency"]`` is the default limit of ``arun_tools``."""
    state, probe = _concurrency_probe()
    k = Kernel(entry_points=False, config={"max_tool_concurrency": 3})
    k.add_tool(probe)
    asyncio.run(k.arun_tools([{"name": "probe", "arguments": {}, "id": f"c{i}"} for i in range(6)]))
    assert state["max"] == 3


def test_zero_concurrency_is_refused():
    """``max_concurrency=0`` is refused rather than read as 'no limit'."""
    k = kernel_with(add)
    with pytest.raises(ValueError, match="at least 1"):
        asyncio.run(k.arun_tools([{"name": "add", "arguments": {"a": 1, "b": 1}}] * 2, max_concurrency=0))


def test_unavailable_tool_is_not_offered():
    """A tool whose availability check fails is left out of ``k.tools()`` but kept in the registry."""
    k = kernel_with(add, tool(lambda: 1, name="needs_key", available=lambda: False))
    assert [t.name for t in k.tools()] == ["add"]
    assert [t.name for t in k.tools(available_only=False)] == ["add", "needs_key"]


def test_availability_check_raising_counts_as_unavailable():
    """An availability check that raises makes the tool unavailable, not the kernel fail."""
    def check():
        raise RuntimeError("no network")
    assert not tool(lambda: 1, name="t", available=check).is_available()


def test_tools_selected_by_toolset():
    """``k.tools(toolset=...)`` selects one toolset."""
    k = kernel_with(add, tool(lambda: 1, name="mul", toolset="math"))
    assert [t.name for t in k.tools(toolset="math")] == ["mul"]


def test_add_tool_clash_raises():
    """``k.add_tool`` with a name already taken raises, naming the owner."""
    k = kernel_with(add)
    with pytest.raises(Exception, match="registered by both"):
        k.add_tool(tool(lambda: 1, name="add"))


def test_register_name_then_function_form():
    """``register("name", fn)`` is accepted as well as ``register(fn, name=...)``."""
    import types

    mod = types.ModuleType("form")
    mod.zagent_register_tools = lambda register: register("twice", lambda x: 2 * x)
    assert Kernel([mod], entry_points=False, strict=True).tool("twice").handler(2) == 4


def test_an_unavailable_tool_is_not_run_even_when_named():
    """A tool whose availability check is false gives an error result and its handler never runs."""
    ran = []

    def gated() -> str:
        """Only sometimes available."""
        ran.append(1)
        return "ran"
    k = kernel_with(tool(gated, available=lambda: False))
    r = k.run_tool({"name": "gated", "arguments": {}})
    assert r.state == "error" and "not available right now" in r.content
    assert ran == []
