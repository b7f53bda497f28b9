"""The tool registry edits and look-ups behind ``Kernel.tool``, ``tools``, ``add_tool``, ``remove_tool`` and
``remove_toolset`` (handed the kernel's registries and pending tool sources, not the kernel)."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Union

from ..errors import PluginError, ToolError
from .._registry.lookups import names
from .pending import PendingTools
from .._registry.registries import BuiltinRegister
from .._registry.registries import Entry, Registry
from .tool import Tool


def find(registries: dict[str, Registry], pending: PendingTools, name: str) -> Tool:
    """The tool ``name``, waiting on a miss for tool sources still connecting; ``ToolError`` if none."""
    tool: Optional[Tool] = registries["tools"].get(name)
    if tool is None and pending.wait(name):  # e.g. an MCP server still connecting
        tool = registries["tools"].get(name)
    if tool is None:
        raise ToolError(f"unknown tool {name!r}; registered tools: {names(registries, 'tools')}")
    return tool


def select(registries: dict[str, Registry], pending: PendingTools, wanted: Optional[Iterable[str]],
           toolset: Union[str, Iterable[str], None], available_only: bool) -> list[Tool]:
    """See ``Kernel.tools`` (``toolset``: one name, or several: the tools of any of them)."""
    if isinstance(wanted, str):  # one name given on its own
        wanted = [wanted]
    if wanted is None:
        pending.wait(None)
    sets = None if toolset is None else {toolset} if isinstance(toolset, str) else set(toolset)
    chosen = [find(registries, pending, n) for n in wanted] if wanted is not None else registries["tools"].values()
    return [t for t in chosen
            if (sets is None or t.toolset in sets) and (not available_only or t.is_available())]


def tool_definitions(kernel: Any, toolsets: Union[str, Iterable[str], None] = None,
                     include_unavailable: bool = False) -> list[dict[str, Any]]:
    """``Kernel.tool_definitions``: Agent-Z's ``get_definitions`` -- an OpenAI-style function entry for each
    tool of ``toolsets`` (all when ``None``; available ones unless ``include_unavailable``), with its toolset
    and emoji as ``metadata``."""
    tools = kernel.tools(toolset=toolsets, available_only=not include_unavailable)
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.parameters},
             "metadata": {"toolset": t.toolset, "emoji": t.emoji}} for t in tools]


def add(registries: dict[str, Registry], describe: Callable[[str], str], tool: Any, plugin: str,
        options: dict[str, Any]) -> Tool:
    """Register ``tool`` attributed to ``plugin``; the first clash is raised."""
    entries: list[tuple[str, Entry]] = []
    BuiltinRegister("tools", plugin, entries)(tool, **options)
    errors: list[PluginError] = registries["tools"].merge([e for _, e in entries], describe)
    if errors:
        raise errors[0]
    added: Tool = entries[0][1].obj
    return added


def remove(registries: dict[str, Registry], name: str) -> Tool:
    """Unregister the tool ``name``; ``ToolError`` naming the registered tools if there is none."""
    if name not in registries["tools"]:
        raise ToolError(f"cannot remove tool {name!r}: no such tool; registered tools: {names(registries, 'tools')}")
    removed: Tool = registries["tools"].drop(name).obj
    return removed


def remove_set(registries: dict[str, Registry], toolset: str) -> list[Tool]:
    """Unregister every tool of ``toolset``; ``ToolError`` naming the toolsets if it has none."""
    tools = registries["tools"]
    found = [t.name for t in tools.values() if t.toolset == toolset]
    if not found:
        sets = sorted({t.toolset for t in tools.values() if t.toolset})
        raise ToolError(f"cannot remove toolset {toolset!r}: no tool is in it; toolsets: {', '.join(sets) or 'none'}")
    return [tools.drop(n).obj for n in found]
