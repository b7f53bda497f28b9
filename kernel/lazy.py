"""Old import path of ``zagent.agentkit.lazy``: it moved out of the kernel core (one release).

``from zagent.lazy import lazy_exports`` keeps working; new code imports from ``zagent.agentkit.lazy``.
The kernel core imports neither.
"""

from __future__ import annotations

from .agentkit.lazy import lazy_exports

__all__ = ["lazy_exports"]
