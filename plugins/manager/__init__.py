"""The manager plugin: ``AgentManager`` keeps agents by name, with AVAILABLE/RUNNING states.

Registers nothing with the kernel: an app (or the workflow plugin) creates an
``AgentManager(kernel=k)`` itself. Importing this package is cheap; the
classes load on first use (``from zagent.plugins.manager import AgentManager``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zagent.agentkit.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover  (the lazy names' types, for type checkers)
    from .manager import AgentManager as AgentManager, AgentState as AgentState, AgentTimeout as AgentTimeout

_EXPORTS = {"AgentManager": "manager", "AgentState": "manager", "AgentTimeout": "manager"}

__all__ = list(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS)
