"""Generation bounds per turn kind, for models whose profile bounds generations (``ModelProfile.max_tokens``):
``bound(llm, DECIDE)`` or ``bound(llm, TOOL)`` is the request options to add, ``{"max_tokens": n}``, or ``{}`` when
the profile has no bound or the user set ``max_tokens`` themselves (options or profile).
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
