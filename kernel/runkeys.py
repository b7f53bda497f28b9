"""Old import path of ``zagent.agentkit.runkeys``: it moved out of the kernel core (one release).

``from zagent.runkeys import ...`` keeps working; new code imports from ``zagent.agentkit.runkeys``.
The kernel core imports neither.
"""

from __future__ import annotations

from .agentkit.runkeys import APPROVED, BUDGET_COUNTS, CALL_KEYS, PENDING_APPROVAL, PENDING_KEYS

__all__ = ["APPROVED", "BUDGET_COUNTS", "CALL_KEYS", "PENDING_APPROVAL", "PENDING_KEYS"]
