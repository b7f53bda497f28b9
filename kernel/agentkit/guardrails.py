"""The one dispatch point of input and output guardrails (docs/agents.md): ``check`` runs the agent's own, then the
kernel's hooks, raising ``GuardrailTripped`` at the first reason or failure; ``check_history`` judges a caller's
history."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Sequence

from ..errors import GuardrailTripped, RunStopped
from .._hooks.runner import _mask_settings, _shown_cause
from .._hooks.specs import Deny
from .._runs.stash import StashKey

if TYPE_CHECKING:  # pragma: no cover
    from .._runs.context import RunContext

__all__ = ["check", "check_history", "hand_over", "handed_over", "spare", "wanted"]

_HOOKS = {"input": "zagent_check_input", "output": "zagent_check_output"}
_CHECKED_INPUT: StashKey[Any] = StashKey("zagent.agentkit.guardrails.checked_input")  # per run, never saved
#: per run (``ctx.shared``), never saved: (guardrails, text) judged so far; ids of memory turns not to judge
_JUDGED: StashKey[set[Any]] = StashKey("zagent.agentkit.guardrails.judged_history")
_SPARED: StashKey[set[int]] = StashKey("zagent.agentkit.guardrails.spared_history")


def hand_over(ctx: "RunContext[Any]", value: Any) -> None:
    """Note that the input guardrails already ran on ``value`` in this run (see the module docstring)."""
    ctx.stash[_CHECKED_INPUT] = value


def handed_over(ctx: "RunContext[Any]", value: Any) -> bool:
    """Did the caller check ``value`` itself (``hand_over``)? True once, for that same object (or equal text)."""
    checked = ctx.stash.pop(_CHECKED_INPUT, None)
    return checked is value or (type(checked) is str and checked == value)


def spare(ctx: "RunContext[Any]", messages: Iterable[Any]) -> None:
    """Note ``messages`` (the agent's own memory, judged when each was the new turn) as never to be judged again
    in this run by ``check_history`` (a handoff's next agent is handed them)."""
    ctx.shared.get_or_create(_SPARED, set).update(map(id, messages))


async def check_history(ctx: "RunContext[Any]", agent: Optional[str], messages: Iterable[Any],
                        text_of: Callable[[Any], str], own: Sequence[Callable[..., Any]] = ()) -> None:
    """The input guardrails on ``text_of(m)`` of each message of a caller-given history (``""``: nothing to judge),
    before the model reads it; a ``spare``d message, or a text the same guardrails passed in this run, is skipped:
    each distinct text is judged once per run, not at every step or turn. ``GuardrailTripped`` as ``check``."""
    share = ctx.shared
    spared = share.get(_SPARED) or ()
    judged = share.get_or_create(_JUDGED, set)
    guards = tuple(map(id, own))
    for message in messages:
        if id(message) in spared:
            continue
        text = text_of(message)
        if text and (guards, text) not in judged:
            await check(ctx, "input", agent, text, own)
            judged.add((guards, text))


def wanted(ctx: "RunContext[Any]", where: str, own: Sequence[Any] = ()) -> bool:
    """Is there any guardrail for ``where`` ("input"/"output")? O(1) when there is none."""
    return bool(own) or ctx.kernel.hooks.active(_HOOKS[where])


async def check(ctx: "RunContext[Any]", where: str, agent: Optional[str], value: Any, own: Sequence[Callable[..., Any]] = ()) -> None:
    """Run the guardrails of ``where`` on ``value``; ``GuardrailTripped`` on the first that trips."""
    for fn in own:
        name = getattr(fn, "__qualname__", None) or repr(fn)
        try:
            verdict = fn(value, ctx)
            if hasattr(verdict, "__await__"):
                verdict = await verdict
        except RunStopped:
            raise
        except Exception as exc:  # fail closed
            _mask_settings(exc, ctx)  # a moderation client quoting the app's config or deps token
            verdict = _Failed(exc)
        _trip(name, verdict, where)
    hooks = ctx.kernel.hooks
    hook = _HOOKS[where]
    kwargs = {"agent": agent or "", "inputs" if where == "input" else "output": value, "ctx": ctx}
    for impl in hooks.impls(hook):
        try:
            verdict = await hooks.acall_one(hook, impl, kwargs)
        except RunStopped:
            raise
        except Exception as exc:
            _mask_settings(exc, ctx)
            verdict = _Failed(exc)
        _trip(impl[0], verdict, where)


class _Failed:
    """A guardrail that raised ``exc`` (fail closed: ``_trip`` raises, outside the ``except``, so a secret the
    exception shows is not chained as its context)."""

    __slots__ = ("exc",)

    def __init__(self, exc: Exception) -> None:
        self.exc = exc


def _trip(name: str, verdict: Any, where: str) -> None:
    if verdict is None:
        return
    if isinstance(verdict, _Failed):  # described as a rail's failure is (environment secrets, URL passwords masked)
        from .._tools.results import describe

        raise GuardrailTripped(name, f"it failed ({describe(verdict.exc)})", where) from _shown_cause(verdict.exc)
    if isinstance(verdict, Deny):
        raise GuardrailTripped(name, verdict.reason, where)
    if isinstance(verdict, str):
        raise GuardrailTripped(name, verdict, where)
    if inspect.iscoroutine(verdict):  # an un-awaited check: it never runs (and warns no "never awaited" later)
        verdict.close()
    raise GuardrailTripped(name, f"it returned {type(verdict).__name__}; a guardrail returns None, a reason "
                                 "or zagent.Deny(reason)", where)
