"""``zagent_config_keys``: a setting neither the kernel nor a loaded plugin reads is a ``ConfigError``, never ignored."""

from __future__ import annotations

import pytest

from zagent import ConfigError, Kernel, PluginError


class Reads:
    """A plugin reading ``config["audit"]``."""

    def zagent_config_keys(self):
        return ("audit",)


def test_a_setting_no_loaded_plugin_reads_is_refused_by_kernel():
    """``Kernel(config={"rails": ...})`` without the rails plugin: a ConfigError naming the key (the policy would
    be ignored, failing open)."""
    with pytest.raises(ConfigError, match=r"key 'rails' is read by no loaded plugin"):
        Kernel(entry_points=False, config={"rails": {"deny_tools": ["shell"]}})


def test_a_misspelt_setting_names_the_close_spelling():
    """A typo (``rail``) is refused with the key that is read (``rails``)."""
    with pytest.raises(ConfigError, match=r"'rail'.*did you mean 'rails'"):
        Kernel(entry_points=False, plugins=["zagent.plugins.rails"], config={"rail": {"deny_tools": ["x"]}})


def test_a_plugin_claiming_a_key_makes_it_accepted():
    """A key a loaded plugin names in ``zagent_config_keys`` is accepted."""
    kernel = Kernel(entry_points=False, plugins=[Reads()], config={"audit": {"path": "a.log"}})
    assert kernel.config["audit"] == {"path": "a.log"}


def test_the_kernels_own_settings_need_no_plugin():
    """The kernel's and the kits' keys (``model``, ``tool_threads``, ``trusted_imports``...) are read with no
    plugin loaded."""
    config = {"model": "scripted:m", "tool_threads": 4, "trusted_imports": ["app.*"], "checkpoint_key": "k" * 32}
    assert Kernel(entry_points=False, config=config).config == config


def test_an_empty_setting_sets_nothing_and_is_allowed():
    """``{"rails": {}}``, ``None`` and ``False`` set nothing: no plugin needs to read them."""
    kernel = Kernel(entry_points=False, config={"rails": {}, "log": False, "otel": None})
    assert kernel.context(agent="a", agent_config={"rails": {}}).agent == "a"


def test_an_agent_config_key_nothing_reads_stops_the_run_at_its_start():
    """An agent's ``agent_config`` with ``rails`` on a kernel without the rails plugin: ``Kernel.context``
    refuses it, naming the agent and the key, before any call."""
    kernel = Kernel(entry_points=False)
    with pytest.raises(ConfigError, match=r"agent 'ops': agent_config key 'rails'"):
        kernel.context(agent="ops", agent_config={"rails": {"deny_tools": ["shell"]}})


def test_an_inner_agent_config_nothing_reads_is_refused_by_for_agent():
    """A workflow node or chat turn's ``agent_config`` (``RunContext.for_agent``) is checked the same way."""
    ctx = Kernel(entry_points=False).context(agent="outer")
    with pytest.raises(ConfigError, match=r"agent 'inner': agent_config key 'rails'"):
        ctx.for_agent("inner", {"rails": {"tool_budget": {"x": 1}}})


def test_removing_the_reading_plugin_stops_later_runs():
    """After ``remove_plugin`` of the plugin that read a setting, the next run's context is refused (the setting
    would now be ignored)."""
    kernel = Kernel(entry_points=False, plugins=[Reads()], config={"audit": True})
    kernel.remove_plugin(kernel.plugins()[0].name)
    with pytest.raises(ConfigError, match=r"key 'audit'"):
        kernel.context()


def test_a_plugin_returning_a_string_fails_as_the_plugin():
    """``zagent_config_keys`` returning one string (not an iterable of names) is the plugin's ``PluginError``."""

    class Wrong:
        def zagent_config_keys(self):
            return "audit"

    with pytest.raises(PluginError, match=r"must return an iterable of key names, got str"):
        Kernel(entry_points=False, plugins=[Wrong()], config={"audit": True})


def test_the_built_in_plugins_claim_their_settings():
    """With the entry points loaded, every documented plugin setting is read by a loaded plugin."""
    config = {"rails": {"deny_tools": ["x"]}, "skills": {"enabled": False}, "log": False, "memory": {"path": "m"},
              "openai": {"timeout": 5}, "anthropic": {"timeout": 5}, "ollama": {"timeout": 5}}
    assert Kernel(config=config).config == config


def test_a_setting_whose_reader_failed_to_load_names_the_failure():
    """The plugin reading ``audit`` fails in a registration hook (non-strict kernel): ``Kernel()`` refuses the
    setting nothing reads now, naming the plugin's problem (not ignored, not only logged)."""

    class Broken(Reads):
        def zagent_register_tools(self, register, kernel):
            raise RuntimeError("no audit backend")

    with pytest.raises(ConfigError, match=r"key 'audit'.*plugins that failed: .*no audit backend"):
        Kernel(entry_points=False, plugins=[Broken()], config={"audit": True})


def test_a_zero_is_a_setting():
    """``{"typo_limit": 0}`` sets a number, so nothing reading it is refused (only empty values set nothing)."""
    with pytest.raises(ConfigError, match=r"key 'typo_limit'"):
        Kernel(entry_points=False, config={"typo_limit": 0})


def test_a_failing_claim_names_its_plugin():
    """A plugin whose ``zagent_config_keys`` raises is a ``PluginError`` naming it, not a bare exception out of
    ``Kernel()``."""

    class Raises:
        def zagent_config_keys(self):
            raise RuntimeError("no keys today")

    with pytest.raises(PluginError, match=r"failed in zagent_config_keys: RuntimeError: no keys today"):
        Kernel(entry_points=False, plugins=[Raises()])
