"""ReActLoop decisions, bounds, error policy, rails, trajectories and checkpoints."""

import pytest

from zagent import Deny, NoAnswerError
from zagent.plugins.react import ReActLoop, read_trajectories

from .conftest import call


def loop_for(kernel, replies, **kw):
    llm = kernel.llm("scripted:m", replies=replies, profile=kw.pop("profile", None) or {})
    return ReActLoop(kernel=kernel, llm=llm, tools=kw.pop("tools", ["add"]), **kw), llm


def test_tool_then_answer(kernel):
    """use_tool runs the tool and feeds the result back; direct_response ends the run."""
    loop, llm = loop_for(kernel, [call("add", a=2, b=3), "It is 5."])
    result = loop.run("2+3?")
    assert result.content == "It is 5." and result.status == "completed"
    assert [(s.action, s.tool, s.result) for s in result.steps] == [("use_tool", "add", "5"), ("direct_response", None, "It is 5.")]
    assert llm.requests[1].messages[-1].role == "tool"


def test_prompt_mode_tools(kernel):
    """Without native tool calling the loop reads <tool_call> blocks and offers tools in the system prompt."""
    loop, llm = loop_for(kernel, [call("add", a=1, b=1), "2"], profile={"native_tools": False})
    assert loop.run("1+1?").content == "2"
    assert llm.requests[0].tools == [] and "<tool_call>" in llm.requests[0].messages[0].content
    assert "<tool_result" in llm.requests[1].messages[-1].content


def test_prompt_mode_leaves_ask_clarification_out_by_default(kernel):
    """In prompt mode the pseudo-tool is not offered (a small model writes it beside or in place of the real
    calls); the system prompt tells the model to ask in plain text, and ``allow_clarification=True`` offers it."""
    loop, llm = loop_for(kernel, ["Which numbers?"], profile={"native_tools": False})
    assert loop.run("add them").content == "Which numbers?"
    system = llm.requests[0].messages[0].content
    assert "ask_clarification" not in system and "ask the user for it" in system
    loop, llm = loop_for(kernel, ["ok"], profile={"native_tools": False}, allow_clarification=True)
    loop.run("add them")
    assert "ask_clarification" in llm.requests[0].messages[0].content


def test_native_mode_offers_ask_clarification_by_default(kernel):
    """With native tool calling the pseudo-tool is offered as a tool beside the registered ones."""
    loop, llm = loop_for(kernel, ["ok"])
    loop.run("add them")
    assert [t.name for t in llm.requests[0].tools] == ["add", "ask_clarification"]


def test_ask_clarification(kernel):
    """The ask_clarification pseudo-tool ends the run with the model's questions."""
    loop, _ = loop_for(kernel, [call("ask_clarification", questions=["Which numbers?"])])
    result = loop.run("add them")
    assert result.needs_clarification and result.questions == ["Which numbers?"]
    assert result.steps[-1].action == "ask_clarification"


def test_max_iterations_is_typed_with_trajectory(kernel):
    """Hitting max_iterations raises NoAnswerError carrying every step."""
    loop, _ = loop_for(kernel, [call("add", a=i, b=1) for i in range(3)], max_iterations=3)
    with pytest.raises(NoAnswerError) as info:
        loop.run("loop forever")
    assert info.value.limit == "max_iterations"
    assert [s.parameters["a"] for s in info.value.trajectory] == [0, 1, 2]
    assert loop.status == "failed"


@pytest.mark.parametrize("on_error", ["continue", "stop"])
def test_provider_error_ends_the_run_with_that_error(kernel, on_error):
    """A provider's error ends the run whatever on_error says (the provider already retried it): the
    caller gets that error, the step is recorded, the state is failed, and the model is not asked again."""
    from zagent import ProviderError

    loop, llm = loop_for(kernel, [ProviderError("boom", provider="scripted"), "recovered"], on_error=on_error)
    with pytest.raises(ProviderError, match="boom"):
        loop.run("hi")
    assert llm.calls == 1 and loop.status == "failed"
    assert loop.state.steps[0].is_error and "boom" in loop.state.steps[0].reason


