"""The manager plugin: ``AgentManager`` keeps agents by name, with AVAILABLE/RUNNING states.

Registers nothing with the kernel: an app (or the workflow plugin) creates an
``AgentManager(kernel=k)`` itself. Importing this package is cheap; the
classes load on first use (``from zagent.plugins.manager import AgentManager``).
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {"AgentManager": "manager", "AgentState": "manager", "AgentTimeout": "manager"}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
