"""The synchronous tool rails: ``check_lists`` (deny, then allow), ``check_size`` (``max_argument_bytes``) and
``take_budget`` (``tool_budget``, counted per run under ``BUDGET_KEY``). Each returns a deny reason naming the rule, or
None; none awaits, and the counter holds a lock, so counting is atomic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import msgspec
from zagent.agentkit.runkeys import BUDGET_COUNTS
from zagent.agentkit.counters import RunCounter, shared_counter
from zagent import StashKey

from .config import Layers, as_list, first_deny, first_folded, first_match, toolset_of

if TYPE_CHECKING:  # pragma: no cover
    from zagent import RunContext, ToolCall



def check_lists(rails: dict[str, Any], call: "ToolCall", ctx: "RunContext[Any]") -> Optional[str]:
    """``deny_tools`` (any match blocks) then ``allow_tools`` (no match blocks)."""
    deny, allow = rails.get("deny_tools"), rails.get("allow_tools")
    if not deny and allow is None:
        return None
    toolset = toolset_of(ctx, call.name)
    who = _who(ctx)
    if deny:
        rule = first_deny(as_list(deny, "deny_tools"), call.name, toolset)
        if rule is not None:
            return f"tool {call.name!r} is not allowed{who}: it matches deny_tools rule {rule!r}"
    for layer in (allow if isinstance(allow, Layers) else (allow,)):
        if layer is not None and first_match(as_list(layer, "allow_tools"), call.name, toolset) is None:
            allowed = ", ".join(as_list(layer, "allow_tools")) or "none"
            return f"tool {call.name!r} is not allowed{who}: it matches no allow_tools rule (allowed: {allowed})"
    return None


def check_size(rails: dict[str, Any], call: "ToolCall") -> Optional[str]:
    """``max_argument_bytes``: the arguments' JSON encoding must not be longer."""
    limit = rails.get("max_argument_bytes")
    if limit is None:
        return None
    size = len(msgspec.json.encode(call.arguments, enc_hook=repr))
    if size > int(limit):
        return (f"the arguments of {call.name!r} are {size} bytes as JSON, over the limit of {int(limit)} "
                f"(max_argument_bytes); send shorter arguments")
    return None


def budget_limit(budget: dict[str, Any], name: str, toolset: str) -> tuple[Optional[str], Optional[int]]:
    """The rule and limit for tool ``name``: exact name, then ``toolset:``/glob rules in order, then ``*``; a rule
    matching only the name read folded (``config.first_folded``: a server's ``Delete_File`` for ``delete_*``)
    applies when it is lower than ``*``, so folding only tightens."""
    if name in budget:
        return name, int(budget[name])
    rules = [k for k in budget if k != "*"]
    rule = first_match(rules, name, toolset)
    if rule is not None:
        return rule, int(budget[rule])
    star = int(budget["*"]) if "*" in budget else None
    rule = first_folded(rules, name, toolset)
    if rule is not None and (star is None or int(budget[rule]) < star):
        return rule, int(budget[rule])
    if star is not None:
        return "*", star
    return None, None


class CallCounter(RunCounter):
    """Calls made so far in one run, per tool name (``ctx.stash[BUDGET_KEY]``): a ``zagent.agentkit.counters.RunCounter``
    shared by every part of a composite run (a group chat's turns, a workflow's nodes)."""

    __slots__ = ()


BUDGET_KEY: "StashKey[CallCounter]" = StashKey(BUDGET_COUNTS, restore=CallCounter.from_state)
"""``ctx.stash`` key of the per-run ``CallCounter``; persistent, so a restored run keeps its budget."""


def take_budget(rails: dict[str, Any], call: "ToolCall", ctx: "RunContext[Any]") -> tuple[Optional[str], bool]:
    """``tool_budget``: count this call; return (deny reason, whether a call was counted)."""
    budget = rails.get("tool_budget")
    if not budget:
        return None, False
    rule, limit = None, None
    for layer in (budget if isinstance(budget, Layers) else (budget,)):  # the lowest limit of the layers wins
        if not layer:
            continue
        if not isinstance(layer, dict):
            raise TypeError(f"rails setting 'tool_budget' must be a dict of tool pattern -> calls, "
                            f"got {type(layer).__name__}")
        r, n = budget_limit(layer, call.name, toolset_of(ctx, call.name))
        if n is not None and (limit is None or n < limit):
            rule, limit = r, n
    if limit is None:
        return None, False
    counter = shared_counter(ctx, BUDGET_KEY, CallCounter)  # one per run; a restored run's counts come back
    if counter.take(call.name, limit):
        return None, True
    return (f"tool {call.name!r} has used its budget of {limit} call{'s' if limit != 1 else ''} "
            f"per run (tool_budget rule {rule!r}); answer with what you have or use another tool"), False


def _who(ctx: "RunContext[Any]") -> str:
    return f" for agent {ctx.agent!r}" if ctx.agent else ""
