"""EvoAgentX's CustomizeAgent as the seed shows it: no outputs, ``agent(inputs={...})``, ``str`` with
several outputs, the object/array switch to ``json``, demonstrations keyed by field name."""

import logging

import pytest

from zagent import ConfigError

SIMPLE = {"name": "SimpleAgent", "description": "A basic agent that responds to queries",
          "prompt": "Answer the following question: {question}",
          "inputs": [{"name": "question", "type": "string", "description": "The question to answer"}]}


def scripted(kernel, agent, *replies):
    agent.llm = kernel.llm(f"scripted:{agent.name}-{id(agent)}", replies=list(replies))
    return agent.llm


def test_the_seed_first_example_runs_with_one_model_call(kernel):
    """Seed 000 (EvoAgentX examples/customize_agent.py): "simple_agent = CustomizeAgent(name=..., prompt="Answer
    the following question: {question}", inputs=[...])" / "response = simple_agent(inputs={"question": ...})" /
    "print(response.content.content)" (an agent with a prompt and inputs but no outputs, called with
    inputs=, gives the answer text). It builds, makes exactly one model call (no extraction call), and
    the answer text is the result's content."""
    agent = kernel.agent(dict(SIMPLE))
    llm = scripted(kernel, agent, "A model of language.")
    response = agent(inputs={"question": "What is a language model?"})
    assert llm.calls == 1
    assert "What is a language model?" in llm.requests[0].messages[-1].content
    assert response.content == "A model of language."


def test_unknown_input_names_are_refused(kernel):
    """Seed 000 (EvoAgentX ActionInput): "输入规格 声明"这个动作需要哪些字段"" (the input spec declares the
    fields the action needs). An input name the agent does not declare is a ConfigError naming it and
    the declared ones, before any model call."""
    agent = kernel.agent(dict(SIMPLE))
    llm = scripted(kernel, agent, "unused")
    with pytest.raises(ConfigError, match=r"'questoin'.*question"):
        agent(inputs={"questoin": "typo"})
    with pytest.raises(ConfigError, match="'questoin'"):
        agent(questoin="typo")
    assert llm.calls == 0


def test_str_mode_puts_the_raw_text_in_every_output(kernel):
    """Seed 000 (EvoAgentX parse modes): "str	随便输出	原文赋给每个字段" (str mode: the raw text goes into
    every field). An agent in str mode with two outputs is accepted and both hold the reply."""
    agent = kernel.agent({**SIMPLE, "outputs": [{"name": "summary"}, {"name": "answer"}], "parse_mode": "str"})
    scripted(kernel, agent, "  Forty-two.  ")
    result = agent(question="q")
    assert result.summary == "Forty-two." and result.answer == "Forty-two."


@pytest.mark.parametrize("mode", ["title", "str", "xml"])
def test_an_object_output_switches_an_explicit_mode_to_json_with_a_warning(kernel, caplog, mode):
    """Seed 000 (EvoAgentX CustomizeAgent.validate_data): "若输出字段含 object/array 这类复杂类型、且用的是
    prompt_template,validate_data 会自动把 parse_mode 纠正成 json ... 因为复杂结构只有 JSON 扛得住" (an
    object/array output with a prompt_template corrects parse_mode to json: only JSON carries them). Even
    when the spec names another mode, the agent parses JSON, and a warning says so."""
    spec = {"name": "Planner", "prompt_template": {"instruction": "Plan {goal}"}, "inputs": [{"name": "goal"}],
            "outputs": [{"name": "plan", "type": "array"}], "parse_mode": mode}
    with caplog.at_level(logging.WARNING, logger="zagent"):
        agent = kernel.agent(spec)
    assert agent.action().parse_mode == "json"
    assert any("json" in r.getMessage() and "plan" in r.getMessage() for r in caplog.records)
    scripted(kernel, agent, '{"plan": ["a", "b"]}')
    assert agent(goal="g").plan == ["a", "b"]


def test_demonstrations_keyed_by_field_names_reach_the_model(kernel):
    """Seed 000 (EvoAgentX ChatTemplate): "few-shot 示例变成交替的 user/assistant 轮" (few-shot demonstrations
    become alternating user/assistant turns). Demonstrations written as dicts of the agent's input and
    output names (``{"question": ..., "answer": ...}``) are sent: as turns in a chat template, as an
    examples section in a string template."""
    demo = {"question": "What is 2+2?", "answer": "4"}
    for style, where in (("chat", "turns"), ("string", "text")):
        agent = kernel.agent({"name": f"Demo{style}", "inputs": [{"name": "question"}],
                              "outputs": [{"name": "answer"}], "parse_mode": "str",
                              "prompt_template": {"system": "Be terse.", "instruction": "Answer {question}",
                                                  "demonstrations": [demo], "style": style}})
        llm = scripted(kernel, agent, "5")
        agent(question="3+2?")
        messages = llm.requests[0].messages
        if where == "turns":
            assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
            assert "What is 2+2?" in messages[1].content and messages[2].content == "4"
        else:
            assert "What is 2+2?" in messages[-1].content and "4" in messages[-1].content

    with pytest.raises(ConfigError, match="colour"):  # a key that is neither an input nor an output
        kernel.agent({"name": "D", "inputs": [{"name": "question"}], "outputs": [{"name": "answer"}],
                      "prompt_template": {"instruction": "Answer {question}",
                                          "demonstrations": [{"question": "q", "colour": "red"}]}})
