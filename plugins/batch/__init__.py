"""The batch plugin: ``zagent batch AGENT_OR_WORKFLOW_FILE inputs.jsonl --out results.jsonl``.

It holds the batch driver behind ``Kernel.batch`` / ``Kernel.abatch``
(``driver.py``, with the JSONL files in ``files.py``), registered through
``zagent_register_batch_drivers`` (the kernel never imports it), and the
command: it loads the file (a workflow file, one with ``nodes``, is
loaded through the workflow plugin, which this command is built on), picks
the executor (``--executor``, else ``ray`` when ``RAY_ADDRESS`` is set and a
``ray`` executor is installed, else ``local``), shows progress on stderr and
prints the summary. Cheap to import: everything loads when the command runs.
"""

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
