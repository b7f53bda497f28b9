"""Entry-point loading: the ``zagent`` group, allow-list and deny-list applied before import."""

import sys
import types

from zagent import Kernel
from zagent._hooks import entrypoints

def test_entry_point_plugin_is_loaded(fake_dist, tool_plugin_source):
    """A distribution with an entry point in group ``zagent`` adds its tools to ``Kernel()``."""
    fake_dist("zagent_foo", {"foo": tool_plugin_source.format(tool="foo_tool")})
    assert "foo_tool" in Kernel().registries["tools"]


def test_entry_points_false_loads_nothing_installed(fake_dist, tool_plugin_source):
    """``Kernel(entry_points=False)`` ignores installed plugins."""
    fake_dist("zagent_foo", {"foo": tool_plugin_source.format(tool="foo_tool")})
    assert Kernel(entry_points=False).plugins() == []


def test_disable_list_blocks_before_import(fake_dist, tool_plugin_source, monkeypatch):
    """``ZAGENT_DISABLE_PLUGINS`` skips a plugin without importing its module."""
    modules = fake_dist("zagent_foo", {"foo": tool_plugin_source.format(tool="foo_tool"),
                                      "bar": tool_plugin_source.format(tool="bar_tool")})
    monkeypatch.setenv("ZAGENT_DISABLE_PLUGINS", " foo , other")
    k = Kernel()
    assert modules["foo"] not in sys.modules
    assert [p.name for p in k.plugins()] == ["bar"] and k.problems == []


def test_disabled_name_cannot_be_added_explicitly(fake_dist, tool_plugin_source, monkeypatch):
    """A plugin name on the deny-list stays blocked for the kernel's lifetime (pluggy ``set_blocked``)."""
    fake_dist("zagent_foo", {"foo": tool_plugin_source.format(tool="foo_tool")})
    monkeypatch.setenv("ZAGENT_DISABLE_PLUGINS", "foo")
    k = Kernel()
    assert k.pm.is_blocked("foo")


def test_allow_list_loads_only_named_plugins(fake_dist, tool_plugin_source, monkeypatch):
    """``ZAGENT_PLUGINS`` loads only the named entry points; the others are never imported."""
    modules = fake_dist("zagent_foo", {"foo": tool_plugin_source.format(tool="foo_tool"),
                                      "bar": tool_plugin_source.format(tool="bar_tool")})
    monkeypatch.setenv("ZAGENT_PLUGINS", "bar")
    k = Kernel()
    assert modules["foo"] not in sys.modules
    assert [p.name for p in k.plugins()] == ["bar"]


def test_empty_allow_list_loads_no_entry_points(fake_dist, tool_plugin_source, monkeypatch):
    """``ZAGENT_PLUGINS=`` (empty) loads no installed plugin at all."""
    modules = fake_dist("zagent_foo", {"foo": tool_plugin_source.format(tool="foo_tool")})
    monkeypatch.setenv("ZAGENT_PLUGINS", "")
    assert Kernel().plugins() == [] and modules["foo"] not in sys.modules


def test_explicit_plugins_load_with_entry_points(fake_dist, tool_plugin_source):
    """``plugins=[...]`` are added after the installed ones."""
    fake_dist("zagent_foo", {"foo": tool_plugin_source.format(tool="foo_tool")})
    extra = types.ModuleType("extra")
    extra.zagent_register_tools = lambda register: register(lambda: 1, name="extra_tool")
    k = Kernel([extra], entry_points=True)
    assert [p.name for p in k.plugins()] == ["extra", "foo"]


def test_same_entry_point_name_in_two_distributions(fake_dist, tool_plugin_source):
    """Two distributions claiming one plugin name: the second is reported, naming both distributions."""
    fake_dist("dist_a", {"dup": tool_plugin_source.format(tool="a_tool")})
    fake_dist("dist_b", {"dup": tool_plugin_source.format(tool="b_tool")})
    k = Kernel()
    assert len(k.problems) == 1
    assert "dist_a" in k.problems[0].error and "dist_b" in k.problems[0].error


def test_scan_parses_only_the_group(tmp_path):
    """``entrypoints.scan`` reads ``[zagent]`` of each dist-info and reports distribution and version."""
    meta = tmp_path / "zagent_x-0.4.dist-info"
    meta.mkdir()
    (meta / "entry_points.txt").write_text("[console_scripts]\nx = a:b\n\n[zagent]\nx = zagent_x.plugin\n")
    assert entrypoints.scan("zagent", [str(tmp_path)]) == [
        entrypoints.EntryPoint("x", "zagent_x.plugin", "zagent_x", "0.4")]


def test_scan_reads_egg_info_version(tmp_path):
    """An ``.egg-info`` (legacy develop install) gives its version from ``PKG-INFO``."""
    meta = tmp_path / "zagent_y.egg-info"
    meta.mkdir()
    (meta / "entry_points.txt").write_text("[zagent]\ny = y_mod\n")
    (meta / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: zagent-y\nVersion: 1.2.3\n")
    assert entrypoints.scan("zagent", [str(tmp_path)])[0].version == "1.2.3"


def test_scan_first_distribution_on_path_wins(tmp_path):
    """With one distribution in two ``sys.path`` entries, the first entry wins (as importlib.metadata)."""
    for folder, value in (("one", "first"), ("two", "second")):
        meta = tmp_path / folder / "same-1.0.dist-info"
        meta.mkdir(parents=True)
        (meta / "entry_points.txt").write_text(f"[zagent]\ns = {value}\n")
    found = entrypoints.scan("zagent", [str(tmp_path / "one"), str(tmp_path / "two")])
    assert [e.value for e in found] == ["first"]


def test_registration_failure_names_distribution(fake_dist):
    """A plugin whose registration hook raises is reported with its distribution."""
    fake_dist("zagent_flaky", {"flaky": "def zagent_register_tools(register):\n    raise OSError('no config')\n"})
    [problem] = Kernel().problems
    assert (problem.plugin, problem.distribution) == ("flaky", "zagent_flaky") and "OSError: no config" in problem.error


def test_strict_error_carries_plugin_and_distribution(fake_dist):
    """In strict mode the raised ``PluginError`` has ``plugin`` and ``distribution`` attributes."""
    import pytest

    from zagent import PluginError

    fake_dist("zagent_broken", {"broken": "raise ImportError('x')"})
    with pytest.raises(PluginError) as info:
        Kernel(strict=True)
    assert (info.value.plugin, info.value.distribution) == ("broken", "zagent_broken")
