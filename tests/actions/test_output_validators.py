"""Output validators: an app's checks on a declared agent's output, ModelRetry re-asks, max_output_retries."""

import pytest

from zagent import ConfigError
from zagent.plugins.actions import ModelRetry, OutputRejected

from .conftest import qa_spec

ADD = {"content": None, "tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}


def positive(output):
    if not output.answer.strip().isdigit():
        raise ModelRetry("the answer must be a number")


def _agent(kernel, replies, validators=(positive,), **over):
    agent = kernel.agent(qa_spec(**over))
    agent.llm = kernel.llm("scripted:v", replies=replies)
    agent.output_validators = list(validators)
    return agent


def test_rejected_answer_is_asked_again_with_the_reason(kernel):
    """A ModelRetry sends its reason to the model as a user turn, and the next answer is the output."""
    agent = _agent(kernel, ["five", "5"])
    result = agent(question="2+3?")
    assert result.answer == "5"
    retry_turn = agent.llm.requests[1].messages[-1]
    assert retry_turn.role == "user" and "the answer must be a number" in retry_turn.content
    assert agent.llm.requests[1].messages[-2].content == "five"  # the same conversation goes on


def test_retries_are_recorded_in_trajectory_events_and_result(kernel):
    """Each retry is a marked turn in the trajectory, an output_retry event and a count on the result."""
    events = []

    class Events:
        def zagent_event(self, event):
            events.append(event)

    kernel.add_plugin(Events())
    agent = _agent(kernel, ["five", "still five", "5"])
    agent.max_output_retries = 2
    result = agent(question="2+3?")
    marked = [m for m in result.trajectory if m.metadata.get("kind") == "output_retry"]
    assert [m.metadata["attempt"] for m in marked] == [1, 2]
    assert [e.data["attempt"] for e in events if e.type == "output_retry"] == [1, 2]
    assert result.message.metadata["output_retries"] == 2


def test_past_max_output_retries_is_output_rejected(kernel):
    """Past max_output_retries, OutputRejected carries every reason and the whole trajectory."""
    agent = _agent(kernel, ["five", "six"])
    with pytest.raises(OutputRejected) as info:
        agent(question="2+3?")
    assert info.value.reasons == ["the answer must be a number"] * 2
    assert info.value.trajectory[-1].content == "six"
    assert "max_output_retries" in str(info.value)


def test_retry_keeps_the_tools_offered(kernel):
    """A retried answer may call tools again: the retry turn continues the tool loop."""
    agent = _agent(kernel, [ADD, "five", ADD, "5"], tools=["add"])
    assert agent(question="2+3?").answer == "5"
    assert [t.name for t in agent.llm.requests[2].tools] == ["add"]


def test_async_validator_with_context_sees_the_run(kernel):
    """An async validator taking (output, ctx) runs with the run's context."""
    seen = []

    async def check(output, ctx):
        seen.append(ctx.agent)

    agent = _agent(kernel, ["5"], validators=[check])
    agent(question="2+3?")
    assert seen == ["QA"]


def test_validator_may_replace_the_output(kernel):
    """A validator returning a dict of fields replaces the output with it (converted to the output type)."""
    agent = _agent(kernel, [" 5 "], validators=[lambda out: {"answer": out.answer.strip()}])
    assert agent(question="2+3?").answer == "5"


def test_spec_names_validators_by_registered_name(kernel):
    """An agent file's output_validators names a validator another plugin registered."""
    class Validators:
        def zagent_register_output_validators(self, register):
            register("positive", positive)

    kernel.add_plugin(Validators())
    agent = kernel.agent(qa_spec(output_validators=["positive"], max_output_retries=1))
    agent.llm = kernel.llm("scripted:named", replies=["five", "5"])
    assert agent(question="2+3?").answer == "5"


def test_spec_import_path_validator_needs_trust(kernel):
    """An output validator given by import path in an untrusted spec is refused, and imported when trusted."""
    spec = qa_spec(output_validators=["tests.actions.test_output_validators:positive"])
    with pytest.raises(ConfigError, match="trust"):
        kernel.agent(spec)
    assert [f.__name__ for f in kernel.agent(spec, trust=True).output_validators] == ["positive"]


def test_unknown_validator_name_is_a_config_error(kernel):
    """An output validator name that is neither registered nor an import path is a ConfigError."""
    with pytest.raises(ConfigError, match="not a registered output validator"):
        kernel.agent(qa_spec(output_validators=["nope"]))


@pytest.mark.parametrize("bad", [-1, 11, True, "3", 2.5])
def test_max_output_retries_is_bounded(kernel, bad):
    """max_output_retries in a spec must be a whole number from 0 to 10."""
    with pytest.raises(ConfigError, match="max_output_retries"):
        kernel.agent(qa_spec(max_output_retries=bad))
