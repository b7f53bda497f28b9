"""Agents use chat templates (few-shot turns), and a template's system section is a real system message
(issue 17, item 8)."""

import pytest

from zagent import ConfigError

TEMPLATE = {"system": "You are a terse translator.", "instruction": "Translate to French: {text}",
            "demonstrations": [{"inputs": {"text": "cat"}, "outputs": {"french": "chat"}},
                               {"inputs": {"text": "dog"}, "outputs": {"french": "chien"}}]}


def spec(**template_extra):
    return {"name": "Translator", "prompt_template": {**TEMPLATE, **template_extra}, "system_prompt": "Be exact.",
            "inputs": [{"name": "text"}], "outputs": [{"name": "french"}], "parse_mode": "str"}


def test_string_template_system_section_is_the_system_message(kernel):
    """With the default string template, the system section joins the agent's system prompt, not the user turn."""
    agent = kernel.agent(spec())
    agent.llm = kernel.llm("scripted:t", replies=["maison"])
    agent(text="house")
    [request] = agent.llm.requests
    system, user = request.messages[0], request.messages[-1]
    assert system.role == "system" and "Be exact." in system.content and "terse translator" in system.content
    assert "terse translator" not in user.content and "Translate to French: house" in user.content


def test_chat_template_sends_demonstrations_as_turns(kernel):
    """style 'chat': each demonstration is a user turn and an assistant turn before the real request,
    whose turn lists the inputs (no placeholder needed in the instruction)."""
    agent = kernel.agent(spec(style="chat", instruction="Translate the text to French."))
    agent.llm = kernel.llm("scripted:t", replies=["maison"])
    assert agent(text="house").french == "maison"
    roles = [m.role for m in agent.llm.requests[0].messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    messages = agent.llm.requests[0].messages
    assert "cat" in messages[1].content and "chat" in messages[2].content
    assert "house" in messages[-1].content and "cat" not in messages[-1].content


def test_unknown_template_style_is_refused(kernel):
    """A style other than string or chat is a ConfigError naming both."""
    with pytest.raises(ConfigError) as info:
        kernel.agent(spec(style="poem"))
    assert "'string'" in str(info.value) and "'chat'" in str(info.value)
