"""Keys the ReAct loop and the rails plugin share: in ``ctx.frame`` (each agent's own part of the run: agents called
as tools at once never share them) ``APPROVED`` (approval keys of calls a human approved), ``PENDING_APPROVAL`` and
``PENDING_KEYS`` (ids of calls the approval rail held for a human; their keys by id), ``CALL_KEYS`` (the id minted for
each call, by the model's id), ``HELD_TOOLS``; saved with a run, ``BUDGET_COUNTS`` and ``USAGE_COUNTS``.
"""

from __future__ import annotations

from typing import Any

from .._runs.stash import StashKey

APPROVED: StashKey[set[str]] = StashKey("zagent.approved")
PENDING_APPROVAL: StashKey[set[str]] = StashKey("zagent.pending_approval")
PENDING_KEYS: StashKey[dict[str, str]] = StashKey("zagent.pending_keys")
CALL_KEYS: StashKey[dict[str, str]] = StashKey("zagent.call_keys")
#: by approval key, the tool (and its handler) a held call was asked about, or a restore found under its name: an
#: approval covers that tool object only, not another registered under the name before the call runs; never saved
HELD_TOOLS: StashKey[dict[str, tuple[Any, Any]]] = StashKey("zagent.held_tools")
BUDGET_COUNTS = "zagent.rails.budget"
"""The name the rails' tool-budget counts are saved under with a run (a restore checks them)."""
USAGE_COUNTS = "zagent.rails.usage"
"""The name the rails' ``usage_limits`` counts are saved under with a run (a restore checks and raises them)."""

__all__ = ["APPROVED", "BUDGET_COUNTS", "CALL_KEYS", "HELD_TOOLS", "PENDING_APPROVAL", "PENDING_KEYS", "USAGE_COUNTS"]
