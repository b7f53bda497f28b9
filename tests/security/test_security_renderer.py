"""Attack: spec text with placeholders went through ``str.format``, a format engine.

A human agent's prompt ``{draft.__class__.__mro__}`` walked attributes, ``{draft:>2000000000}`` allocated about
2 GB, a ``title_format`` of ``{title:>20000000}`` sent a 20 MB prompt. The one renderer
(``zagent.agentkit.placeholders``) takes names only and refuses the rest when the spec loads.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zagent import ConfigError
from zagent.agentkit.placeholders import placeholders

HOSTILE = ["{draft.__class__.__mro__}", "{draft:>2000000000}", "{draft!r}", "{draft[0]}", "{0}", "{}",
           "{draft:{draft}}", "{draft.__init__.__globals__}"]


def human(prompt):
    return {"type": "human", "name": "Editor", "prompt": prompt, "inputs": [{"name": "draft"}],
            "outputs": [{"name": "verdict"}]}


@pytest.mark.parametrize("placeholder", HOSTILE)
def test_a_human_prompt_with_a_format_engine_placeholder_is_refused_at_load(placeholder, kernel):
    """kernel.agent(human spec) refuses attribute/index access, conversions, format specs and positional fields,
    naming the placeholder and the prompt."""
    with pytest.raises(ConfigError) as err:
        kernel.agent(human(f"Review: {placeholder}"))
    assert placeholder in str(err.value) and "prompt of human agent 'Editor'" in str(err.value)


def test_a_human_prompt_naming_an_unknown_placeholder_is_refused_at_load(kernel):
    """{secret} is not an input of the human agent: a ConfigError naming it and the inputs it may use."""
    with pytest.raises(ConfigError, match=r"unknown placeholder \{secret\}.*\{draft\}"):
        kernel.agent(human("Review {draft} and {secret}"))


def test_a_human_prompt_renders_names_and_literal_braces_as_before(kernel):
    """{draft} is filled and {{x}} stays a literal {x}, as str.format did."""
    seen = []
    kernel.config["human_responder"] = lambda request: seen.append(request.prompt) or "ok"
    kernel.agent(human("Review {{x}}: {draft}"))(draft="Bees make honey.")
    assert seen == ["Review {x}: Bees make honey."]


@pytest.mark.parametrize("title_format", ["## {title:>20000000}", "## {title} {title.__class__}", "## {title!a}",
                                          "## {title} {other}"])
def test_a_title_format_with_a_format_spec_is_refused_at_load(title_format, kernel):
    """A declared agent's title_format may use {title} only: a width, attribute, conversion or other name is refused."""
    spec = {"name": "Titled", "prompt": "Answer {q}", "inputs": [{"name": "q"}], "outputs": [{"name": "a"}],
            "parse_mode": "title", "title_format": title_format, "llm_config": {"model": "test:offline"}}
    with pytest.raises(ConfigError, match="title_format of agent 'Titled'"):
        kernel.agent(spec)


def test_a_group_chat_selection_prompt_with_attribute_access_is_refused_at_load(kernel):
    """selection.prompt of an LLM-selected group chat: {task.__class__} is refused when the chat is built."""
    chat = {"type": "groupchat", "name": "c", "agents": [
        {"name": "A", "prompt": "{transcript}", "inputs": [{"name": "transcript"}], "outputs": [{"name": "r"}],
         "parse_mode": "str"},
        {"name": "B", "prompt": "{transcript}", "inputs": [{"name": "transcript"}], "outputs": [{"name": "r"}],
         "parse_mode": "str"}],
        "selection": {"policy": "llm", "model": "test:offline", "prompt": "Pick for {task.__class__}: {names}"}}
    with pytest.raises(ConfigError, match=r"selection.prompt.*\{task.__class__\}"):
        kernel.agent(chat)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab{}:!.[]0 ")), max_size=30))
def test_the_renderer_accepts_only_names_and_agrees_with_str_format_on_what_it_accepts(text):
    """Any text: either refused with a ConfigError, or rendered exactly as str.format renders it with the same values."""
    values = {"a": "X", "b": "Y", "ab": "Z"}
    try:
        parsed = placeholders(text, values, "prompt")
    except ConfigError:
        return
    assert all(n.isidentifier() for n in parsed.names)
    assert parsed.render(values) == text.format(**values)
