"""Events and spans: ``tag`` pairs each ``<kind>_start``/``<kind>_end`` of one kernel into a span (id, nesting by
task, the end's ``duration``, ``outcome``, ``usage``); ``send``/``emit`` hand events to the observers."""

from __future__ import annotations

import itertools
import time
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Awaitable, Optional, Sequence

from ..types import Event
from .context import _prefix

if TYPE_CHECKING:
    from .._hooks.runner import HookRunner, Impl

_ids = itertools.count(1)
# events that end a span of another kind's name: one failed attempt of a node; a node that loops back
END_ALIASES = {"node_retry": "node", "workflow_loop": "node"}
KEYS = ("call_id", "node", "round", "step")  # a start and its end agree on the first of these they carry
_ERROR_STATES = frozenset({"error", "failed", "timeout", "blocked"})
_CANCEL_STATES = frozenset({"aborted", "cancelled"})
_NO_ORPHANS: tuple[Any, ...] = ()
_KINDS_KEPT = 1024
_kinds: dict[str, tuple[bool, Optional[str]]] = {}  # event type -> (starts a span, kind): see _classify
_clock = time.perf_counter


class OpenSpan:
    """A span between its start and end event (shared by the tasks it started)."""

    __slots__ = ("kind", "span_id", "parent_id", "key", "owner", "started", "usage")

    def __init__(self, kind: str, span_id: str, parent_id: Optional[str], key: Any = None, owner: int = 0):
        self.kind = kind
        self.span_id = span_id
        self.parent_id = parent_id
        self.key = key
        self.owner = owner
        self.started = _clock()
        self.usage = [0, 0, 0]  # input tokens, output tokens, LLM calls made inside

    def __repr__(self) -> str:
        return f"<OpenSpan {self.kind} {self.span_id}>"


_open: ContextVar[tuple[OpenSpan, ...]] = ContextVar("zagent_open_spans", default=())


_owners = itertools.count(1)


def new_owner() -> int:
    """A token for one kernel's spans, never reused in this process (unlike ``id(kernel)``)."""
    return next(_owners)


_SPAN_PREFIX = f"span-{_prefix}-"


def current_span_id(owner: Optional[int] = None) -> Optional[str]:
    """The id of the innermost span open in this task (of the kernel whose ``span_owner`` is given), or ``None``."""
    stack = _open.get()
    for span in reversed(stack):
        if owner is None or span.owner == owner:
            return span.span_id
    return None


def _mask_error(data: dict[str, Any]) -> None:
    """An event's ``error`` text with secret environment values and URL passwords masked: it often quotes a
    library's exception (``RuntimeError: bad key sk-...``) and goes to observers, the run log and traces."""
    error = data["error"]
    if isinstance(error, str) and error:
        from .._trust.secrets import env_masker

        data["error"] = env_masker()(error)


def tag(type: str, data: dict[str, Any], owner: int = 0) -> tuple[Optional[str], Optional[str], Sequence[Any]]:
    """``(span_id, parent_id, orphans)`` of an event about to be sent by the kernel whose ``span_owner`` is
    ``owner``, filling an end event's fields in ``data``; ``orphans``: end events ``(type, data, span id,
    parent id)`` to send first, of spans left open inside the one ending."""
    starts, kind = _kinds.get(type) or _classify(type)
    if "error" in data:
        _mask_error(data)
    stack = _open.get()
    if starts:
        if not stack:
            parent = None
        elif stack[-1].owner == owner:  # the usual case: the innermost span is this kernel's
            parent = stack[-1].span_id
        else:
            parent = current_span_id(owner)
        key = _key(data)
        span_id = _SPAN_PREFIX + str(next(_ids))
        _open.set(stack + (OpenSpan(kind, span_id, parent, key, owner),))  # type: ignore[arg-type]
        return span_id, parent, _NO_ORPHANS
    if not stack:
        return None, None, _NO_ORPHANS
    if kind is not None:
        top = stack[-1]  # the usual case: the span ending is the innermost one
        if top.owner == owner and top.kind == kind and (top.key is None or data.get(top.key[0], top.key[1]) == top.key[1]):
            now = _clock()  # _close inlined for this case (no orphans, no scan; _fill shared)
            _open.set(stack[:-1])
            if "input_tokens" in data and "usage" not in data:
                _count_llm_call(stack, len(stack) - 1, data)
            _fill(top, data, now)
            return top.span_id, top.parent_id, _NO_ORPHANS
        key = _key(data)
        for i in range(len(stack) - 2, -1, -1):
            found = stack[i]
            if found.owner == owner and found.kind == kind and (key is None or found.key is None or found.key == key):
                return _close(stack, i, type, data)
    return None, current_span_id(owner), _NO_ORPHANS


