"""The cap on the tool calls one model reply may run (docs/rails.md): ``reply_limit`` is the profile's
``max_tool_calls_per_reply``, lowered (never raised) by the agent's and the kernel's ``rails``; ``cap_calls`` keeps
the first ``limit`` calls and one more, marked ``refused``, standing for the rest; ``refuse_past`` marks every
call past ``limit`` of a batch read back (a checkpoint's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import msgspec

if TYPE_CHECKING:  # pragma: no cover
    from .._runs.context import RunContext
    from ..types import Message, ToolCall


def reply_limit(profile_limit: int, ctx: Optional["RunContext[Any]"]) -> int:
    """The cap for a turn: the profile's, lowered by ``max_tool_calls_per_reply`` of the agent's, its callers' and
    the kernel's rails."""
    limit = profile_limit
    if ctx is not None:
        config = ctx.agent_config or {}
        # an agent called as a tool: its callers' rails (``outer_rails``) cap its replies too
        layers = [config.get("rails"), *(config.get("outer_rails") or ()), ctx.kernel.config.get("rails")]
        for rails in layers:
            value = rails.get("max_tool_calls_per_reply") if isinstance(rails, dict) else None
            if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
                limit = min(limit, value)  # rails only tighten
    return limit


def cap_calls(reply: "Message", calls: list["ToolCall"], limit: int) -> tuple["Message", list["ToolCall"]]:
    """``(reply, calls)`` with at most ``limit`` calls to run plus one refused call standing for the rest."""
    if len(calls) <= limit:
        return reply, calls
    why = (f"this reply made {len(calls)} tool calls and at most {limit} run per reply: the first {limit} ran, "
           f"this one and the {len(calls) - limit - 1} after it did not. Make at most {limit} calls per reply")
    kept = calls[:limit] + [msgspec.structs.replace(calls[limit], refused=why)]
    if reply.tool_calls:
        reply = msgspec.structs.replace(reply, tool_calls=kept)
    return reply, kept


def refuse_past(calls: list["ToolCall"], limit: int) -> list["ToolCall"]:
    """``calls`` (a batch read back, e.g. from a checkpoint, which may be edited) with each past the first ``limit``
    marked ``refused``; the same list when none needs it."""
    if len(calls) <= limit or all(c.refused for c in calls[limit:]):
        return calls
    why = (f"the batch holds {len(calls)} tool calls and at most {limit} run per reply: the first {limit} ran, "
           f"this one did not. Make at most {limit} calls per reply")
    return [*calls[:limit], *(c if c.refused else msgspec.structs.replace(c, refused=why) for c in calls[limit:])]
