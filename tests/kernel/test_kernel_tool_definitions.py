"""Tool selection by several toolsets at once, and Agent-Z's tool definitions carrying toolset and emoji."""

from zagent import Kernel, tool

SEED = ('Seed 004 (Agent-Z ToolRegistry.get_definitions): "for ts in toolsets: '
        'tool_names.update(self._toolsets.get(ts, set()))" and "metadata": {"toolset": tool.toolset, "emoji": tool.emoji}')


def kernel_with_sets():
    k = Kernel(entry_points=False)
    k.add_tool(tool(lambda city: "sunny", name="weather", toolset="web", emoji="🌦"))
    k.add_tool(tool(lambda a, b: a + b, name="add", toolset="math", emoji="➕"))
    k.add_tool(tool(lambda cmd: "", name="sh", toolset="shell"))
    k.add_tool(tool(lambda: "", name="off", toolset="math", available=lambda: False))
    return k


def test_tools_of_several_toolsets_at_once():
    """Seed 004 (Agent-Z get_definitions): "if toolsets: tool_names = set(); for ts in toolsets:
    tool_names.update(self._toolsets.get(ts, set()))" (the tools of every toolset listed). ``k.tools(toolset=
    [...])`` gives the union of the listed toolsets, an unknown one adding nothing."""
    k = kernel_with_sets()
    assert sorted(t.name for t in k.tools(toolset=["web", "math", "nope"])) == ["add", "weather"]
    assert [t.name for t in k.tools(toolset="shell")] == ["sh"]


def test_tool_definitions_carry_toolset_and_emoji_metadata():
    """Seed 004 (Agent-Z get_definitions): "{"type": "function", "function": {"name": ..., "description": ...,
    "parameters": ...}, "metadata": {"toolset": tool.toolset, "emoji": tool.emoji}}" (each definition for
    the LLM carries its toolset and emoji). ``k.tool_definitions(toolsets=[...])`` returns that shape for the
    available tools of those toolsets; ``include_unavailable=True`` adds the others."""
    k = kernel_with_sets()
    defs = k.tool_definitions(toolsets=["web", "math"])
    by_name = {d["function"]["name"]: d for d in defs}
    assert sorted(by_name) == ["add", "weather"]
    assert by_name["weather"]["type"] == "function"
    assert by_name["weather"]["metadata"] == {"toolset": "web", "emoji": "🌦"}
    assert by_name["add"]["function"]["parameters"]["required"] == ["a", "b"]
    assert "off" in {d["function"]["name"] for d in k.tool_definitions(toolsets=["math"], include_unavailable=True)}
    assert len(k.tool_definitions()) == 3
