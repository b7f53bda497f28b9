"""Keys the ReAct loop and the rails plugin share: in ``ctx.frame`` (each agent's own part of the run: agents called
as tools at once never share them) ``APPROVED`` (approval keys of calls a human approved), ``PENDING_APPROVAL`` and
``PENDING_KEYS`` (ids of calls the approval rail held for a human; their keys by id), ``CALL_KEYS`` (the id minted for
each call, by the model's id); saved with a run, ``BUDGET_COUNTS`` and ``USAGE_COUNTS`` (the rails' counts).
"""

from __future__ import annotations

from .._runs.stash import StashKey

APPROVED: StashKey[set[str]] = StashKey("zagent.approved")
PENDING_APPROVAL: StashKey[set[str]] = StashKey("zagent.pending_approval")
PENDING_KEYS: StashKey[dict[str, str]] = StashKey("zagent.pending_keys")
CALL_KEYS: StashKey[dict[str, str]] = StashKey("zagent.call_keys")
BUDGET_COUNTS = "zagent.rails.budget"
"""The name the rails' tool-budget counts are saved under with a run (a restore checks them)."""
USAGE_COUNTS = "zagent.rails.usage"
"""The name the rails' ``usage_limits`` counts are saved under with a run (a restore checks and raises them)."""

__all__ = ["APPROVED", "BUDGET_COUNTS", "CALL_KEYS", "PENDING_APPROVAL", "PENDING_KEYS", "USAGE_COUNTS"]