def test_blocked_tool_is_recorded_as_blocked_step(kernel):
    """A rail's deny becomes a blocked step and the model is told the reason."""
    class NoAdd:
        def zagent_before_tool_call(self, call, ctx):
            return Deny("no adding today")

    kernel.add_plugin(NoAdd())
    loop, llm = loop_for(kernel, [call("add", a=1, b=2), "ok"])
    result = loop.run("1+2")
    step = result.steps[0]
    assert step.is_blocked and "no adding today" in step.reason
    assert "no adding today" in llm.requests[1].messages[-1].content


def test_batch_results_keep_call_order(kernel):
    """Several calls in one step produce tool messages in the order of the calls."""
    batch = {"tool_calls": [{"name": "add", "arguments": {"a": i, "b": 0}} for i in range(5)]}
    loop, llm = loop_for(kernel, [batch, "done"], max_tool_call_concurrency=2)
    loop.run("go")
    tool_msgs = [m for m in llm.requests[1].messages if m.role == "tool"]
    assert [m.content for m in tool_msgs] == ["0", "1", "2", "3", "4"]


def test_trajectory_jsonl_is_sharegpt_style(kernel, tmp_path):
    """A finished run appends one ShareGPT-style line with tool calls, observations and timed steps."""
    path = str(tmp_path / "t.jsonl")
    loop, _ = loop_for(kernel, [call("add", a=2, b=3), "5"], trajectory_path=path)
    loop.run("2+3?")
    (line,) = list(read_trajectories(path))
    roles = [t["from"] for t in line["conversations"]]
    assert roles == ["system", "human", "function_call", "observation", "gpt"]
    assert line["status"] == "completed" and line["steps"][0]["duration"] >= 0


def test_every_step_is_checkpointed(kernel, tmp_path):
    """With a checkpoint store each step and tool result is saved, the last as completed."""
    store = kernel.memory("checkpoints", path=str(tmp_path / "c.db"))
    loop, _ = loop_for(kernel, [call("add", a=2, b=3), "5"], checkpoints=store)
    result = loop.run("2+3?")
    steps = store.steps(result.state.run_id)
    assert len(steps) >= 3 and steps == sorted(steps)
    with pytest.raises(ValueError, match="completed"):
        ReActLoop.restore(kernel, result.state.run_id, checkpoints=store, llm=None)


def test_long_run_is_compressed_without_orphan_tool_messages(kernel):
    """Past max_context_messages older turns are summarised; no request ever holds an orphan tool result."""
    from zagent.plugins.react.compression import validate_tool_pairs

    plan = iter([call("add", a=i, b=1) for i in range(6)] + ["finished"])

    def reply(request):
        if "compress" in (request.messages[0].content or "").lower():
            return "they added numbers"
        return next(plan)

    llm = kernel.llm("scripted:m", replies=[reply] * 40)
    loop = ReActLoop(kernel=kernel, llm=llm, tools=["add"], max_context_messages=6, keep_recent=2)
    result = loop.run("add a lot")
    assert result.content == "finished"
    step_requests = [r for r in llm.requests if "compress" not in (r.messages[0].content or "").lower()]
    assert any(m.metadata.get("zagent.summary") for r in step_requests for m in r.messages)
    for r in step_requests:
        validate_tool_pairs(r.messages)
        assert r.messages[0].role == "system" and "step by step" in r.messages[0].content


def test_on_text_streams_reply_text(kernel):
    """With on_text set the loop streams: text deltas reach the callback, tools still run."""
    seen = []
    loop, _ = loop_for(kernel, [call("add", a=2, b=3), "The sum is 5."], on_text=seen.append)
    result = loop.run("2+3?")
    assert result.content == "The sum is 5." and "".join(seen).endswith("The sum is 5.")
    assert result.steps[0].result == "5"


