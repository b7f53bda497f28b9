"""Usage limits per run (``rails.usage_limits``, docs/rails.md): ``requests``, ``tool_calls`` and tokens, in one counter
shared by every part of a composite run. ``take`` counts before a request or tool call, ``add_tokens`` after a reply
(a count the server left at zero is estimated from the text); going over raises ``zagent.UsageLimitExceeded``.
``lower``: an agent's limits only tighten the kernel's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional

from zagent.errors import ConfigError, RunStopped, UsageLimitExceeded
from zagent.agentkit.counters import RunCounter, shared_counter
from zagent.agentkit.runkeys import USAGE_COUNTS
from zagent import StashKey

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Completion, LLMRequest, RunContext


#: every limit ``usage_limits`` takes
LIMITS = ("requests", "tool_calls", "input_tokens", "output_tokens", "total_tokens")
_TOKENS = ("input_tokens", "output_tokens", "total_tokens")


class UsageCounter(RunCounter):
    """The run's requests, tool calls and tokens so far (shared by every part of the run)."""

    __slots__ = ()

    def add(self, name: str, n: int) -> int:
        """Add ``n`` to ``name``; return the new count."""
        with self.lock:
            total = self.counts[name] = self.counts.get(name, 0) + n
            return total


USAGE_KEY: "StashKey[UsageCounter]" = StashKey(USAGE_COUNTS, restore=UsageCounter.from_state)
"""``ctx.stash`` key of the run's ``UsageCounter``; persistent, so a restored run keeps its counts."""


class UsageLimitsError(ConfigError, RunStopped):
    """``usage_limits`` is malformed: a ``ConfigError`` that also ends the run (rails never turn it into a deny)."""


def check_limits(value: Any, where: str = "rails.usage_limits") -> dict[str, int]:
    """``value`` as ``{limit: int >= 0}``; ``ConfigError`` naming the bad key otherwise."""
    if not isinstance(value, Mapping):
        raise UsageLimitsError(f"{where} must be an object such as {{\"requests\": 5, \"total_tokens\": 1000}}, "
                          f"got {type(value).__name__}")
    out: dict[str, int] = {}
    for key, n in value.items():
        if key not in LIMITS:
            raise UsageLimitsError(f"{where}: unknown limit {key!r}; the limits are {', '.join(LIMITS)}")
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise UsageLimitsError(f"{where}.{key} must be a whole number >= 0, got {n!r}")
        out[key] = n
    return out


def lower(base: Any, agent: Any) -> dict[str, int]:
    """The kernel's limits tightened by an agent's: the lower of the two for each key."""
    merged = check_limits(base, "the kernel's rails.usage_limits")
    for key, n in check_limits(agent, "the agent's rails.usage_limits").items():
        merged[key] = min(n, merged.get(key, n))
    return merged


def _exceeded(limit: str, count: int, allowed: int, ctx: "RunContext[Any]") -> UsageLimitExceeded:
    what = {"requests": "model requests", "tool_calls": "tool calls"}.get(limit, limit.replace("_", " "))
    return UsageLimitExceeded(
        f"run {ctx.run_id} reached its usage limit {limit}={allowed}: this would make {count} {what}; "
        f"raise rails.usage_limits.{limit} (in the kernel's or the agent's config) to allow more",
        limit=limit, count=count, allowed=allowed)


def take(limits: Any, name: str, ctx: "RunContext[Any]") -> None:
    """Count one request or tool call against ``limits``; ``UsageLimitExceeded`` when it would go over."""
    checked = check_limits(limits)
    allowed = checked.get(name)
    if allowed is None:
        return
    counter = shared_counter(ctx, USAGE_KEY, UsageCounter)
    if not counter.take(name, allowed):
        raise _exceeded(name, allowed + 1, allowed, ctx)


def give_back(limits: Any, name: str, ctx: "RunContext[Any]") -> None:
    """Undo one ``take`` of ``name`` (a tool call that did not run after all)."""
    if name in check_limits(limits):
        shared_counter(ctx, USAGE_KEY, UsageCounter).give_back(name)


def add_tokens(limits: Any, response: "Completion", ctx: "RunContext[Any]",
               request: Optional["LLMRequest"] = None) -> None:
    """Count a reply's tokens; ``UsageLimitExceeded`` when the run is now over a token limit. A count the server
    reported as zero (none sent, or a proxy dropping it) is estimated from ``request``'s and the reply's text."""
    checked = check_limits(limits)
    if not any(k in checked for k in _TOKENS):
        return
    counter = shared_counter(ctx, USAGE_KEY, UsageCounter)
    usage = response.usage
    given, made = usage.input_tokens, usage.output_tokens
    if not given or not made:  # a provider outside providerkit (network ones estimate themselves)
        from zagent.providerkit.plausible import estimate_tokens, received_chars, sent_chars

        if not given and request is not None:
            given = estimate_tokens(sent_chars(request))
        if not made:
            made = estimate_tokens(received_chars(response.message))
    counts = {"input_tokens": counter.add("input_tokens", given),
              "output_tokens": counter.add("output_tokens", made),
              "total_tokens": counter.add("total_tokens", given + made)}
    for key in _TOKENS:
        if key in checked and counts[key] > checked[key]:
            raise _exceeded(key, counts[key], checked[key], ctx)

