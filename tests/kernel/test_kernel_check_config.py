"""``zagent_check_config``: a plugin checks its own settings in ``Kernel(config=...)`` when the kernel is made."""

import pytest

from zagent import ConfigError, Kernel, PluginError


class LimitPlugin:
    """Owns ``config["limit"]``: a whole number of at least 1."""

    def __init__(self):
        self.seen = []

    def zagent_config_keys(self):
        return ("limit",)

    def zagent_check_config(self, config):
        self.seen.append(config)
        limit = config.get("limit", 1)
        if not isinstance(limit, int) or limit < 1:
            raise ConfigError(f"config.limit must be a whole number (>= 1), got {limit!r}")


class Claims:
    """Reads ``config["limit"]`` and ``config["rails"]`` but checks neither."""

    def zagent_config_keys(self):
        return ("limit", "rails")


class BrokenCheck:
    """A check with a bug of its own (not the user's settings)."""

    def zagent_check_config(self, config):
        raise KeyError("oops")


def test_a_plugin_refusing_its_setting_makes_kernel_raise_the_config_error():
    """A ``ConfigError`` from a plugin's check comes out of ``Kernel()`` as it is, naming the key."""
    with pytest.raises(ConfigError, match=r"config.limit must be a whole number \(>= 1\), got 0"):
        Kernel(plugins=[LimitPlugin()], entry_points=False, config={"limit": 0})


def test_the_check_sees_the_kernels_config_once():
    """Each check runs once per kernel and is given the kernel's own config dict."""
    plugin = LimitPlugin()
    k = Kernel(plugins=[plugin], entry_points=False, config={"limit": 3})
    assert plugin.seen == [k.config]


def test_a_check_that_fails_on_its_own_bug_is_a_plugin_problem():
    """Another exception is the plugin's failure: kept in ``problems`` (the kernel is made), naming the hook."""
    k = Kernel(plugins=[BrokenCheck()], entry_points=False)
    assert len(k.problems) == 1
    assert "failed in zagent_check_config: KeyError" in k.problems[0].error


def test_a_check_that_fails_on_its_own_bug_raises_in_strict_mode():
    """Strict mode raises the plugin's failure as a ``PluginError``."""
    with pytest.raises(PluginError, match="zagent_check_config"):
        Kernel(plugins=[BrokenCheck()], entry_points=False, strict=True)


def test_a_plugin_added_later_is_checked_and_dropped_when_it_refuses():
    """``add_plugin`` runs the new plugin's check; on a ``ConfigError`` the plugin is not kept."""
    k = Kernel(entry_points=False, plugins=[Claims()], config={"limit": "many"})
    before = [p.name for p in k.plugins()]
    with pytest.raises(ConfigError, match="config.limit"):
        k.add_plugin(LimitPlugin(), name="limits")
    assert not k.has_plugin("limits")
    assert [p.name for p in k.plugins()] == before


def test_the_kernel_itself_checks_no_plugin_setting():
    """The kernel does not judge a setting's value: a plugin reading it but checking nothing gets it as given
    (rails settings included); a key nothing reads is refused (tests/kernel/test_kernel_config_keys.py)."""
    k = Kernel(entry_points=False, plugins=[Claims()], config={"limit": 0, "rails": {"tool_budget": ["add"]}})
    assert k.config["limit"] == 0
