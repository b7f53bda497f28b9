"""The manager plugin: ``AgentManager`` keeps agents by name, with AVAILABLE/RUNNING states.

Registers nothing with the kernel: an app (or the workflow plugin) creates an
``AgentManager(kernel=k)`` itself. Importing this package is cheap; the
classes load on first use (``from zagent.plugins.manager import AgentManager``).
"""

from __future__ import annotations


from zagent.agentkit.lazy import lazy_exports

_EXPORTS = {"AgentManager": "manager", "AgentState": "manager", "AgentTimeout": "manager"}

__all__ = list(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS)
