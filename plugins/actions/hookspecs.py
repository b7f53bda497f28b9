"""The actions plugin's registry kind: ``zagent_register_output_validators`` -> ``kernel.entries("output_validators")``.

The actions plugin names this module as its ``zagent_hookspecs``; the spec is a
``registry_hookspec``, so the kernel adds the hook and the registry and fills
it with its own name, clash and override checks. Agent files then name a
validator by its registered name in ``"output_validators"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from zagent import registry_hookspec

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


@registry_hookspec("output_validators", noun="output validator")
def zagent_register_output_validators(register: Callable[..., Any], kernel: "Kernel") -> None:
    """Register output validators by name (``kernel.entries("output_validators")``).

    ``register(name, fn, *, override=False)``; ``fn(output)`` or ``fn(output, ctx)`` (sync or async)
    accepts the typed output of a declared agent by returning ``None`` (or a dict of replacement fields),
    or raises ``zagent.plugins.actions.ModelRetry("why")`` to ask the model again with that reason.

    :param register: adds one validator; a name two plugins register is a problem naming both unless
        one of them passes ``override=True``.
    :param kernel: the kernel.

    Example::

        def zagent_register_output_validators(register):
            def future_date(output):
                if output.date <= "2026-01-01":
                    raise ModelRetry("the date must be in the future")
            register("future_date", future_date)
    """
