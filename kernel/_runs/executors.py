"""Executors (``Kernel.executor``): where a unit of work runs (``async submit(unit)``, ``in_process``,
``concurrency``, ``async aclose()``); the built-in ``local`` one and the pick by name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from ..errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from ..contracts import Executor

DEFAULT = "local"


class LocalExecutor:
    """The default executor: awaits ``unit.local()`` on the caller's event loop (no copies, no threads)."""

    name = DEFAULT
    in_process = True
    concurrency: Optional[int] = None

    async def submit(self, unit: Any) -> Any:
        return await unit.local()

    async def aclose(self) -> None:
        return None

    def __repr__(self) -> str:
        return "<LocalExecutor>"


def pick(kernel: Any, name: Optional[str], options: dict[str, Any]) -> Executor:
    """The executor named ``name`` (default: ``kernel.config['executor']``, else ``ZAGENT_EXECUTOR``, else
    ``local``); a registered factory is called with ``options``."""
    import os

    name = name or kernel.config.get("executor") or os.environ.get("ZAGENT_EXECUTOR") or DEFAULT
    factory = kernel.registries["executors"].get(name)
    if factory is None:
        if name == DEFAULT:
            if options:
                raise ConfigError(f"executor 'local' takes no options, got {sorted(options)}")
            return LocalExecutor()
        installed = ", ".join(["local", *(n for n in kernel.registries["executors"] if n != DEFAULT)])
        raise ConfigError(f"unknown executor {name!r}; installed executors: {installed}. Fix the name, or install "
                          "the plugin that provides it from a publisher you trust (Ray's: pip install zagent-ray)")
    executor: Executor = factory(**options)
    return executor
