"""Event emission behind ``Kernel.aemit``: span ids paired per kernel (``zagent._runs.spans``), spans a
failed run left open closed first, then the events handed to every ``zagent_event`` observer.
"""

from __future__ import annotations

import time
from typing import Any, Awaitable, Optional

from . import spans
from .._hooks.runner import HookRunner, Impl
from ..types import Event


def send(hooks: HookRunner, observers: tuple[Impl, ...], owner: int, type: str, run_id: Optional[str],
         agent: Optional[str], ids: Any, data: dict[str, Any]) -> Optional[Awaitable[None]]:
    """Send one event to ``observers`` (``hooks.impls("zagent_event")``, not empty); an awaitable to await when
    an observer is async, else ``None``. ``ids``: ``spans.tag``'s answer when the caller tagged it already."""
    span_id, parent_id, orphans = ids if ids is not None else spans.tag(type, data, owner)
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
    span_id, parent_id, orphans = ids if ids is not None else spans.tag(type, data, owner)
    if orphans:
        pending = send(hooks, observers, owner, type, run_id, agent, (span_id, parent_id, orphans), data)
    else:
        pending = hooks.dispatch(observers, Event(type=type, time=time.time(), run_id=run_id, agent=agent,
                                                  span_id=span_id, parent_id=parent_id, data=data))
    if pending is not None:
        await pending
