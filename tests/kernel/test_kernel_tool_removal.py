"""Tools can be unregistered one by one or a whole toolset at a time (issue 17, item 4)."""

import pytest

import zagent
from zagent.errors import ToolError


def make_kernel():
    k = zagent.Kernel(entry_points=False)
    k.add_tool(lambda a, b: a + b, name="add", toolset="math")
    k.add_tool(lambda a, b: a * b, name="mul", toolset="math")
    k.add_tool(lambda text: text.upper(), name="shout")
    return k


def test_remove_tool_unregisters_it():
    """After remove_tool, the tool is not listed and a call to it is an unknown-tool error result."""
    k = make_kernel()
    removed = k.remove_tool("add")
    assert removed.name == "add"
    assert "add" not in [t.name for t in k.tools()]
    result = k.run_tool({"name": "add", "arguments": {"a": 1, "b": 2}})
    assert result.state != "ok" and "add" in result.content


def test_remove_unknown_tool_names_the_registered_ones():
    """Removing a tool that is not there raises ToolError listing what is registered."""
    k = make_kernel()
    with pytest.raises(ToolError) as info:
        k.remove_tool("nope")
    assert "nope" in str(info.value) and "shout" in str(info.value)


def test_remove_toolset_unregisters_every_tool_in_it():
    """remove_toolset drops the toolset's tools and leaves the others."""
    k = make_kernel()
    removed = k.remove_toolset("math")
    assert sorted(t.name for t in removed) == ["add", "mul"]
    assert [t.name for t in k.tools()] == ["shout"]


def test_remove_empty_toolset_is_an_error():
    """A toolset with no tools is a ToolError naming the toolsets there are."""
    k = make_kernel()
    with pytest.raises(ToolError) as info:
        k.remove_toolset("shell")
    assert "math" in str(info.value)


def test_removed_tool_can_be_added_again():
    """A removed name is free: the same tool can be registered again without a clash."""
    k = make_kernel()
    tool = k.remove_tool("shout")
    k.add_tool(tool)
    assert k.run_tool({"name": "shout", "arguments": {"text": "hi"}}).content == "HI"
