"""Approvals bound to the call: a human's yes covers one call -- its tool, its arguments and an id zagent minted.

The model's tool-call id is the model's to choose (and to repeat), so it never stands for an approval. When
a loop accepts a reply's calls it mints an id per call (``zagent._model.replies.new_call_id``) and puts
``{model id: minted id}`` in ``ctx.stash[CALL_KEYS]``. The approval rail computes ``approval_key(minted, name, arguments)`` -- the
minted id and a SHA-256 of the tool name and the arguments as canonical JSON (sorted keys) -- and lets a
call through unasked only when that key is in ``ctx.stash[APPROVED]``. When it holds a call for a human
(the approver answered "later") it records the key under the call's id in ``ctx.stash[PENDING_KEYS]``;
the loop keeps it with the run and, when the human approves that id, adds the key to the approved set.

So a later call reusing an approved id (other arguments, or the same ones in a later reply) is a new call
and asks again; a call outside a loop (no minted id) is never pre-approved.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Optional

import msgspec

from ..speckit.trust import resolve
from .runkeys import CALL_KEYS
from .specregex import check_spec_regexes

if TYPE_CHECKING:  # pragma: no cover
    from .._runs.context import RunContext
    from ..kernel import Kernel
    from ..types import ToolCall, ToolResult

__all__ = ["approval_key", "bound_key", "declined", "resolve_approver", "shown_arguments"]

DECLINED = "a human declined the call"

_canonical = msgspec.json.Encoder(order="sorted", enc_hook=repr).encode


def shown_arguments(arguments: Any, limit: int, *, per_value: int = 200) -> str:
    """``arguments`` as JSON for a human deciding about the call: whole when at most ``limit`` characters,
    else every argument's name with its value cut at ``per_value`` characters (saying how much was cut), so a
    model cannot push the argument that matters (``"path": "/"``) past the cut behind a long harmless one."""
    whole = msgspec.json.encode(arguments, enc_hook=repr).decode()
    if len(whole) <= limit or not isinstance(arguments, dict):
        return whole if len(whole) <= limit else f"{whole[:limit]}... ({len(whole) - limit} more characters)"
    parts = []
    for key, value in arguments.items():
        text = msgspec.json.encode(value, enc_hook=repr).decode()
        if len(text) > per_value:
            text = f"{text[:per_value]}... ({len(text) - per_value} more characters)"
        parts.append(f"{msgspec.json.encode(str(key)).decode()}: {text}")
    return "{" + ", ".join(parts) + "}"


def approval_key(minted: str, name: str, arguments: Any) -> str:
    """What an approval of the call binds: its minted id, tool name and canonical arguments."""
    digest = hashlib.sha256(name.encode() + b"\0" + _canonical(arguments)).hexdigest()
    return f"{minted}:{digest}"


def bound_key(call: "ToolCall", ctx: "RunContext[Any]") -> Optional[str]:
    """The approval key of ``call`` in ``ctx``'s run, or ``None`` when no loop minted an id for it."""
    minted = (ctx.stash.get(CALL_KEYS) or {}).get(call.id)
    return None if minted is None else approval_key(minted, call.name, call.arguments)


def declined(call: "ToolCall") -> "ToolResult":
    """The blocked result of a call a human declined, as every loop reports it to the model."""
    from ..types import ToolResult

    return ToolResult(call_id=call.id, name=call.name, state="blocked", error=DECLINED,
                      content=f"Error: the call was blocked: {DECLINED}")


def resolve_approver(rails: dict[str, Any], kernel: Optional["Kernel"] = None) -> dict[str, Any]:
    """A spec's ``rails`` with an ``approver`` import path resolved now, under the trust in force
    (so ``trust=True`` or the CLI's folder rule count; at run time only ``trusted_imports`` would)."""
    check_spec_regexes(rails)  # spec regexes are bounded (docs/security.md): refused when the spec loads
    approver = rails.get("approver") if isinstance(rails, dict) else None
    if not isinstance(approver, str) or ":" not in approver:
        return rails
    return {**rails, "approver": resolve(approver, key="rails.approver", kernel=kernel)}
