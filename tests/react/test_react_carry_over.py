"""What a ReAct run carries across compression, failures and restores: nothing lost, nothing re-granted."""

import asyncio
import json

import msgspec
import pytest

from zagent import Kernel
from zagent.errors import NoAnswerError, ProviderError, RunAborted
from zagent.plugins.react import ReActLoop
from zagent import run_sync

from .conftest import PLUGINS, call


def _loop(kernel, replies, **kw):
    llm = kernel.llm("scripted:m", replies=replies)
    return ReActLoop(kernel=kernel, llm=llm, tools=["add"], **kw), llm


def test_a_failed_compression_is_a_recorded_step_error_and_the_run_goes_on(kernel):
    """With on_error='continue' a summary that fails (not a provider error) is recorded as an errored step;
    the next step retries."""
    loop, _ = _loop(kernel, [call("add", a=1, b=2), ValueError("summariser confused"),
                             "summary of the start", "3"], max_context_messages=3, keep_recent=1)
    result = loop.run("add 1 and 2")
    assert result.content == "3"
    failed = [s for s in result.steps if s.is_error]
    assert len(failed) == 1 and "compressing the context failed: summariser confused" in failed[0].reason
    assert result.state.status == "completed"


def test_a_provider_error_while_compressing_ends_the_run_with_it(kernel):
    """Even with on_error='continue', the summariser's provider error ends the run with that error
    (the provider already retried; every later step would ask the same failing model)."""
    loop, _ = _loop(kernel, [call("add", a=1, b=2), ProviderError("summariser down", provider="scripted"),
                             "summary of the start", "3"], max_context_messages=3, keep_recent=1)
    with pytest.raises(ProviderError, match="summariser down"):
        loop.run("add 1 and 2")
    assert loop.status == "failed"


def test_a_failed_compression_stops_the_run_under_on_error_stop(kernel):
    """With on_error='stop' a failed summary ends the run with NoAnswerError, status failed, not a bare traceback."""
    loop, _ = _loop(kernel, [call("add", a=1, b=2), ValueError("bad summary")],
                    max_context_messages=3, keep_recent=1, on_error="stop")
    with pytest.raises(NoAnswerError, match="compressing the context failed"):
        loop.run("add 1 and 2")
    assert loop.status == "failed"


def test_the_trajectory_keeps_what_compression_summarised(kernel, tmp_path):
    """After compression the JSONL trajectory still has the user's request and the first tool call, in order."""
    path = tmp_path / "t.jsonl"
    loop, _ = _loop(kernel, [call("add", a=1, b=2), call("add", a=3, b=4), "summary", "7"],
                    max_context_messages=5, keep_recent=2, trajectory_path=str(path))
    result = loop.run("add things")
    assert result.content == "7"
    line = json.loads(path.read_text().splitlines()[-1])
    values = [t["value"] for t in line["conversations"]]
    assert values.index("add things") < next(i for i, v in enumerate(values) if '"a":1' in v)
    assert any(v.startswith("Summary of the earlier conversation") for v in values)


def test_answer_steps_carry_their_time(kernel):
    """The final answer's step records how long the model took, like tool steps do."""
    loop, _ = _loop(kernel, ["done"])
    step = loop.run("hi").steps[-1]
    assert step.action == "direct_response" and step.duration > 0


def test_a_restored_run_keeps_its_tool_budget_and_rails():
    """A run paused after 2 of its 2 budgeted calls and restored (with the agent's rails, as a checkpoint
    carries none) does not get the budget back: the saved counts are kept."""
    k = Kernel(plugins=[*PLUGINS, "zagent.plugins.rails"], entry_points=False, strict=True)
    ran = []

    def add(a: int, b: int) -> int:
        """Add two integers."""
        ran.append((a, b))
        return a + b

    k.add_tool(add)
    first = ReActLoop(kernel=k, llm=k.llm("scripted:first", replies=[call("add", a=i, b=i) for i in range(4)]),
                      tools=["add"], agent_config={"rails": {"tool_budget": {"add": 2}}})
    rails = {"rails": {"tool_budget": {"add": 2}}}

    class PauseAfterTwo:
        def zagent_event(self, event):
            if event.type == "tool_end" and len(ran) == 2:
                first.pause()

    async def until_paused():
        task = asyncio.ensure_future(first.arun("add pairs"))
        await first.wait_for_status("paused")
        state = first.snapshot()
        first.abort()
        with pytest.raises(RunAborted):
            await task
        return state

    try:
        watcher = PauseAfterTwo()
        k.add_plugin(watcher, name="pause-after-two")
        state = run_sync(until_paused())
        k.remove_plugin(watcher)
        assert state.stash == {"zagent.rails.budget": {"add": 2}}
        second = ReActLoop.restore(k, msgspec.json.encode(state), tools=["add"], agent_config=rails, llm=k.llm(
            "scripted:second", replies=[call("add", a=2, b=2), call("add", a=3, b=3), "done"]))
        result = second.run()
        assert result.content == "done"
        assert ran == [(0, 0), (1, 1)]
        assert [s.is_blocked for s in result.steps if s.tool == "add"] == [False, False, True, True]
    finally:
        k.close()


def test_tool_retrieval_ranks_against_the_request_not_the_latest_tool_output(kernel):
    """In prompt mode, after a tool result (a user message) the tools offered still match the user's request."""
    chosen = []

    def weather_forecast(city: str) -> str:
        """Weather forecast for a city."""
        return "rain; for currency_convert: exchange rates, convert money, dollars, euros, currency"

    def currency_convert(amount: float) -> str:
        """Convert money between currencies: exchange rates, dollars, euros."""
        return "0"

    kernel.add_tool(weather_forecast)
    kernel.add_tool(currency_convert)
    llm = kernel.llm("scripted:m", replies=[call("weather_forecast", city="Oslo"), "sunny"],
                     profile={"native_tools": False})
    loop = ReActLoop(kernel=kernel, llm=llm, tools=["add", "weather_forecast", "currency_convert"], tool_limit=1)
    real = loop._offered_tools

    async def spy():
        tools = await real()
        chosen.append([t.name for t in tools])
        return tools

    loop._offered_tools = spy
    assert loop.run("what is the weather forecast in Oslo?").content == "sunny"
    assert chosen == [["weather_forecast"], ["weather_forecast"]]
