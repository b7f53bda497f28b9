"""The chat mode decision reads the model's answer: JSON ``{"use_react": ...}``, a bare JSON bool, yes/no."""

import json

import pytest
from hypothesis import given, settings, strategies as st

WITH_TOOLS = {"name": "Calc", "prompt": "Compute {question}", "inputs": [{"name": "question"}],
              "outputs": [{"name": "answer"}], "tools": ["add"]}

SEED = ('Seed 004 (Agent-Z _should_use_react): "回答 JSON: {{"use_react": true/false}}" ... '
        '"return result.get("use_react", False)" (answer JSON use_react true/false; absent means false).')


def chat_mode(kernel, decision):
    agent = kernel.agent(WITH_TOOLS)
    agent.llm = kernel.llm("scripted:calc", replies=[decision, "Hello!", "Hello!"])
    return agent.chat("hi").mode


@pytest.mark.parametrize("decision", ['{"use_react": false}', "false", "False", "no", '```json\n{"use_react": false}\n```',
                                      '{"use_react": "false"}', "{}", 'Answer: {"use_react": false}'])
def test_a_negative_decision_answers_directly(kernel, decision):
    """Seed 004 (Agent-Z _should_use_react): "回答 JSON: {"use_react": true/false}" / "return
    result.get("use_react", False)" (answer in JSON; a missing key means false). Every negative form of the
    answer -- the seed's JSON, a bare JSON ``false``, "no", fenced JSON, an object without the key -- gives
    a direct answer, not the ReAct loop."""
    assert chat_mode(kernel, decision) == "direct"


@given(flag=st.booleans(), indent=st.sampled_from([None, 2]), fenced=st.booleans(), pad=st.sampled_from(["", " ", "\n"]))
@settings(max_examples=30, deadline=None)
def test_the_seed_json_answer_is_read_as_its_boolean(flag, indent, fenced, pad):
    """Seed 004 (Agent-Z): "result = json.loads(response.content); return result.get("use_react", False)"
    (the decision is the JSON answer's use_react value): however it is laid out, the reader returns it."""
    from zagent.plugins.actions.chat import read_decision

    text = json.dumps({"use_react": flag}, indent=indent)
    if fenced:
        text = f"```json\n{text}\n```"
    assert read_decision(pad + text + pad) is flag


@pytest.mark.parametrize("decision", ['{"use_react": true}', "true", "yes", "Yes, it needs the add tool."])
def test_a_positive_decision_is_still_read_as_react(decision):
    """Seed 004 (Agent-Z): "复杂任务 → ReAct 模式" (a complex task uses ReAct mode): the positive forms of
    the answer read as True."""
    from zagent.plugins.actions.chat import read_decision

    assert read_decision(decision) is True