def test_run_end_reports_failed_status(kernel):
    """A run that fails emits run_end with status 'failed' (observers can close what the run opened)."""
    ends = []

    class Watch:
        def zagent_event(self, event):
            if event.type == "run_end":
                ends.append(event.data["status"])

    kernel.add_plugin(Watch())
    loop, _ = loop_for(kernel, [call("add", a=1, b=1)], max_iterations=1)
    with pytest.raises(NoAnswerError):
        loop.run("go")
    assert ends == ["failed"]


def test_react_spec_agent_config_reaches_the_run_context(kernel):
    """A react agent's agent_config section is passed to its runs next to its rails."""
    seen = []

    class Spy:  # reads the two settings, so they are not refused as read by nothing
        def zagent_config_keys(self):
            return ("skills", "rails")

        def zagent_before_llm_call(self, request, ctx):
            seen.append(ctx.agent_config)

    kernel.add_plugin(Spy())
    agent = kernel.agent({"type": "react", "name": "r", "tools": ["add"], "agent_config": {"skills": True},
                          "rails": {"max_argument_bytes": 100}}, trust=True)  # skills: the trusted spec's switch
    agent.llm = kernel.llm("scripted:m", replies=["fine"])
    agent.chat("hi", use_react=False)
    assert seen == [{"skills": True, "rails": {"max_argument_bytes": 100}}]


def test_run_id_is_the_callers_context_run_id(kernel):
    """A loop started with a caller's context uses its run id for state, events and checkpoints."""
    loop, _ = loop_for(kernel, ["hi"])
    ctx = kernel.context(agent="x")
    result = loop.run("hello", ctx=ctx)
    assert result.state.run_id == ctx.run_id


def test_many_tools_offer_only_the_relevant_ones_each_step(kernel):
    """Past tool_limit, a step offers the tools retrieval ranks best for the request, plus pinned ones."""
    for i in range(30):
        def filler(x: int) -> int:
            """Unrelated helper about gardening and soil."""
            return x

        kernel.add_tool(filler, name=f"garden_{i}")

    def weather(city: str) -> str:
        """Current weather forecast for a city."""
        return "sunny"

    kernel.add_tool(weather)
    names = [f"garden_{i}" for i in range(30)] + ["weather", "add"]
    loop, llm = loop_for(kernel, ["It is sunny."], tools=names, tool_limit=4, pinned_tools=["add"])
    loop.run("What is the weather forecast in Oslo?")
    offered = [t.name for t in llm.requests[0].tools]
    assert "weather" in offered and "add" in offered
    assert len(offered) <= 4 + 1 + 1  # the limit, the pinned tool, ask_clarification


def test_clarification_mixed_with_tool_calls_runs_the_tools(kernel):
    """A reply with tool calls and ask_clarification runs the tools and answers the clarification call with a note."""
    mixed = {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}},
                            {"name": "ask_clarification", "arguments": {"questions": ["why?"]}}]}
    loop, llm = loop_for(kernel, [mixed, "3"])
    result = loop.run("1+2")
    assert result.content == "3" and not result.questions
    tool_msgs = [m for m in llm.requests[1].messages if m.role == "tool"]
    assert [m.content for m in tool_msgs][0] == "3"
    assert "must be the only call" in tool_msgs[1].content


def test_a_reply_repeating_an_answered_call_is_the_answer_not_a_new_call():
    """Prompt mode: ``[word_count(text='a b'), 2]`` after that call returned 2 ends the run with "2"; the
    tool ran once (small models restate the call next to its result)."""
    from zagent import Kernel, tool
    from zagent.plugins.react import ReActLoop

    ran = []
    k = Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions",
                        "zagent.plugins.react"], entry_points=False)
    try:
        k.add_tool(tool(lambda text: ran.append(text) or len(text.split()), name="word_count"))
        echo = "[word_count(text='a b'), 2]"
        llm = k.llm("scripted:m", replies=[echo, echo, echo], profile={"native_tools": False, "tool_format": "pycall"})
        result = ReActLoop(kernel=k, llm=llm, tools=["word_count"], max_iterations=3).run("count 'a b'")
    finally:
        k.close()
    assert ran == ["a b"] and result.content == "2"
