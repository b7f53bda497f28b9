"""Where rails read their settings: ``ctx.agent_config["rails"]`` over ``kernel.config["rails"]``.

The merge is shallow: a key the agent sets replaces the kernel-wide value
for that key as a whole (an agent's ``deny_tools`` list replaces the
kernel's, it is not appended to it). Also the tool-name patterns every rail
shares live here: an exact name, ``toolset:NAME`` (fnmatch on the tool's
toolset) or an fnmatch glob on the name (``web.*``).

This module must stay cheap: ``settings`` runs on every tool and LLM call.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Iterable, Optional

if TYPE_CHECKING:  # pragma: no cover
    from zagent import RunContext, Tool

_EMPTY: dict[str, Any] = {}


def settings(ctx: "RunContext") -> dict[str, Any]:
    """The rails settings of this run; an empty dict (shared, never mutate it) when none are set."""
    agent = ctx.agent_config.get("rails") if ctx.agent_config else None
    base = ctx.kernel.config.get("rails")
    if not base:
        return agent or _EMPTY
    if not agent:
        return base
    return {**base, **agent}


def tool_of(ctx: "RunContext", name: str) -> Optional["Tool"]:
    """The registered ``Tool`` called ``name``, or None."""
    return ctx.kernel.registries["tools"].get(name)


def toolset_of(ctx: "RunContext", name: str) -> str:
    tool = tool_of(ctx, name)
    return tool.toolset if tool is not None else ""


def matches(pattern: str, name: str, toolset: str) -> bool:
    """Does ``pattern`` (name, ``toolset:NAME`` or glob) select the tool ``name`` of ``toolset``?"""
    if pattern.startswith("toolset:"):
        return fnmatchcase(toolset, pattern[8:])
    return pattern == name or fnmatchcase(name, pattern)


def first_match(patterns: Iterable[str], name: str, toolset: str) -> Optional[str]:
    """The first pattern selecting the tool, or None."""
    for pattern in patterns:
        if matches(pattern, name, toolset):
            return pattern
    return None


def as_list(value: Any, key: str) -> list[str]:
    """A pattern list from config; a lone string counts as a list of one."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise TypeError(f"rails setting {key!r} must be a list of tool names or patterns, got {type(value).__name__}")
    return [str(v) for v in value]
