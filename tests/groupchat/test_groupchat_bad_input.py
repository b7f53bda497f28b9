"""A group chat's inputs are hostile data: checked (like any run's inputs) before any speaker speaks."""

import pytest

from zagent.errors import ConfigError
from zagent.plugins.groupchat import GroupChat

from .conftest import Echo


def _deep(levels):
    value = "x"
    for _ in range(levels):
        value = [value]
    return value


def test_a_lone_surrogate_in_an_input_is_a_config_error_naming_it(kernel):
    """An input holding '\\ud800' (not encodable as UTF-8) is a ConfigError naming the input; no turn runs."""
    speaker = Echo("a")
    chat = GroupChat(kernel=kernel, agents=[speaker], max_rounds=1)
    with pytest.raises(ConfigError, match=r"group chat input 'topic'.*lone surrogate"):
        chat.run("write", topic="why\ud800")
    assert speaker.turns == []


def test_a_50000_deep_input_is_a_config_error_not_recursion(kernel):
    """A 50,000-deep list as an input is a ConfigError naming the input, not RecursionError; no turn runs."""
    speaker = Echo("a")
    chat = GroupChat(kernel=kernel, agents=[speaker], max_rounds=1)
    with pytest.raises(ConfigError, match=r"group chat input 'topic': .*nested deeper than"):
        chat.run("write", topic=_deep(50_000))
    assert speaker.turns == []
