"""Hook specifications, guardrails: ``zagent_check_input`` / ``zagent_check_output`` see an agent's whole input
and final answer and may stop the run with ``zagent.GuardrailTripped`` (dispatched by ``zagent.agentkit.guardrails``).

Exported from ``zagent.hookspecs`` (read its docstring for how the kernel calls hooks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .markers import hookspec

if TYPE_CHECKING:  # pragma: no cover - types only
    from .._runs.context import RunContext


@hookspec
def zagent_check_input(agent: str, inputs: Any, ctx: "RunContext[Any]") -> Any:
    """Check an agent's input before it starts; ``None`` lets the run go on.

    Return a reason (a ``str``) or ``zagent.Deny(reason)`` to stop the run with
    ``zagent.GuardrailTripped`` (``where="input"``, naming this plugin); later guardrails are not asked.
    A guardrail that raises also trips (fail closed). May return an awaitable.

    :param agent: the agent's name.
    :param inputs: its inputs (a declared agent's dict of named inputs, a ReAct loop's task text).
    :param ctx: the run's context.

    Example::

        def zagent_check_input(inputs):
            if "ignore previous instructions" in str(inputs).lower():
                return "prompt injection"
    """


@hookspec
def zagent_check_output(agent: str, output: Any, ctx: "RunContext[Any]") -> Any:
    """Check an agent's final answer before the caller gets it; ``None`` lets it through.

    Same answers as ``zagent_check_input`` (``where="output"``). Runs once per run, on the final,
    validated answer (not on each model reply: that is ``zagent_after_llm_call``).

    :param agent: the agent's name.
    :param output: the answer (a declared agent's parsed output, a ReAct loop's answer text).
    :param ctx: the run's context.

    Example::

        def zagent_check_output(output):
            if "PRIVATE KEY" in str(output):
                return "the answer holds a key"
    """
