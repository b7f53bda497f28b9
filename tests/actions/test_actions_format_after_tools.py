"""The output format comes after the tool phase: with tools offered and a structured parse mode (json, xml,
title), the first prompt holds the task and the tools only; the format is asked for once the model answers
without calling tools (or restates calls that already succeeded). Without tools, or in str mode, it is in
the first prompt as before."""

import pytest

from zagent.plugins.actions.actionrun import FORMAT_TURN

CALL = {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}
JSON_ANSWER = '{"result": 5, "explanation": "2 + 3"}'


def calculator(**over):
    spec = {"name": "Calc", "prompt": "{question}\nUse the add tool.", "inputs": [{"name": "question"}],
            "outputs": [{"name": "result", "type": "integer"}, {"name": "explanation"}],
            "parse_mode": "json", "tools": ["add"], **over}
    return spec


def user_texts(request):
    return [m.content for m in request.messages if m.role == "user"]


def test_first_prompt_with_tools_has_no_output_format(kernel):
    """Tools offered, json mode: the first request's prompt is the task alone; the tools are offered."""
    agent = kernel.agent(calculator())
    agent.llm = kernel.llm("scripted:a", replies=[CALL, JSON_ANSWER])
    out = agent(question="2+3?")
    first = agent.llm.requests[0]
    assert [t.name for t in first.tools] == ["add"]
    assert "Output format" not in first.messages[-1].content and '"result"' not in first.messages[-1].content
    assert out.output.result == 5


def test_an_answer_already_in_the_format_needs_no_extra_turn(kernel):
    """After the tool phase an answer that parses is the output: two model calls, no format turn."""
    agent = kernel.agent(calculator())
    agent.llm = kernel.llm("scripted:b", replies=[CALL, JSON_ANSWER])
    agent(question="2+3?")
    assert agent.llm.calls == 2
    assert not any("Output format" in t for r in agent.llm.requests for t in user_texts(r))


def test_a_free_answer_gets_the_format_turn(kernel):
    """A prose answer after the tool phase: the next turn asks for the output format, and that reply is read."""
    agent = kernel.agent(calculator())
    agent.llm = kernel.llm("scripted:c", replies=[CALL, "The sum is 5.", JSON_ANSWER])
    out = agent(question="2+3?")
    third = agent.llm.requests[2]
    turn = third.messages[-1].content
    assert turn.endswith(FORMAT_TURN.format(instructions=agent.action()._instructions))
    assert turn.startswith("The request:\n2+3?\nUse the add tool.")
    assert '- add({"a":2,"b":3}) returned 5' in turn  # the recap: what the tools returned
    assert third.messages[-2].content == "The sum is 5." and [t.name for t in third.tools] == ["add"]
    assert (out.output.result, out.output.explanation) == (5, "2 + 3")


def test_format_turn_recap_is_bounded(kernel):
    """The recap lists at most RECAP_RESULTS results, each cut to RECAP_CHARS, and says which failed."""
    from zagent.plugins.actions import actionrun as A

    kernel.add_tool(lambda text: text * 1000, name="echo", description="Echo a text.")
    calls = [{"tool_calls": [{"name": "echo", "arguments": {"text": f"t{i}"}}]} for i in range(A.RECAP_RESULTS + 2)]
    broken = {"tool_calls": [{"name": "add", "arguments": {"a": "x", "b": 1}}]}
    agent = kernel.agent(calculator(tools=["add", "echo"], max_steps=20))
    agent.llm = kernel.llm("scripted:r", replies=[*calls, broken, "done", JSON_ANSWER])
    agent(question="2+3?")
    turn = agent.llm.requests[-1].messages[-1].content
    recap = turn.split("What the tools returned:\n")[1].split("\n\nNow give")[0].splitlines()
    assert len(recap) == A.RECAP_RESULTS and recap[-1].startswith("- add(") and "failed (error):" in recap[-1]
    assert all(len(line) < 2 * A.RECAP_CHARS + 40 for line in recap) and recap[0].endswith(" [...]")
    assert '"t0"' not in turn and '"t3"' in turn  # the oldest results are left out


@pytest.mark.parametrize("native", [True, False])
def test_restating_a_call_that_succeeded_ends_the_tool_phase(kernel, native):
    """A small model echoing its last call: the call runs again (never skipped), then the format turn follows."""
    agent = kernel.agent(calculator())
    agent.llm = kernel.llm("scripted:d", replies=[CALL, CALL, JSON_ANSWER], profile={"native_tools": native})
    out = agent(question="2+3?")
    assert [r.state for r in out.tool_results] == ["success", "success"]
    assert "Output format" in agent.llm.requests[2].messages[-1].content
    assert out.output.result == 5


def test_a_repeated_call_that_failed_is_a_retry_not_an_echo(kernel):
    """A call repeated after it failed is not the end of the tool phase: no format turn yet."""
    bad = {"tool_calls": [{"name": "add", "arguments": {"a": "x", "b": 3}}]}
    agent = kernel.agent(calculator())
    agent.llm = kernel.llm("scripted:e", replies=[bad, bad, CALL, JSON_ANSWER])
    agent(question="2+3?")
    assert not any("Output format" in (r.messages[-1].content or "") for r in agent.llm.requests[:3])


def test_last_step_answer_goes_to_the_repair_prompt(kernel):
    """At max_steps there is no room for a format turn: an unparsable answer gets the repair prompt (which
    shows the format) instead."""
    agent = kernel.agent(calculator(max_steps=2))
    agent.llm = kernel.llm("scripted:f", replies=[CALL, "The sum is 5.", JSON_ANSWER])
    out = agent(question="2+3?")
    assert out.output.result == 5 and agent.llm.calls == 3
    assert agent.llm.requests[2].tools == []  # the repair call offers no tools


def test_without_tools_the_format_is_in_the_first_prompt(kernel):
    """No tools: the prompt holds the output format, as before."""
    agent = kernel.agent(calculator(tools=[]))
    agent.llm = kernel.llm("scripted:g", replies=[JSON_ANSWER])
    agent(question="2+3?")
    assert "## Output format" in agent.llm.requests[0].messages[-1].content


def test_str_mode_holds_the_format_back_while_tools_are_offered(kernel):
    """str mode with tools: the first prompt has no "reply with the answer only" (it made a 0.5B model answer
    "10.0" instead of calling the tool); the answer after the tool phase is the output."""
    agent = kernel.agent(calculator(parse_mode="str", outputs=[{"name": "result"}]))
    agent.llm = kernel.llm("scripted:h", replies=[CALL, "5"])
    assert agent(question="2+3?").output.result == "5"
    first = agent.llm.requests[0].messages[-1].content
    assert "## Output format" not in first and "only" not in first


def test_chat_template_tool_phase_turn_has_no_format(kernel):
    """A chat-style template with tools: the final user turn carries the inputs but not the format."""
    agent = kernel.agent(calculator(prompt=None, prompt_template={
        "style": "chat", "instruction": "Answer with the add tool.", "system": "You are Calc."}))
    agent.llm = kernel.llm("scripted:i", replies=[CALL, JSON_ANSWER])
    agent(question="2+3?")
    last = agent.llm.requests[0].messages[-1].content
    assert "2+3?" in last and "Output format" not in last


def test_preview_still_shows_the_whole_prompt(kernel):
    """`agent show` (prompt_preview) shows the prompt with its output format."""
    agent = kernel.agent(calculator())
    assert "## Output format" in agent.prompt_preview({"question": "2+3?"})
