"""The batch plugin: the driver behind ``Kernel.batch`` / ``Kernel.abatch`` (``driver.py``, registered through
``zagent_register_batch_drivers``: the kernel never imports it) and ``zagent batch`` (``cli.py``; a workflow file
runs through the workflow plugin). Cheap to import: everything loads on first use. See docs/batch.md."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup


def zagent_register_commands(cli: "CommandGroup", kernel: "Kernel") -> None:
    from .cli import add_commands

    add_commands(cli)


def zagent_register_batch_drivers(register: Any) -> None:
    register("default", abatch)


async def abatch(kernel: "Kernel", target: Any, inputs: Any, **options: Any) -> Any:
    """``Kernel.abatch``'s driver (``driver.abatch``), imported on first use."""
    from .driver import abatch as run

    return await run(kernel, target, inputs, **options)
