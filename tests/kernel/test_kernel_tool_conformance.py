"""zagent.testing.tools.ToolPluginTests: passes on a good tool plugin and catches a sloppy one (issue 17, item 19)."""

import pathlib
import sys

import pytest

from zagent.testing.tools import ToolPluginTests

HERE = pathlib.Path(__file__).resolve().parent / "toolplugins"
sys.path.insert(0, str(HERE))

import good_tools  # noqa: E402


class TestGoodToolPlugin(ToolPluginTests):
    """The whole suite passes on a plugin that follows every rule."""

    plugins = [good_tools]
    modules = ["good_tools"]
    sample_calls = {"forecast": {"city": "Oslo"}, "nap": {"seconds": 0}}
    slow_calls = {"nap": ({"seconds": 2}, 0.05)}


class _Sloppy(ToolPluginTests):
    plugins = ["sloppy_tools"]
    modules = ["sloppy_tools"]


@pytest.mark.parametrize("rule", [
    "test_tools_and_parameters_are_described",
    "test_timeouts_are_finite_or_inline",
])
def test_sloppy_plugin_fails_the_rule(rule):
    """Undocumented tools and a tool without a timeout fail their rules."""
    suite = _Sloppy()
    k = suite.make_kernel()
    try:
        with pytest.raises(AssertionError):
            getattr(suite, rule)(k)
    finally:
        k.close()


def test_import_side_effects_are_caught(tmp_path):
    """A module that prints and starts a thread at import fails the import rule."""
    with pytest.raises(AssertionError) as info:
        _Sloppy().test_import_has_no_side_effects(tmp_path)
    assert "printed" in str(info.value) or "thread" in str(info.value)
