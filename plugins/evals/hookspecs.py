"""The evals plugin's registry kind: ``zagent_register_scorers`` -> ``kernel.entries("scorers")``.

The evals plugin names this module as its ``zagent_hookspecs``; the spec is a
``registry_hookspec``, so the kernel adds the hook and the registry (same
name, clash and override checks as its own kinds). The plugin registers the
built-in scorers here too, so ``override=True`` can replace one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from zagent import registry_hookspec

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


@registry_hookspec("scorers", noun="scorer")
def zagent_register_scorers(register: Callable[..., Any], kernel: "Kernel") -> None:
    """Register eval scorers by name (``kernel.entries("scorers")``).

    ``register(name, factory, *, override=False)``; ``factory(options, kernel)`` gets the scorer's
    options (``{"tolerance": 0.01}``) and returns ``score(output, expected, case)`` (sync or async),
    answering a ``zagent.plugins.evals.Score``, a bool or a number from 0 to 1 (1 passes).

    :param register: adds one scorer; a name two plugins register is a problem naming both unless
        one of them passes ``override=True``.
    :param kernel: the kernel.

    Example::

        def zagent_register_scorers(register):
            register("short", lambda options, kernel: lambda output, expected, case: len(str(output)) < 200)
    """
