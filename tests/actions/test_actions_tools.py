"""The CustomizeAction tool loop: native and prompt modes, concurrency limit, errors, max_steps."""

import asyncio
import threading

import pytest

from zagent import ConfigError, Deny, NoAnswerError

from .conftest import qa_spec

CALL = {"content": None, "tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}


def test_native_tool_call_runs_and_result_goes_back(kernel):
    """A native tool call runs through the kernel and its result is sent back as a tool message."""
    llm = kernel.llm("scripted:m", replies=[CALL, "5"])
    agent = kernel.agent(qa_spec(tools=["add"]))
    agent.llm = llm
    result = agent(question="2+3?")
    assert result.answer == "5"
    assert [r.value for r in result.tool_results] == [5]
    second = llm.requests[1]
    assert second.messages[-1].role == "tool" and second.messages[-1].content == "5"
    assert [t.name for t in llm.requests[0].tools] == ["add"]


def test_prompt_mode_when_model_lacks_native_tools(kernel):
    """With native_tools=False, tools are described in the prompt and calls are read from text."""
    llm = kernel.llm("scripted:m", replies=[CALL, "5"], profile={"native_tools": False})
    agent = kernel.agent(qa_spec(tools=["add"]))
    agent.llm = llm
    assert agent(question="2+3?").answer == "5"
    first = llm.requests[0]
    assert first.tools == []
    assert "add" in first.messages[0].content and first.messages[0].role == "system"
    assert "<tool_result" in llm.requests[1].messages[-1].content
    assert ">\n5\n</tool_result>" in llm.requests[1].messages[-1].content


def test_malformed_prompt_mode_call_is_told_to_the_model(kernel):
    """A malformed text tool call is reported back to the model, not dropped."""
    llm = kernel.llm("scripted:m", replies=['<tool_call>{"name": "add", "arguments": {oops</tool_call>', "ok"],
                     profile={"native_tools": False})
    agent = kernel.agent(qa_spec(tools=["add"]))
    agent.llm = llm
    assert agent(question="q").answer == "ok"
    assert "could not be read" in llm.requests[1].messages[-1].content


def test_tool_error_goes_back_to_model(kernel):
    """Bad tool arguments become an error message the model reads; the loop continues."""
    bad = {"tool_calls": [{"name": "add", "arguments": {"a": "two", "b": 3}}]}
    llm = kernel.llm("scripted:m", replies=[bad, "sorry"])
    agent = kernel.agent(qa_spec(tools=["add"]))
    agent.llm = llm
    result = agent(question="q")
    assert result.tool_results[0].state == "error"
    assert llm.requests[1].messages[-1].content.startswith("Error: invalid arguments")


def test_rail_blocked_call_is_told_to_model(kernel):
    """A rail's deny reaches the model as a blocked result through the same tool path."""
    class NoAdd:
        def zagent_before_tool_call(self, call, ctx):
            return Deny("adding is not allowed here")

    kernel.add_plugin(NoAdd())
    llm = kernel.llm("scripted:m", replies=[CALL, "cannot"])
    agent = kernel.agent(qa_spec(tools=["add"]))
    agent.llm = llm
    result = agent(question="q")
    assert result.tool_results[0].state == "blocked"
    assert "not allowed" in llm.requests[1].messages[-1].content


def test_concurrent_tool_calls_respect_the_limit(kernel):
    """max_tool_call_concurrency bounds how many calls of one step run at once."""
    state = {"now": 0, "peak": 0}
    lock = threading.Lock()

    async def probe(i: int) -> int:
        """Record concurrency."""
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        await asyncio.sleep(0.02)
        with lock:
            state["now"] -= 1
        return i

    kernel.add_tool(probe)
    calls = {"tool_calls": [{"name": "probe", "arguments": {"i": i}} for i in range(6)]}
    agent = kernel.agent(qa_spec(tools=["probe"], max_tool_call_concurrency=2))
    agent.llm = kernel.llm("scripted:m", replies=[calls, "done"])
    result = agent(question="q")
    assert [r.value for r in result.tool_results] == list(range(6))
    assert state["peak"] == 2


def test_max_steps_raises_no_answer_with_trajectory(kernel):
    """Past max_steps a NoAnswerError carries the partial trajectory."""
    agent = kernel.agent(qa_spec(tools=["add"], max_steps=3))
    agent.llm = kernel.llm("scripted:m", replies=[CALL, CALL, CALL])
    with pytest.raises(NoAnswerError) as info:
        agent(question="q")
    assert info.value.limit == "max_steps"
    assert sum(1 for m in info.value.trajectory if m.role == "tool") == 3


def test_unavailable_tool_is_not_offered(kernel):
    """A tool whose availability check fails is left out of the request."""
    def secret() -> str:
        """Never offered."""
        return "x"

    kernel.add_tool(secret, available=lambda: False)
    agent = kernel.agent(qa_spec(tools=["add", "secret"]))
    agent.llm = kernel.llm("scripted:m", replies=["hi"])
    agent(question="q")
    assert [t.name for t in agent.llm.requests[0].tools] == ["add"]


def test_third_party_tool_plugin_used_by_declared_agent(kernel):
    """A tool registered by another plugin through zagent_register_tools is usable by name."""
    class WeatherPlugin:
        def zagent_register_tools(self, register):
            def weather(city: str) -> str:
                """Weather for a city."""
                return f"sunny in {city}"
            register(weather, toolset="weather")

    kernel.add_plugin(WeatherPlugin())
    call = {"tool_calls": [{"name": "weather", "arguments": {"city": "Oslo"}}]}
    agent = kernel.agent(qa_spec(tools=["weather"]))
    agent.llm = kernel.llm("scripted:m", replies=[call, "It is sunny."])
    result = agent(question="weather?")
    assert result.tool_results[0].content == "sunny in Oslo"


def test_customize_action_subclass_aexecute_still_runs_through_an_agent(kernel):
    """An agent runs a CustomizeAction subclass through the subclass's own ``aexecute`` (the agent's
    shortcut to the run's coroutine, ``Action.start``, honours an override)."""
    from zagent.plugins.actions import CustomizeAction
    from zagent.plugins.actions.agent import Agent

    seen = []

    class Counted(CustomizeAction):
        async def aexecute(self, llm, inputs, **kw):
            seen.append(inputs["question"])
            return await super().aexecute(llm, inputs, **kw)

    action = Counted(kernel=kernel, name="answer", prompt="{question}", parse_mode="str",
                     inputs=[{"name": "question"}], outputs=[{"name": "answer"}])
    agent = Agent(kernel=kernel, name="counter", actions=[action], llm="test:model")
    result = agent.execute(inputs={"question": "What is 2+3?"})
    assert seen == ["What is 2+3?"] and result.output.answer


def test_offered_tools_scope_is_restored_after_an_action_run(kernel):
    """Running an action in a context scopes it to the action's tools for the run only: the context's own
    scope comes back afterwards, also when the run fails."""
    agent = kernel.agent(qa_spec(tools=["add"], llm="test:model"))
    action = agent.action()
    ctx = kernel.context()
    ctx.offered_tools = frozenset({"other"})
    asyncio.run(action.aexecute(agent.llm, {"question": "What is 2+3?"}, ctx=ctx))
    assert ctx.offered_tools == frozenset({"other"})


    class DenyModelCalls:
        @staticmethod
        def zagent_before_llm_call(request, ctx):
            assert ctx.offered_tools == frozenset({"add"})  # inside the run: the action's own tools
            return Deny("no model calls in this test")

    kernel.add_plugin(DenyModelCalls(), name="deny-llm")
    with pytest.raises(Exception, match="no model calls"):
        asyncio.run(action.aexecute(agent.llm, {"question": "What is 2+3?"}, ctx=ctx))
    assert ctx.offered_tools == frozenset({"other"})


@pytest.mark.parametrize("fmt, why", [("bogus", "is not a registered parser"),
                                      ("json", "is an output parser, not a tool-call format")])
def test_a_tool_format_that_cannot_carry_calls_is_refused_at_load(kernel, fmt, why):
    """A declared agent's ``tool_format`` that is unknown, or an output parser (``json``), is a ``ConfigError``
    when the agent is built, listing the tool-call formats (not at its first prompt-mode call)."""
    with pytest.raises(ConfigError, match=rf"tool_format {fmt!r} {why}; tool-call formats: .*tool_call"):
        kernel.agent(qa_spec(tools=["add"], tool_format=fmt))
