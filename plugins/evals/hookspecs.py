"""The evals plugin's registry kind, ``zagent_register_scorers`` -> ``kernel.entries("scorers")``: a
``registry_hookspec``, so the kernel adds the hook and the registry. The plugin registers the built-in scorers here,
so ``override=True`` can replace one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from zagent import registry_hookspec

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


@registry_hookspec("scorers", noun="scorer")
def zagent_register_scorers(register: Callable[..., Any], kernel: "Kernel") -> None:
    """Register eval scorers by name (``kernel.entries("scorers")``; docs/hooks.md has an example).

    ``register(name, factory, *, override=False)``; ``factory(options, kernel)`` returns ``score(output, expected,
    case)`` (sync or async) answering a ``zagent.plugins.evals.Score``, a bool or a number from 0 to 1 (1 passes).
    A name two plugins register is a problem naming both unless one of them passes ``override=True``. A factory
    with ``options`` (a tuple of names) refuses any other option.
    """
