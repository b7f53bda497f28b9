"""The MCP SDK's modules, imported under one process-wide lock.

zagent-mcp imports the SDK lazily (``import zagent`` stays light), from two
kinds of thread: a kernel's MCP loop thread (the client side) and the caller's
thread (``McpServe``, ``zagent mcp serve``). The SDK's packages import each
other in a cycle (``mcp`` -> ``mcp.client`` -> ``mcp.server`` -> ``mcp``), and two
threads entering that cycle at different ends get a partially initialized
module ("cannot import name 'Server' from partially initialized module").
Every import of the SDK in this distribution goes through ``sdk()``, so only
one thread runs an SDK import at a time.
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
