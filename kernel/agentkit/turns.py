"""Default generation bounds per turn kind, so a small local model's turns stay short and cheap.

A model whose profile bounds generations (``ModelProfile.max_tokens``: unknown models on local
servers, 2048) gets a tighter bound on turns that need few tokens: ``DECIDE`` for a mode decision
(one word), ``TOOL`` for a turn that offers tools (calls, or a short answer). Final answers keep the
profile's bound. Nothing changes when the user bounded generations themselves (``max_tokens`` in the
model's options or profile) or the profile has no bound (hosted models). ``bound(llm, kind)`` is the
request options to add: two dict lookups a call.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DECIDE", "TOOL", "bound"]

DECIDE = 8
"""Tokens for a mode decision ("yes"/"no")."""
TOOL = 256
"""Tokens for a turn that offers tools: a few calls with their arguments, or a short answer."""

_NONE: dict[str, Any] = {}


def bound(llm: Any, tokens: int) -> dict[str, Any]:
    """``{"max_tokens": n}`` for a turn needing about ``tokens`` tokens, or ``{}`` (see the module docstring)."""
    limit = llm.profile.max_tokens
    if limit is None or "max_tokens" in llm.profile_overrides:
        return _NONE
    fields = getattr(llm, "fields", None)
    if fields and ("max_tokens" in fields or "max_completion_tokens" in fields):
        return _NONE
    return {"max_tokens": min(limit, tokens)}
