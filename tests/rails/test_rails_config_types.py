"""Rails settings of a wrong type are a ConfigError naming the key when the agent is built (``k.agent``),
not a rail that silently does nothing at run time."""

from __future__ import annotations

import pytest

from zagent import ConfigError, Kernel
from zagent.speckit.rails import check_rails

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.rails"]

BAD = [
    ("deny_tools", 5),
    ("allow_tools", {"a": 1}),
    ("tool_budget", ["add"]),
    ("tool_budget", {"add": -1}),
    ("tool_rpm", {"add": "fast"}),
    ("max_argument_bytes", "big"),
    ("redact_llm", "yes"),
    ("approval", {"sensitive": "no"}),
    ("max_tool_calls_per_reply", 0),
]


@pytest.fixture
def kernel():
    k = Kernel(plugins=PLUGINS, entry_points=False)
    yield k
    k.close()


@pytest.mark.parametrize("key, value", BAD, ids=[f"{k}={v!r}" for k, v in BAD])
def test_a_react_agent_with_a_wrongly_typed_rail_is_refused_at_build(kernel, key, value):
    """A ReAct spec's rails with a wrong type: ConfigError at k.agent naming the key."""
    with pytest.raises(ConfigError, match=f"rails.{key} must be"):
        kernel.agent({"type": "react", "name": "r", "rails": {key: value}})


def test_a_declared_agent_with_a_wrongly_typed_rail_is_refused_at_build(kernel):
    """A declared agent's agent_config.rails.deny_tools of 5: ConfigError naming agent_config.rails.deny_tools."""
    spec = {"type": "customize", "name": "QA", "prompt": "Answer: {question}",
            "inputs": [{"name": "question", "type": "string"}], "outputs": [{"name": "answer", "type": "string"}],
            "parse_mode": "str", "agent_config": {"rails": {"deny_tools": 5}}}
    with pytest.raises(ConfigError, match="agent_config.rails.deny_tools must be a list"):
        kernel.agent(spec)


def test_well_typed_rails_and_other_plugins_keys_pass():
    """Every documented setting with a right value, and an unknown key of another plugin, pass."""
    check_rails({"deny_tools": ["shell"], "allow_tools": "web.*", "tool_budget": {"*": 3}, "tool_rpm": {"x": 0},
                 "tool_rpm_wait": False, "max_argument_bytes": None, "approval": {"tools": ["rm"]},
                 "redact": [r"sk-\w+"], "redact_with": "#", "redact_llm": True, "max_tool_calls_per_reply": 8,
                 "approver": "pkg.mod:ask", "someone_elses": object()})


def test_a_kernel_config_with_a_wrongly_typed_rail_is_refused():
    """``Kernel(config={"rails": {"tool_budget": ["add"]}})``: ConfigError naming config.rails.tool_budget."""
    with pytest.raises(ConfigError, match="config.rails.tool_budget must be a mapping"):
        Kernel(plugins=["zagent.plugins.rails"], entry_points=False, config={"rails": {"tool_budget": ["add"]}})


def test_the_rails_plugin_added_later_refuses_a_wrongly_typed_rail_and_is_dropped():
    """``add_plugin`` of the rails plugin on a kernel whose config.rails is wrong: ConfigError, plugin not kept.
    (``Kernel(config={"rails": ...})`` without the plugin is refused already: nothing would read it.)"""
    k = Kernel(entry_points=False)
    k.config["rails"] = {"deny_tools": 5}
    with pytest.raises(ConfigError, match="config.rails.deny_tools must be a list"):
        k.add_plugin("zagent.plugins.rails")
    assert not k.has_plugin("zagent.plugins.rails")
    assert not k.has_impls("zagent_before_tool_call")
