"""Old import path of ``zagent.agentkit.toolrefs``: it moved out of the kernel core (one release).

``from zagent.toolrefs import ...`` keeps working; new code imports from ``zagent.agentkit.toolrefs``.
The kernel core imports neither.
"""

from __future__ import annotations

from .agentkit.toolrefs import TOOLSET_PREFIX, resolve_tool_refs

__all__ = ["TOOLSET_PREFIX", "resolve_tool_refs"]
