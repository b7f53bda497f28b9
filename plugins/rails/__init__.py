"""Rails shipped with zagent: tool allow/deny lists, per-run call budgets,
argument-size limits, human approval and output redaction.

Loaded through the ``zagent`` entry point ``rails``; every setting is read
per call from ``ctx.agent_config["rails"]`` merged over
``kernel.config["rails"]``, the kernel's settings being a floor the agent can
only tighten (``config.merge``; docs/rails.md has the table)::

    k = Kernel(config={"rails": {"redact": [r"sk-[A-Za-z0-9]+"]}})
    ctx = k.context(agent="researcher", agent_config={"rails": {
        "allow_tools": ["search", "toolset:files", "web.*"],   # names, toolset:NAME, fnmatch globs
        "deny_tools": ["files.delete"],                        # wins over allow_tools
        "tool_budget": {"search": 3, "*": 50},                 # calls per tool per run
        "tool_rpm": {"search": 10},                            # calls per minute, all runs of the kernel
        "max_argument_bytes": 20000,                           # JSON-encoded size
        "approval": {"tools": ["shell.*"]},                    # plus every Tool(sensitive=True)
        "approver": "console",                                 # or approver(call, ctx) -> True/False/None
        "redact_llm": True,                                    # also redact model replies
        "redact_llm_input": True,                              # and messages sent to models
    }})

``zagent_before_tool_call`` is ``trylast``: other rails (rewrites included)
run first, so these checks see the final arguments and a human is only asked
about a call nothing else denied. Order inside: deny/allow lists → argument
size → budget → rate (``tool_rpm``, waits for a slot) → approval. A call counted against the budget and then not
approved is given back. With no settings every hook returns ``None`` after
a few dict look-ups (the before-tool rail still looks up whether the tool is
``sensitive``: sensitive tools are never run without approval, unless
``approval`` is ``false`` or ``{"sensitive": false}``). See docs/rails.md.

Per-run state lives in ``ctx.stash`` under ``StashKey``s: ``BUDGET_KEY``
(call counts, persistent: saved with checkpoints), and, from
``zagent.agentkit.runkeys`` (shared with the ReAct loop), ``PENDING_APPROVAL`` (ids
awaiting a human, a set) and ``APPROVED`` (ids a human approved, a set the
loop fills on resume); exported here as ``PENDING_KEY`` and ``APPROVED_KEY``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from zagent.hookspecs import hookimpl
from zagent import Deny

from .approval import APPROVED_KEY, AWAITING, PENDING_KEY, ask, console_approver, console_approver_now, needs_approval
from .config import settings
from .policy import BUDGET_KEY, check_lists, check_size, take_budget
from .ratelimit import check_rate, wait_for_slot
from . import usage
from .redaction import redact_completion, redact_request, redact_result

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Completion, LLMRequest, RunContext, ToolCall, ToolResult

__all__ = ["APPROVED_KEY", "AWAITING", "BUDGET_KEY", "PENDING_KEY", "console_approver", "console_approver_now"]


@hookimpl(trylast=True)
def zagent_before_tool_call(call: "ToolCall", ctx: "RunContext[Any]") -> Any:
    """Deny by list, size or budget right away; return a coroutine only when a human must be asked."""
    rails = settings(ctx)
    if not rails:
        tool = ctx.kernel.find("tools", call.name)
        if tool is None or not tool.sensitive:
            return None
        return _approve(rails, call, ctx, "the tool is marked sensitive", False)
    reason = check_lists(rails, call, ctx) or check_size(rails, call)
    if reason is not None:
        return Deny(reason)
    reason, counted = take_budget(rails, call, ctx)
    if reason is not None:
        return Deny(reason)
    if "usage_limits" in rails:
        usage.take(rails["usage_limits"], "tool_calls", ctx)  # UsageLimitExceeded ends the run
    why = needs_approval(rails, call, ctx)
    if "tool_rpm" in rails:  # counted last: a call denied above does not use a rate slot
        reason, wait = check_rate(rails, call, ctx)
        if reason is not None or wait:
            return _rate_then_approve(rails, call, ctx, reason, wait, why, counted)
    if why is None:
        return None
    return _approve(rails, call, ctx, why, counted)


async def _rate_then_approve(rails: dict[str, Any], call: "ToolCall", ctx: "RunContext[Any]", reason: Optional[str],
                             wait: float, why: Optional[str], counted: bool) -> Optional[Deny]:
    if reason is None:
        reason = await wait_for_slot(rails, call, ctx, wait)
    if reason is not None:
        if counted:
            ctx.stash[BUDGET_KEY].give_back(call.name)
        return Deny(reason)
    if why is None:
        return None
    return await _approve(rails, call, ctx, why, counted)


async def _approve(rails: dict[str, Any], call: "ToolCall", ctx: "RunContext[Any]", why: str, counted: bool) -> Optional[Deny]:
    reason: Optional[str] = "the approver failed"
    try:
        reason = await ask(rails, call, ctx, why)
    finally:
        if reason is not None and counted:  # not run now: the call does not use the budget
            ctx.stash[BUDGET_KEY].give_back(call.name)
    return None if reason is None else Deny(reason)


def zagent_check_config(config: dict[str, Any]) -> None:
    """``Kernel(config={"rails": ...})`` with a setting of the wrong type is a ``ConfigError`` now, not at a call."""
    if config.get("rails") is not None:
        from zagent.speckit.rails import check_rails

        check_rails(config["rails"], "config.rails")


def zagent_after_tool_call(call: "ToolCall", result: "ToolResult", ctx: "RunContext[Any]") -> Optional["ToolResult"]:
    """Redact ``rails["redact"]`` patterns from the result."""
    rails = settings(ctx)
    if not rails or not rails.get("redact"):
        return None
    return redact_result(rails, result)


def zagent_after_llm_call(request: "LLMRequest", response: "Completion", ctx: "RunContext[Any]") -> Optional["Completion"]:
    """With ``redact_llm: true``, redact ``rails["redact"]`` patterns from the reply's text."""
    rails = settings(ctx)
    if not rails:
        return None
    if "usage_limits" in rails:
        usage.add_tokens(rails["usage_limits"], response, ctx)
    if not rails.get("redact_llm"):
        return None
    return redact_completion(rails, response)


def zagent_before_llm_call(request: "LLMRequest", ctx: "RunContext[Any]") -> Optional["LLMRequest"]:
    """With ``redact_llm_input: true``, redact ``rails["redact"]`` patterns from the messages sent."""
    rails = settings(ctx)
    if not rails:
        return None
    if "usage_limits" in rails:
        usage.take(rails["usage_limits"], "requests", ctx)
    if not rails.get("redact_llm_input"):
        return None
    return redact_request(rails, request)
