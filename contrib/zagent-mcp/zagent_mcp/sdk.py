"""The MCP SDK's modules, imported under one process-wide lock: every import of the SDK in this distribution
goes through ``sdk(module)``, so only one thread at a time runs one.
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType

_LOCK = threading.RLock()


def sdk(module: str = "mcp") -> ModuleType:
    """The SDK module ``module`` (for example ``"mcp.types"``), imported under the lock the first time."""
    with _LOCK:
        return importlib.import_module(module)
