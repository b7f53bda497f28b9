"""What runs inside a Ray worker process: ``run_task`` runs one unit on a ``Kernel`` built once per process and setup
(the installed plugins, the ``plugins`` the driver named, its public config) and returns the unit's own exception
as data (type and message), so Ray retries only a worker or node that died."""

from __future__ import annotations

from typing import Any

import msgspec

_kernels: dict[bytes, Any] = {}
_encode = msgspec.json.Encoder(enc_hook=str)


def _kernel(setup: bytes) -> Any:
    kernel = _kernels.get(setup)
    if kernel is None:
        from zagent import Kernel

        data = msgspec.json.decode(setup)
        kernel = _kernels[setup] = Kernel(plugins=list(data.get("plugins") or ()), config=data.get("config") or {})
    return kernel


def run_task(runner: str, payload: bytes, setup: bytes) -> bytes:
    """Run one shipped unit; return ``{"ok": true, "result": ...}`` or ``{"ok": false, "type", "message"}``."""
    from zagent.agentkit.units import run_unit
    from zagent import run_sync

    try:
        result = run_sync(run_unit(_kernel(setup), runner, msgspec.json.decode(payload)))
    except Exception as exc:
        return _encode.encode({"ok": False, "type": type(exc).__name__, "message": str(exc)[:4000]})
    return _encode.encode({"ok": True, "result": result})
