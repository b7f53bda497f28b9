"""The evals plugin: run an agent over cases with expected outputs, score, report and compare (docs/evals.md):
``evaluate`` / ``aevaluate`` (``run.py``), ``compare`` (``comparing.py``), ``zagent eval`` (``cli.py``). Scorers are
a registry kind (``zagent_register_scorers``) holding the built-ins. Cheap to import."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from zagent.agentkit.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover  (the lazy names' types, for type checkers)
    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup

    from .comparing import compare as compare, Comparison as Comparison
    from .run import aevaluate as aevaluate, CaseResult as CaseResult, EvalReport as EvalReport, evaluate as evaluate
    from .run import read_cases as read_cases
    from .scorers import Score as Score

_EXPORTS = {
    "evaluate": "run", "aevaluate": "run", "EvalReport": "run", "CaseResult": "run", "read_cases": "run",
    "Score": "scorers", "compare": "comparing", "Comparison": "comparing",
}

__getattr__ = lazy_exports(__name__, _EXPORTS)

zagent_hookspecs = "zagent.plugins.evals.hookspecs"


def zagent_register_scorers(register: Callable[..., Any]) -> None:
    from .scorers import BUILTIN

    for name, factory in BUILTIN.items():
        register(name, factory)


def zagent_register_commands(cli: "CommandGroup", kernel: "Kernel") -> None:
    from .cli import add_commands

    add_commands(cli)
