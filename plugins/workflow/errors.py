"""Errors of the workflow plugin, each saying what is wrong and what to do: ``WorkFlowValidationError`` (a
``ConfigError`` listing every ``Problem`` of a graph), ``WorkFlowFailed`` (carries the partial ``WorkFlowResult``),
``GenerationError`` (a ``ParseError``: a reply that parsed but broke a rule, retried like one)."""

from __future__ import annotations

from typing import Any, Sequence

from zagent.errors import ConfigError, ParseError, ZagentError


class Problem(tuple[str, str]):
    """One validation problem: ``(code, message)``; ``code`` is stable for programs to test."""

    __slots__ = ()

    def __new__(cls, code: str, message: str) -> "Problem":
        return super().__new__(cls, (code, message))

    @property
    def code(self) -> str:
        return self[0]

    @property
    def message(self) -> str:
        return self[1]


class WorkFlowValidationError(ConfigError):
    """A graph breaks structural rules; ``problems`` lists each as ``Problem(code, message)``."""

    def __init__(self, problems: Sequence[Problem], what: str = "workflow"):
        self.problems = list(problems)
        lines = "\n".join(f"- {p.message}" for p in self.problems)
        n = len(self.problems)
        super().__init__(f"{what} is invalid ({n} problem{'s' if n != 1 else ''}):\n{lines}")

    @property
    def codes(self) -> list[str]:
        return [p.code for p in self.problems]


class GenerationError(ParseError):
    """A planner/generator/reviewer reply parsed but broke a rule (retried by ``WorkFlowGenerator``)."""


class WorkFlowError(ZagentError):
    """A workflow could not run (no agent for a node, an unknown router, a loop bound hit...)."""


class WorkFlowFailed(WorkFlowError):
    """A run ended with failed nodes; ``result`` holds what was done (outputs, trace, errors)."""

    def __init__(self, message: str, *, result: Any, causes: Any = None):
        super().__init__(message)
        #: ``{node: exception}`` of the failed nodes (the CLI shows a ParseError's reply from it)
        self.causes = dict(causes or {})
        self.result = result
