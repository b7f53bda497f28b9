"""Old import path of ``zagent.agentkit.files``: it moved out of the kernel core (one release).

``from zagent.files import write_atomic`` keeps working; new code imports from ``zagent.agentkit.files``.
The kernel core imports neither.
"""

from __future__ import annotations

from .agentkit.files import write_atomic

__all__ = ["write_atomic"]
