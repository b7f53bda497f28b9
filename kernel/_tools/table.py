"""A kernel's tool table: the registry edits and look-ups behind ``Kernel.tool``, ``tools``, ``add_tool``,
``remove_tool`` and ``remove_toolset``, tool sources still connecting (``PendingTools``), the holder of its tool
threads (``ToolPool``) and calls given as dicts (``as_call``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Union

from ..errors import PluginError, ToolError
from .._registry.lookups import names
from .._registry.registries import Registrar
from .._registry.registries import Entry, Registry
from .tool import Tool
from ..types import ToolCall

if TYPE_CHECKING:  # pragma: no cover
    from .threads import ToolThreads

Waiter = Callable[[Optional[str]], None]


class PendingTools:
    """Waiters of tool sources still finding their tools (MCP servers connecting): ``waiter(name)`` blocks
    until every tool that could be ``name`` is known; called only on a miss and before listing every tool."""

    def __init__(self) -> None:
        self._waiters: list[Waiter] = []

    def __bool__(self) -> bool:
        return bool(self._waiters)

    def add(self, waiter: Waiter) -> Callable[[], None]:
        """Add ``waiter``; return a function that removes it."""
        self._waiters.append(waiter)
        return lambda: self._waiters.remove(waiter) if waiter in self._waiters else None

    def wait(self, name: Optional[str] = None) -> bool:
        """Run every waiter for ``name`` (in this thread); True if there was any."""
        waiters = list(self._waiters)
        for waiter in waiters:
            waiter(name)
        return bool(waiters)

    async def await_(self, name: Optional[str] = None) -> bool:
        """``wait`` from async code, in a worker thread so the event loop keeps running."""
        if not self._waiters:
            return False
        import asyncio  # not at import time: ``import zagent`` stays light

        return await asyncio.to_thread(self.wait, name)


class ToolPool:
    """One kernel's ``ToolThreads``, made on first use from its config (``tool_threads``,
    ``tool_threads_abandoned``, ``tool_threads_abandoned_per_tool``) and again in a forked child."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.threads: Optional[ToolThreads] = None
        self._pid = 0

    def get(self) -> ToolThreads:
        """The tool threads of this process, created now if there are none yet."""
        if self.threads is None or self._pid != os.getpid():  # threads do not survive fork
            from .threads import ToolThreads  # imports asyncio: on first use

            config = self.config
            self.threads = ToolThreads(int(config.get("tool_threads", 16)), thread_name_prefix="zagent-tool",
                                       max_abandoned=int(config.get("tool_threads_abandoned", 64)),
                                       max_abandoned_per_tool=int(config.get("tool_threads_abandoned_per_tool", 8)))
            self._pid = os.getpid()
        return self.threads

    def shutdown(self) -> None:
        """Stop the threads, if any were made (running calls are not waited for)."""
        if self.threads is not None:
            self.threads.shutdown(wait=False)


def as_call(call: Union[ToolCall, dict[str, Any]]) -> ToolCall:
    """``call`` as a ``ToolCall`` (a dict is converted, with an id made up); ``ToolError`` if it is neither."""
    if isinstance(call, ToolCall):
        return call
    if isinstance(call, dict):
        import msgspec

        data = {"id": f"call_{id(call):x}", **call}
        try:
            return msgspec.convert(data, ToolCall)
        except msgspec.ValidationError as exc:
            raise ToolError(f"bad tool call {call!r}: {exc}; give at least 'name' and 'arguments'") from None
    raise ToolError(f"expected a zagent.ToolCall or dict, got {type(call).__name__}")


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
    Registrar("tools", plugin, entries)(tool, **options)
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
