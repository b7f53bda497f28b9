"""Input and output guardrails in the ReAct loop (issue 32, item 3)."""

import pytest

from zagent import GuardrailTripped
from zagent.plugins.react import ReActLoop

from .conftest import call


class Guard:
    def zagent_check_input(self, inputs):
        return "no shouting" if inputs.isupper() else None

    def zagent_check_output(self, agent, output):
        return f"{agent} may not say {output!r}" if "secret" in output else None


def test_react_input_guardrail_stops_before_the_first_model_call(kernel):
    """A ReAct run whose task trips zagent_check_input ends with GuardrailTripped and sends no request."""
    kernel.add_plugin(Guard(), name="guard")
    llm = kernel.llm("scripted:r", replies=["fine"])
    with pytest.raises(GuardrailTripped) as info:
        ReActLoop(kernel=kernel, llm=llm, agent="bot").run("HELLO")
    assert info.value.where == "input" and llm.requests == []


def test_react_output_guardrail_stops_the_final_answer(kernel):
    """A ReAct answer that trips zagent_check_output ends the run with GuardrailTripped, not completed."""
    kernel.add_plugin(Guard(), name="guard")
    loop = ReActLoop(kernel=kernel, llm=kernel.llm("scripted:r", replies=["the secret is 42"]), agent="bot")
    with pytest.raises(GuardrailTripped, match="bot may not say"):
        loop.run("hello")
    assert loop.state.status != "completed"


class Counting:
    """A kernel guardrail plugin counting what it is asked to check."""

    def __init__(self):
        self.inputs, self.outputs = [], []

    def zagent_check_input(self, inputs):
        self.inputs.append(inputs)

    def zagent_check_output(self, output):
        self.outputs.append(output)


def _own(seen):
    def own_input(value, ctx):
        seen.append(("input", value))

    def own_output(value, ctx):
        seen.append(("output", value))

    return {"input": [own_input], "output": [own_output]}


@pytest.mark.parametrize("use_react", [None, True], ids=["routed", "react"])
def test_a_react_agents_chat_runs_each_guardrail_once(kernel, use_react):
    """ReActAgent.chat, routed by the model or sent to the loop: the kernel's and the agent's own input and
    output guardrails each run exactly once, on the chat's input and on the final answer."""
    from zagent.plugins.react import ReActAgent

    guard, own = Counting(), []
    kernel.add_plugin(guard, name="counting")
    replies = (["yes"] if use_react is None else []) + ["the answer"]
    agent = ReActAgent(kernel=kernel, name="bot", llm=kernel.llm("scripted:r", replies=replies), tools=["add"],
                       guardrails=_own(own))
    assert agent.chat("sum 2 and 3", use_react=use_react).content == "the answer"
    assert guard.inputs == ["sum 2 and 3"] and guard.outputs == ["the answer"]
    assert own == [("input", "sum 2 and 3"), ("output", "the answer")]


def test_a_declared_agent_routed_into_react_runs_each_guardrail_once(kernel):
    """A declared agent with tools whose chat the model routes into the ReAct loop: the kernel's and the
    agent's own guardrails each run once on the input and once on the final answer."""
    guard, own = Counting(), []
    kernel.add_plugin(guard, name="counting")
    agent = kernel.agent({"name": "QA", "prompt": "Answer: {question}", "inputs": [{"name": "question"}],
                          "outputs": [{"name": "answer"}], "parse_mode": "str", "tools": ["add"]})
    agent.guardrails = _own(own)
    agent.llm = kernel.llm("scripted:q", replies=["yes", "the answer"])
    assert agent.chat("sum 2 and 3").content == "the answer"
    assert guard.inputs == ["sum 2 and 3"] and guard.outputs == ["the answer"]
    assert own == [("input", "sum 2 and 3"), ("output", "the answer")]


def test_a_handed_over_input_is_skipped_once_only(kernel):
    """The hand-over from chat to the loop covers that one run: a second loop run on the same context and
    the same text checks it again."""
    from zagent.agentkit.guardrails import hand_over

    guard = Counting()
    kernel.add_plugin(guard, name="counting")
    ctx = kernel.context(agent="bot")
    text = "the task"
    hand_over(ctx, text)
    for n in (1, 2):
        ReActLoop(kernel=kernel, llm=kernel.llm(f"scripted:{n}", replies=["ok"]), agent="bot").run(text, ctx=ctx)
    assert guard.inputs == ["the task"]


def test_a_chat_handed_over_runs_the_kernels_guardrails_once_on_input_and_answer(kernel):
    """A react agent's chat handed over to another agent: the kernel's input guardrail sees the chat's
    input once (the second agent's input carries the hand-over note: its own run input), and the output
    guardrail sees the final answer once."""
    from zagent.plugins.react import ReActAgent

    from .conftest import call

    guard = Counting()
    kernel.add_plugin(guard, name="counting")
    billing = ReActAgent(kernel=kernel, name="billing", description="the billing desk",
                         llm=kernel.llm("scripted:billing", replies=["refund sent"]))
    triage = ReActAgent(kernel=kernel, name="triage", handoffs=[billing],
                        llm=kernel.llm("scripted:triage", replies=[call("transfer_to_billing", reason="money")]))
    assert triage.chat("refund please", use_react=True).content == "refund sent"
    assert guard.inputs[0] == "refund please" and guard.inputs.count("refund please") == 1
    assert guard.outputs == ["refund sent"]


def test_a_text_repeated_in_two_shown_replies_is_judged_once(kernel):
    """A ReAct run with ``on_text`` under an output guardrail: the same text before two tool calls is judged once
    (a guardrail may be a paid model call), and ``on_text`` still shows it twice."""
    guard = Counting()
    kernel.add_plugin(guard, name="count")
    step = {"content": "adding first", **call("add", a=1, b=2)}
    loop = ReActLoop(kernel=kernel, llm=kernel.llm("scripted:twice", replies=[step, step, "3"]), agent="bot",
                     tools=["add"])
    shown = []
    loop.on_text = shown.append
    assert loop.run("go").status == "completed"
    assert guard.outputs.count("adding first") == 1 and guard.outputs.count("3") == 1
    assert "".join(shown).count("adding first") == 2