def _classify(type: str) -> tuple[bool, Optional[str]]:
    """``(starts a span, kind)`` of an event type (kind ``None``: neither starts nor ends one); remembered."""
    if type.endswith("_start"):
        found: tuple[bool, Optional[str]] = (True, type[:-6])
    else:
        found = (False, END_ALIASES.get(type) or (type[:-4] if type.endswith("_end") else None))
    if len(_kinds) < _KINDS_KEPT:  # event types are a small set; a flood of made-up ones is not kept
        _kinds[type] = found
    return found


def _key(data: dict[str, Any]) -> Any:
    for name in KEYS:
        value = data.get(name)
        if value is not None:
            return (name, value)
    return None


def _close(stack: tuple[OpenSpan, ...], i: int, type: str, data: dict[str, Any]) -> tuple[Optional[str], Optional[str], Sequence[Any]]:
    span = stack[i]
    now = _clock()
    orphans: list[Any] = []
    if i == len(stack) - 1:
        _open.set(stack[:i])
    else:
        for inner in reversed(stack[i + 1:]):
            if inner.owner != span.owner:
                continue
            orphan = {"error": f"{inner.kind} did not finish before its {span.kind} ended"}
            _fill(inner, orphan, now)
            orphans.append((f"{inner.kind}_end", orphan, inner.span_id, inner.parent_id))
        _open.set(stack[:i] + tuple(s for s in stack[i + 1:] if s.owner != span.owner))
    if "input_tokens" in data and "usage" not in data:
        _count_llm_call(stack, i, data)
    _fill(span, data, now)
    return span.span_id, span.parent_id, orphans or _NO_ORPHANS


def _count_llm_call(stack: tuple[OpenSpan, ...], i: int, data: dict[str, Any]) -> None:
    """An LLM call's end (``stack[i]``): its own tokens count for it and for its ancestors."""
    span = stack[i]
    tokens = (int(data.get("input_tokens") or 0), int(data.get("output_tokens") or 0))
    span.usage = [tokens[0], tokens[1], 1]
    for outer in stack[:i]:
        if outer.owner != span.owner:
            continue
        outer.usage[0] += tokens[0]
        outer.usage[1] += tokens[1]
        outer.usage[2] += 1


def _fill(span: OpenSpan, data: dict[str, Any], now: float) -> None:
    if "duration" not in data:
        data["duration"] = now - span.started
    if "outcome" not in data:
        data["outcome"] = outcome_of(data)
    if "usage" not in data:
        usage = span.usage
        data["usage"] = {"input_tokens": usage[0], "output_tokens": usage[1], "llm_calls": usage[2]}


def outcome_of(data: dict[str, Any]) -> str:
    """``cancelled`` for an aborted/cancelled status, ``error`` for an error or failed state, else ``ok``."""
    status = data.get("status") or data.get("state")
    if status in _CANCEL_STATES:
        return "cancelled"
    if data.get("error") or status in _ERROR_STATES:
        return "error"
    return "ok"


def send(hooks: HookRunner, observers: tuple[Impl, ...], owner: int, type: str, run_id: Optional[str],
         agent: Optional[str], ids: Any, data: dict[str, Any]) -> Optional[Awaitable[None]]:
    """Send one event to ``observers`` (``hooks.impls("zagent_event")``, not empty); an awaitable to await when
    an observer is async, else ``None``. ``ids``: ``spans.tag``'s answer when the caller tagged it already."""
    span_id, parent_id, orphans = ids if ids is not None else tag(type, data, owner)
    event = Event(type=type, time=time.time(), run_id=run_id, agent=agent, span_id=span_id, parent_id=parent_id,
                  data=data)
    if not orphans:
        return hooks.dispatch(observers, event)
    return _send_all(hooks, observers, [
        Event(type=orphan_type, time=event.time, run_id=run_id, agent=agent, span_id=orphan_id,
              parent_id=orphan_parent, data=orphan)
        for orphan_type, orphan, orphan_id, orphan_parent in orphans] + [event])


async def _send_all(hooks: HookRunner, observers: tuple[Impl, ...], events: list[Event]) -> None:
    """The end events of spans left open (then the event that ended their parent), in order."""
    for event in events:
        pending = hooks.dispatch(observers, event)
        if pending is not None:
            await pending


async def emit(hooks: HookRunner, owner: int, type: str, run_id: Optional[str], agent: Optional[str],
               ids: Any, data: dict[str, Any]) -> None:
    """``send`` as a coroutine, to every ``zagent_event`` observer there is (its usual case inlined: this is
    ``RunContext.aemit``'s coroutine)."""
    observers = hooks.impls("zagent_event")
    if not observers:
        return
    span_id, parent_id, orphans = ids if ids is not None else tag(type, data, owner)
    if orphans:
        pending = send(hooks, observers, owner, type, run_id, agent, (span_id, parent_id, orphans), data)
    else:
        pending = hooks.dispatch(observers, Event(type=type, time=time.time(), run_id=run_id, agent=agent,
                                                  span_id=span_id, parent_id=parent_id, data=data))
    if pending is not None:
        await pending
