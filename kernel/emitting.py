"""Event emission behind ``Kernel.aemit``: span ids paired per kernel (``zagent.spans``), spans left open by a
failed run closed first, then the event handed to every ``zagent_event`` observer."""

from __future__ import annotations

import time
from typing import Any, Optional

from . import spans
from .hooks import HookRunner
from .types import Event


async def emit(hooks: HookRunner, owner: int, type: str, run_id: Optional[str], agent: Optional[str],
               ids: Any, data: dict[str, Any]) -> None:
    """Send one event (``ids``: ``spans.tag``'s answer when the caller tagged it already, else ``None``)."""
    span_id, parent_id, orphans = ids if ids is not None else spans.tag(type, data, owner)
    for orphan_type, orphan, orphan_id, orphan_parent in orphans:
        await hooks.emit(Event(type=orphan_type, time=time.time(), run_id=run_id, agent=agent,
                               span_id=orphan_id, parent_id=orphan_parent, data=orphan))
    await hooks.emit(Event(type=type, time=time.time(), run_id=run_id, agent=agent,
                           span_id=span_id, parent_id=parent_id, data=data))
