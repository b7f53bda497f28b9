"""The entry point of zagent-ray: registers the ``ray`` executor (Ray itself is imported on first use)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel
    from zagent.contracts import Executor


def zagent_register_executors(register: Callable[..., Any], kernel: "Kernel") -> None:
    def make(**options: Any) -> Executor:
        from .executor import RayExecutor

        return RayExecutor(kernel_config=worker_config(kernel), **options)

    register("ray", make)


def worker_config(kernel: "Kernel") -> dict[str, Any]:
    """The driver kernel's config as workers get it: secrets removed, the default model pinned
    (``ZAGENT_MODEL`` of the driver), so every worker uses the model the driver would."""
    from zagent.agentkit.secrets import public_data

    config = dict(public_data(dict(kernel.config)))
    model = kernel.config.get("model") or os.environ.get("ZAGENT_MODEL")
    if model:
        config["model"] = model
    config.pop("executor", None)  # a worker runs its unit where it is
    return config
