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
