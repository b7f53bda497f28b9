"""Where rails read their settings: ``settings(ctx)`` merges ``ctx.agent_config["rails"]`` (after any callers'
``outer_rails``, outermost first) over ``kernel.config["rails"]``, tightening only (``merge``; docs/rails.md has the
table). Also the tool patterns every rail shares (``matches``): an exact name, ``toolset:NAME`` or an fnmatch glob.
Cheap: it runs on every tool and LLM call.
"""

from __future__ import annotations

import functools
import re
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Iterable, Optional

if TYPE_CHECKING:  # pragma: no cover
    from zagent import RunContext, Tool

_EMPTY: dict[str, Any] = {}

#: every setting the rails plugin reads (docs/rails.md; docs/security.md classes each)
KEYS = ("deny_tools", "allow_tools", "tool_budget", "tool_rpm", "tool_rpm_wait", "max_argument_bytes", "approval",
        "approver", "redact", "redact_with", "redact_llm", "redact_llm_input", "usage_limits")


_ABSENT = object()


class Layers(tuple):  # type: ignore[type-arg]
    """The kernel's and the agent's values of one setting, every one of which applies."""

    __slots__ = ()


def settings(ctx: "RunContext[Any]") -> dict[str, Any]:
    """The rails settings of this run; an empty dict (shared, never mutate it) when none are set."""
    config = ctx.agent_config
    base = ctx.kernel.config.get("rails")
    if not config:
        return base or _EMPTY
    agent = config.get("rails")
    if "outer_rails" in config:  # an agent called as a tool: its callers' rails apply too, outermost first
        for layer in config["outer_rails"] or ():
            base = merge(base or _EMPTY, layer) if layer else base
    if not agent:
        return base or _EMPTY
    return merge(base or _EMPTY, agent)


def merge(base: dict[str, Any], agent: dict[str, Any]) -> dict[str, Any]:
    """The agent's rails over the kernel's, tightening only (docs/rails.md has the table, key by key)."""
    merged = dict(base)
    for key, value in agent.items():
        old = base.get(key, _ABSENT)
        if key == "approval":
            merged[key] = stacked(base.get(key), value)  # the kernel's absent approval is the default
        elif old is _ABSENT or old is None:
            merged[key] = value
        elif key in ("deny_tools", "redact"):
            merged[key] = as_list(old, key) + as_list(value, key)
        elif key in ("allow_tools", "tool_budget", "tool_rpm"):
            merged[key] = stacked(old, value)
        elif key == "max_argument_bytes":
            merged[key] = value if value is not None and int(value) < int(old) else old
        elif key in ("redact_llm", "redact_llm_input"):
            merged[key] = bool(old) or bool(value)
        elif key == "tool_rpm_wait":  # the kernel's deny over its rate may not become a wait (a run held for minutes)
            merged[key] = False if old is False or value is False else value
        elif key in ("approver", "redact_with"):
            pass  # the kernel's wins
        elif key == "usage_limits":
            from .usage import lower

            merged[key] = lower(old, value)
        else:
            merged[key] = value
    return merged


def stacked(old: Any, value: Any) -> Layers:
    """``old``'s layers and ``value``, one flat ``Layers``: an agent called as a tool by an agent, each with its own
    rules, merges three deep, and every rail reads the layers one level deep (a nested one would read as no rule)."""
    return Layers((*(old if isinstance(old, Layers) else (old,)), value))


def tool_of(ctx: "RunContext[Any]", name: str) -> Optional["Tool"]:
    """The registered ``Tool`` called ``name``, or None."""
    return ctx.kernel.find("tools", name)


def toolset_of(ctx: "RunContext[Any]", name: str) -> str:
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


def first_deny(patterns: Iterable[str], name: str, toolset: str) -> Optional[str]:
    """``first_match`` for deny rules, then ``first_folded``. Only for rules that tighten (denies, approval,
    budgets, rates): folding an allow rule would widen it."""
    patterns = list(patterns)
    found = first_match(patterns, name, toolset)
    return found if found is not None else first_folded(patterns, name, toolset)


def first_folded(patterns: Iterable[str], name: str, toolset: str) -> Optional[str]:
    """The first name pattern selecting the name as a server may disguise it: case ignored, without its
    toolset's prefix, and read as words (``_``, ``-``, ``.`` and camel case alike: a server's ``fs.Delete-File``
    or ``fs.deleteFile`` meets ``delete_*``; ``deleted_log`` does not)."""
    folded, prefix = name.casefold(), toolset.casefold()
    names = {folded, _words(name)}
    if prefix and folded.startswith(prefix) and len(folded) > len(prefix):
        bare = name[len(prefix):].lstrip("._-:/")  # tool names are ASCII: casefold keeps their length
        names |= {bare.casefold(), _words(bare)}
    for pattern in patterns:
        if pattern.startswith("toolset:"):
            continue
        wanted = {pattern.casefold()} if "[" in pattern else {pattern.casefold(), _words(pattern)}
        if any(fnmatchcase(n, w) for n in names for w in wanted):
            return pattern
    return None


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[._\-]+")


@functools.lru_cache(maxsize=4096)  # rails run on every call: the same few names and patterns each time
def _words(text: str) -> str:
    """``text`` folded with its words joined by one ``_`` (``Delete-File``, ``deleteFile``: ``delete_file``)."""
    return _SEPARATORS.sub("_", _CAMEL.sub("_", text).casefold())


def as_list(value: Any, key: str) -> list[str]:
    """A pattern list from config; a lone string counts as a list of one."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise TypeError(f"rails setting {key!r} must be a list of tool names or patterns, got {type(value).__name__}")
    return [str(v) for v in value]
