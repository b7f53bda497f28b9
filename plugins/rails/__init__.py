"""Rails shipped with zagent (docs/rails.md): tool allow/deny lists, budgets, rate and argument-size limits, usage
limits, human approval and redaction, read per call from ``ctx.agent_config["rails"]`` over
``kernel.config["rails"]`` (a floor: ``config.merge``). Before a tool call (``trylast``): lists, size, budget, usage,
rate, approval; the first deny wins. Per-run state: ``BUDGET_KEY``, ``PENDING_KEY``, ``APPROVED_KEY``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from zagent.hookspecs import asks_humans, hookimpl
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


def zagent_config_keys() -> tuple[str, ...]:
    """The settings this plugin reads: the kernel's and each agent's ``rails``, and the rails of the agents calling
    an agent offered as a tool (``outer_rails``, and whose they are, ``outer_agents``: set by
    ``zagent.plugins.actions.astool``)."""
    return ("rails", "outer_rails", "outer_agents")


@hookimpl(trylast=True)
@asks_humans  # the kernel runs a sensitive tool only with a rail like this one loaded
def zagent_before_tool_call(call: "ToolCall", ctx: "RunContext[Any]") -> Any:
    """Deny by list, size or budget right away; return a coroutine only when the call must wait for a rate slot,
    may be denied by the rate limit or a human must be asked (a call not run then is given back: ``_give_back``)."""
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
        _give_back(rails, call, ctx, counted)
        return Deny(reason)
    if why is None:
        return None
    return await _approve(rails, call, ctx, why, counted)


async def _approve(rails: dict[str, Any], call: "ToolCall", ctx: "RunContext[Any]", why: str, counted: bool) -> Optional[Deny]:
    reason: Optional[str] = "the approver failed"
    try:
        reason = await ask(rails, call, ctx, why)
    finally:
        if reason is not None:
            _give_back(rails, call, ctx, counted)
    return None if reason is None else Deny(reason)


def _give_back(rails: dict[str, Any], call: "ToolCall", ctx: "RunContext[Any]", counted: bool) -> None:
    """A call not run now (denied by the rate, declined or awaiting a human) uses neither its ``tool_budget``
    (when ``counted``) nor a tool call of ``usage_limits``."""
    if counted:
        ctx.stash[BUDGET_KEY].give_back(call.name)
    if "usage_limits" in rails:
        usage.give_back(rails["usage_limits"], "tool_calls", ctx)


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
        usage.add_tokens(rails["usage_limits"], response, ctx, request)
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
