"""Hook specifications, rails: ``zagent_before_*`` / ``zagent_after_*`` around tool and LLM calls.

Exported from ``zagent.hookspecs`` (read its docstring for how the kernel calls hooks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .markers import hookspec

if TYPE_CHECKING:  # pragma: no cover - types only
    from .._runs.context import RunContext
    from ..types import Completion, LLMRequest, ToolCall, ToolResult

# ---------------------------------------------------------------------------
# Rails: run in order, each seeing what the previous ones decided.
# ---------------------------------------------------------------------------


@hookspec
def zagent_before_tool_call(call: "ToolCall", ctx: "RunContext[Any]") -> Any:
    """Inspect a tool call before it runs; allow, deny or rewrite it.

    Runs for *every* tool call that goes through ``Kernel.arun_tool``, after the
    arguments were validated. Return ``None`` to allow, ``zagent.Deny(reason)``
    to block (the model is told ``reason``; later rails are not asked, so a
    human-approval rail never prompts for a call already denied), or
    ``zagent.Rewrite(arguments)`` to replace the arguments (validated again;
    later rails see the new call). May return an awaitable.

    :param call: the call, with decoded ``arguments``.
    :param ctx: the run's context: agent, run id, per-run ``stash`` for budgets.

    Example::

        def zagent_before_tool_call(call, ctx):
            if call.name == "shell":
                return zagent.Deny("shell commands are not allowed here")
    """


@hookspec
def zagent_after_tool_call(call: "ToolCall", result: "ToolResult", ctx: "RunContext[Any]") -> Any:
    """Inspect, redact or replace a tool's result before the model sees it.

    Runs after every tool call, whatever its state. Return ``None`` to keep the
    result or a new ``ToolResult`` to replace it (later rails see the new one).
    May return an awaitable.

    :param call: the call that ran (after any rewrite).
    :param result: its result.
    :param ctx: the run's context.

    A rail that raises, or returns anything but ``None``/``ToolResult``,
    withholds the result (state ``blocked``).

    Example::

        def zagent_after_tool_call(result):
            if "PRIVATE KEY" in result.content:
                return zagent.ToolResult(call_id=result.call_id, name=result.name,
                                         state="blocked", content="Error: result withheld")
    """


@hookspec
def zagent_before_llm_call(request: "LLMRequest", ctx: "RunContext[Any]") -> Any:
    """Inspect a model request before it is sent; allow, deny or replace it.

    Return ``None``, ``zagent.Deny(reason)`` (raises ``ToolBlocked`` in the
    caller) or a new ``LLMRequest``. May return an awaitable.

    :param request: messages, tool specs, options of this call.
    :param ctx: the run's context (``ctx.usage`` holds the run's tokens so far).

    Example::

        def zagent_before_llm_call(ctx):
            if ctx.usage.total_tokens > 100_000:
                return zagent.Deny("token budget spent")
    """


@hookspec
def zagent_after_llm_call(request: "LLMRequest", response: "Completion", ctx: "RunContext[Any]") -> Any:
    """Inspect a model reply: output rails, cost and token accounting.

    Return ``None`` or a replacement ``Completion``. For streamed calls it runs
    once, on the assembled reply. May return an awaitable.

    :param request: what was sent.
    :param response: the reply.
    :param ctx: the run's context.

    Example::

        def zagent_after_llm_call(response, ctx):
            ctx.stash["output_tokens"] = ctx.stash.get("output_tokens", 0) + response.usage.output_tokens
    """
