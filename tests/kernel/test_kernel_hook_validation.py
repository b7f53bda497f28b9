"""Hook implementations are validated when a plugin is registered (issue 18, item 5)."""

import pytest

import zagent
from zagent import hookimpl
from zagent.errors import PluginError


class WrapperRail:
    @hookimpl(wrapper=True)
    def zagent_before_tool_call(self, call, ctx):
        result = yield
        return result


class OldStyleWrapperRail:
    @hookimpl(hookwrapper=True)
    def zagent_before_tool_call(self, call, ctx):
        yield


class UnknownArgumentRail:
    @hookimpl
    def zagent_before_tool_call(self, call, ctx, bogus):
        return None


@pytest.mark.parametrize("plugin", [WrapperRail, OldStyleWrapperRail])
def test_wrapper_rail_is_refused_at_registration(plugin):
    """A rail declared as a (new or old style) wrapper is refused by add_plugin, naming plugin and hook."""
    k = zagent.Kernel(entry_points=False)
    with pytest.raises(PluginError) as info:
        k.add_plugin(plugin(), name="wrapping")
    assert "'wrapping'" in str(info.value)
    assert "zagent_before_tool_call" in str(info.value)
    assert "wrapper" in str(info.value)
    assert k.pm.get_plugin("wrapping") is None


def test_wrapper_rail_does_not_block_tool_calls():
    """After the refused wrapper, tool calls run normally (before the check they were all blocked)."""
    k = zagent.Kernel(entry_points=False)
    k.add_tool(lambda a, b: a + b, name="add")
    with pytest.raises(PluginError):
        k.add_plugin(WrapperRail())
    assert k.run_tool({"name": "add", "arguments": {"a": 1, "b": 2}}).content == "3"


def test_wrapper_plugin_given_at_start_is_a_problem_not_a_crash():
    """A wrapper rail passed to Kernel() is reported in kernel.problems and not registered."""
    k = zagent.Kernel([WrapperRail()], entry_points=False)
    assert any("wrapper" in str(p.error) for p in k.problems)


def test_unknown_argument_names_the_spec_arguments():
    """An implementation asking for an argument the spec lacks is refused with the spec's argument names."""
    k = zagent.Kernel(entry_points=False)
    with pytest.raises(PluginError) as info:
        k.add_plugin(UnknownArgumentRail(), name="typo")
    text = str(info.value)
    assert "'typo'" in text and "bogus" in text and "call, ctx" in text


class DefaultedUnknownRail:
    def __init__(self):
        self.seen = []

    @hookimpl
    def zagent_before_tool_call(self, call, context=None):
        self.seen.append(context)


class DefaultedKnownRail:
    @hookimpl
    def zagent_before_tool_call(self, call, ctx=None):
        return None


def test_a_misspelt_argument_with_a_default_is_refused_naming_hook_argument_and_spec():
    """``context=None`` (for ``ctx``) is refused by add_plugin, naming the hook, the argument and the spec's."""
    k = zagent.Kernel(entry_points=False)
    with pytest.raises(PluginError) as info:
        k.add_plugin(DefaultedUnknownRail(), name="misspelt")
    text = str(info.value)
    assert "'misspelt'" in text and "zagent_before_tool_call" in text
    assert "context" in text and "(it offers: call, ctx)" in text
    assert not k.has_plugin("misspelt")


def test_a_spec_argument_with_a_default_is_refused():
    """``ctx=None`` would never be passed (pluggy leaves defaulted arguments out), so it is refused too."""
    k = zagent.Kernel(entry_points=False)
    with pytest.raises(PluginError) as info:
        k.add_plugin(DefaultedKnownRail(), name="defaulted")
    assert "a default for ctx" in str(info.value)


def test_a_defaulted_argument_at_start_is_a_problem_and_the_rail_never_runs():
    """A non-strict Kernel reports the plugin in ``problems`` and skips it: its rail is not called with None."""
    rail = DefaultedUnknownRail()
    k = zagent.Kernel([rail], entry_points=False)
    k.add_tool(lambda a, b: a + b, name="add")
    [problem] = k.problems
    assert problem.plugin.startswith("DefaultedUnknownRail") and "context" in problem.error
    assert k.run_tool({"name": "add", "arguments": {"a": 1, "b": 2}}).content == "3"
    assert rail.seen == []


def test_a_strict_kernel_raises_on_a_defaulted_argument():
    """``strict=True`` raises the ``PluginError`` at construction instead of reporting it."""
    with pytest.raises(PluginError, match="context"):
        zagent.Kernel([DefaultedUnknownRail()], entry_points=False, strict=True)
