"""``StashKey``s of ``ctx.stash`` that the ReAct loop and the rails plugin share.

Plugins reach each other only through the kernel, so keys two of them read
and write live here rather than in either plugin:

* ``APPROVED``: approval keys (``zagent.agentkit.approvals``: minted id, tool
  and arguments) of calls a human approved (the loop fills it on resume; the
  approval rail lets those calls through);
* ``PENDING_APPROVAL``: ids of calls the approval rail blocked to ask a human
  later (the loop pauses the run on them), and ``PENDING_KEYS``: their
  approval keys by id;
* ``CALL_KEYS``: the id the loop minted for each call it runs now, by the
  model's call id;
* ``BUDGET_COUNTS``: the name of the rails' saved tool-budget counts.
"""

from __future__ import annotations

from .._runs.stash import StashKey

APPROVED: StashKey[set[str]] = StashKey("zagent.approved")
PENDING_APPROVAL: StashKey[set[str]] = StashKey("zagent.pending_approval")
PENDING_KEYS: StashKey[dict[str, str]] = StashKey("zagent.pending_keys")
CALL_KEYS: StashKey[dict[str, str]] = StashKey("zagent.call_keys")
BUDGET_COUNTS = "zagent.rails.budget"
"""The name the rails' tool-budget counts are saved under with a run (a restore checks them)."""

__all__ = ["APPROVED", "BUDGET_COUNTS", "CALL_KEYS", "PENDING_APPROVAL", "PENDING_KEYS"]
