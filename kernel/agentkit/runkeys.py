"""``StashKey``s of ``ctx.stash`` that the ReAct loop and the rails plugin share.

Plugins reach each other only through the kernel, so keys two of them read
and write live here rather than in either plugin:

* ``APPROVED``: ids of tool calls a human approved (the loop fills it on
  resume; the approval rail lets those calls through);
* ``PENDING_APPROVAL``: ids of calls the approval rail blocked to ask a human
  later (the loop pauses the run on them).
"""

from __future__ import annotations

from ..stash import StashKey

APPROVED: StashKey[set[str]] = StashKey("zagent.approved")
PENDING_APPROVAL: StashKey[set[str]] = StashKey("zagent.pending_approval")

__all__ = ["APPROVED", "PENDING_APPROVAL"]
