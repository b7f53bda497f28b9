"""The actions plugin's registry kind: ``zagent_register_output_validators`` -> ``kernel.entries("output_validators")``.

A ``registry_hookspec``: the kernel adds the hook and the registry, with its name, clash and override checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from zagent import registry_hookspec

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


@registry_hookspec("output_validators", noun="output validator")
def zagent_register_output_validators(register: Callable[..., Any], kernel: "Kernel") -> None:
    """Register output validators by name (``kernel.entries("output_validators")``; example: docs/hooks.md).

    ``register(name, fn, *, override=False)``; ``fn(output)`` or ``fn(output, ctx)`` (sync or async)
    accepts the typed output of a declared agent by returning ``None`` (or a dict of replacement fields),
    or raises ``zagent.plugins.actions.ModelRetry("why")`` to ask the model again with that reason. A name
    two plugins register is a problem naming both unless one of them passes ``override=True``.
    """
