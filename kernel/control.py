"""Old import path of ``zagent.agentkit.control``: it moved out of the kernel core (one release).

``from zagent.control import ...`` keeps working; new code imports from ``zagent.agentkit.control``.
The kernel core imports neither.
"""

from __future__ import annotations

from .agentkit.control import RunControl

__all__ = ["RunControl"]
