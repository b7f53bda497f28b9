"""``tool_rpm``: calls per rolling minute per tool, shared by every run of a kernel (crewai's ``max_rpm``;
docs/rails.md). Rules match as ``tool_budget``'s; the kernel's limit counts all its calls, an agent's that agent's;
both apply. Over a limit a call waits for a slot (``wait_for_slot``), or with ``tool_rpm_wait: false`` is denied.
The windows (``RateWindows``, per kernel) are thread-safe.
"""

from __future__ import annotations

import collections
import threading
import time
from typing import TYPE_CHECKING, Any, Optional

from zagent import StashKey

from .config import Layers, toolset_of
from .policy import budget_limit

if TYPE_CHECKING:  # pragma: no cover
    from zagent import RunContext, ToolCall

WINDOW = 60.0


class RateWindows:
    """Call times in the last ``WINDOW`` seconds, per (scope, rule)."""

    def __init__(self, clock: Any = time.monotonic, sleep: Any = None) -> None:
        self.clock = clock
        self.sleep = sleep  # an async sleep(seconds); asyncio.sleep when None (tests pass a fake clock's)
        self.lock = threading.Lock()
        self.calls: dict[tuple[str, str], collections.deque[float]] = {}
        self.swept = 0.0

    def take_all(self, rules: list[tuple[tuple[str, str], int]]) -> float:
        """If every window has room, count a call now in each and return 0; else count nothing and
        return the seconds until all of them have room. Once a ``WINDOW``, windows with no call left in it are
        dropped (agents named anew, each with a rule, would keep one each for the kernel's life)."""
        now = self.clock()
        wait = 0.0
        with self.lock:
            if now - self.swept >= WINDOW:
                self.swept = now
                for key in [k for k, times in self.calls.items() if not times or now - times[-1] >= WINDOW]:
                    del self.calls[key]
            for key, limit in rules:
                times = self.calls.setdefault(key, collections.deque())
                while times and now - times[0] >= WINDOW:
                    times.popleft()
                if len(times) >= limit:
                    wait = max(wait, WINDOW - (now - times[len(times) - limit]))
            if wait:
                return wait
            for key, _limit in rules:
                self.calls[key].append(now)
        return 0.0


WINDOWS: "StashKey[RateWindows]" = StashKey("zagent.rails.rpm")


def rpm_rules(rails: dict[str, Any], call: "ToolCall", ctx: "RunContext[Any]") -> list[tuple[tuple[str, str], int]]:
    """The (window key, limit) pairs that apply to this call: the kernel's and the agent's."""
    setting = rails.get("tool_rpm")
    if not setting:
        return []
    kernel_rpm = ctx.kernel.config.get("rails", {}).get("tool_rpm") if ctx.kernel.config.get("rails") else None
    layers = setting if isinstance(setting, Layers) else (setting,)
    rules = []
    toolset = toolset_of(ctx, call.name)
    owners = _owners(ctx) if ctx.agent_config and "outer_agents" in ctx.agent_config else {}
    for layer in layers:
        if not layer:
            continue
        if not isinstance(layer, dict):
            raise TypeError(f"rails setting 'tool_rpm' must be a dict of tool pattern -> calls per minute, "
                            f"got {type(layer).__name__}")
        rule, limit = budget_limit(layer, call.name, toolset)
        if rule is None or limit is None:  # no rule matched (the two are None together)
            continue
        scope = "kernel" if layer is kernel_rpm else f"agent:{owners.get(id(layer)) or ctx.agent or '?'}"
        rules.append(((scope, rule if rule != "*" else f"*:{call.name}"), max(0, limit)))
    return rules


def _owners(ctx: "RunContext[Any]") -> dict[int, str]:
    """The ``tool_rpm`` of each caller's rails (an agent called as a tool) -> that caller's name: a caller's limit
    counts in the caller's own window, so calling agents as tools does not multiply it."""
    config = ctx.agent_config or {}
    found: dict[int, str] = {}
    for rails, name in zip(config.get("outer_rails") or (), config.get("outer_agents") or ()):
        rpm = rails.get("tool_rpm") if isinstance(rails, dict) else None
        if rpm is not None and name != "?":
            found[id(rpm)] = str(name)
    return found


def check_rate(rails: dict[str, Any], call: "ToolCall", ctx: "RunContext[Any]") -> tuple[Optional[str], float]:
    """(deny reason, seconds to wait): both empty when the call may run now (and it was counted)."""
    rules = rpm_rules(rails, call, ctx)
    if not rules:
        return None, 0.0
    for key, limit in rules:
        if limit == 0:
            return f"tool {call.name!r} may not be called at all (tool_rpm rule {key[1]!r} is 0)", 0.0
    wait = ctx.kernel.stash.get_or_create(WINDOWS, RateWindows).take_all(rules)
    if wait and rails.get("tool_rpm_wait", True) is False:
        limits = ", ".join(f"{limit} per minute (rule {key[1]!r})" for key, limit in rules)
        return (f"tool {call.name!r} reached its rate limit of {limits}; try again in {wait:.0f} s "
                "or do without it"), 0.0
    return None, wait


async def wait_for_slot(rails: dict[str, Any], call: "ToolCall", ctx: "RunContext[Any]", wait: float) -> Optional[str]:
    """Sleep until the call fits every window (at most a few windows); a deny reason if it never did."""
    import asyncio

    windows = ctx.kernel.stash.get_or_create(WINDOWS, RateWindows)
    sleep = windows.sleep or asyncio.sleep
    for _ in range(4):
        await sleep(wait)
        reason, wait = check_rate(rails, call, ctx)
        if reason is not None or not wait:
            return reason
    return f"tool {call.name!r} found no free slot under its tool_rpm limit after waiting; try again later"
