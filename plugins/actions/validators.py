"""Output validators: an app's own checks on a declared agent's typed output, with retries the model sees.

``ModelRetry("why")`` re-asks in the same conversation, at most ``max_output_retries`` times (at most
``MAX_OUTPUT_RETRIES``), then ``OutputRejected``; ``resolve_validators`` reads an agent file's names. docs/agents.md.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

from zagent.agentkit.holding import Held
from zagent.errors import ConfigError, ZagentError
from zagent.types import Message

if TYPE_CHECKING:  # pragma: no cover
    from zagent import LLM, Kernel, RunContext

    from .action import Action, CustomizeAction
    from .actionrun import ActionOutput
    from .agent import Agent

__all__ = ["MAX_OUTPUT_RETRIES", "ModelRetry", "OutputRejected", "OutputValidator", "resolve_validators",
           "validated"]

#: ``fn(output)`` or ``fn(output, ctx)``, sync or async: ``None``, a replacement output, or ``ModelRetry`` raised
OutputValidator = Callable[..., object]

MAX_OUTPUT_RETRIES = 10
RETRY_TURN = "Your answer was not accepted: {reason}\nAnswer again, in the same output format."


class ModelRetry(Exception):
    """Raised by an output validator (or a tool) to send ``reason`` back to the model and ask again."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = str(reason)


class OutputRejected(ZagentError):
    """The validators rejected every answer, ``max_output_retries`` re-asks included.

    :ivar reasons: every validator's reason, in order. :ivar trajectory: the whole conversation."""

    def __init__(self, message: str, *, reasons: Sequence[str], trajectory: Sequence[Message]) -> None:
        super().__init__(message)
        self.reasons = list(reasons)
        self.trajectory = list(trajectory)


def check_retries(value: Any, where: str) -> int:
    """``max_output_retries`` as an int in ``0..MAX_OUTPUT_RETRIES``, else a ConfigError naming ``where``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_OUTPUT_RETRIES:
        raise ConfigError(f"{where}: max_output_retries must be a whole number from 0 to {MAX_OUTPUT_RETRIES}, "
                          f"got {value!r}")
    return value


def resolve_validators(kernel: "Kernel", refs: Sequence[Any], *, base_dir: Optional[str] = None
                       ) -> list[OutputValidator]:
    """Validators a spec names: registered names, or import paths under the trust rules; callables as they are."""
    found: list[OutputValidator] = []
    for i, ref in enumerate(refs):
        key = f"output_validators[{i}]"
        if callable(ref):
            found.append(ref)
        elif isinstance(ref, str) and (registered := kernel.find("output_validators", ref)) is not None:
            found.append(registered)
        elif isinstance(ref, str) and ":" in ref:
            from zagent.speckit.trust import NotImported, resolve

            fn = resolve(ref, key=key, kernel=kernel, base_dir=base_dir)
            if not isinstance(fn, NotImported):
                if not callable(fn):
                    raise ConfigError(f"{key} {ref!r} is not a function")
                found.append(fn)
        else:
            known = ", ".join(kernel.names("output_validators")) or "none"
            raise ConfigError(f"{key} {ref!r} is not a registered output validator (registered: {known}) nor an "
                              "import path 'package.module:function'")
    return found


async def _call(fn: OutputValidator, output: Any, ctx: "RunContext[Any]") -> object:
    try:
        takes_ctx = len(inspect.signature(fn).parameters) >= 2
    except (TypeError, ValueError):
        takes_ctx = False
    value = fn(output, ctx) if takes_ctx else fn(output)
    return await value if inspect.isawaitable(value) else value


async def validated(agent: "Agent", action: "Action", out: "ActionOutput", ctx: "RunContext[Any]"
                    ) -> tuple["ActionOutput", int]:
    """``out`` once every validator of ``agent`` accepts it, re-asking the model on ``ModelRetry`` (a
    ``CustomizeAction`` only: it runs the tool loop the same conversation goes on in); ``(output, retries used)``."""
    from .action import CustomizeAction

    reasons: list[str] = []
    while True:
        try:
            out.output = await _check(agent.output_validators, out.output, action, ctx)
            if agent.output_type is not None:  # the answer must fit the agent's class
                _fits(agent.output_type, out.output)
            return out, len(reasons)
        except ModelRetry as retry:
            reasons.append(retry.reason)
            await ctx.aemit("output_retry", attempt=len(reasons), reason=retry.reason[:300], action=action.name)
            if len(reasons) > agent.max_output_retries or not isinstance(action, CustomizeAction):
                raise OutputRejected(
                    f"agent {agent.name!r}: the output validators rejected {len(reasons)} answer(s), the last "
                    f"because: {retry.reason}. Raise max_output_retries, or check error.reasons and "
                    "error.trajectory", reasons=reasons, trajectory=out.messages) from None
            if isinstance(ctx.on_delta, Held):  # streamed: the rejected answer was never judged by a guardrail
                ctx.on_delta.drop_last()
            out = await _again(action, agent.llm, out, ctx, retry.reason, len(reasons))


def _fits(output_type: Any, output: Any) -> None:
    """``ModelRetry`` saying what does not fit when ``output`` is no ``output_type`` (``agentkit.outputtypes``)."""
    from zagent.agentkit.outputtypes import as_output

    try:
        as_output(output_type, output)
    except ValueError as exc:
        raise ModelRetry(f"the answer does not fit {getattr(output_type, '__name__', 'the output type')}: "
                         f"{str(exc)[:1000]}") from None


async def _check(validators: Sequence[OutputValidator], output: Any, action: "Action", ctx: "RunContext[Any]") -> Any:
    for fn in validators:
        replaced = await _call(fn, output, ctx)
        if replaced is not None and replaced is not output:
            from zagent.agentkit import fields as zfields

            data = replaced if isinstance(replaced, dict) else zfields.to_dict(replaced)
            output = zfields.convert(data, action.output_spec)
    return output


async def _again(action: "CustomizeAction", llm: "LLM", out: "ActionOutput", ctx: "RunContext[Any]", reason: str,
                 attempt: int) -> "ActionOutput":
    """The same conversation, one more user turn with ``reason``: a new run of ``action``'s loop."""
    from .actionrun import ActionRun

    tools = action.offered_tools()
    messages = [*out.messages, Message(role="user", content=RETRY_TURN.format(reason=reason),
                                       metadata={"kind": "output_retry", "attempt": attempt})]
    run = ActionRun(action, llm, ctx, messages, action._tool_loop.offer(llm, tools),
                    action.response_format(llm, bool(tools)), prompt=out.prompt)
    again = await run.loop(out.prompt)
    again.usage = out.usage + again.usage
    again.steps = out.steps + again.steps
    again.tool_results = [*out.tool_results, *again.tool_results]
    return again
