"""Input and output guardrails in the ReAct loop (issue 32, item 3)."""

import pytest

from zagent import GuardrailTripped
from zagent.plugins.react import ReActLoop


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
