"""Every agent's ``astream()`` (docs/streaming.md): ``astream_run(kernel, start, json_mode=False)`` runs ``start()``
and yields ``StreamEvent``s (``text``, ``reasoning``, ``event``, ``partial``, last ``result``); an error of the run
is raised from the iterator, and closing it early cancels the run. ``Streaming`` gives a class
``astream``/``stream``; ``sync_stream`` is the sync twin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable, Iterator, Optional

import attrs

from .._runs.context import STREAM_SINK
from .._runs.stash import StashKey
from ..types import Chunk, Event

if TYPE_CHECKING:  # pragma: no cover
    import asyncio


@attrs.frozen
class StreamEvent:
    """One item of ``astream()``: ``type`` is ``text``, ``reasoning``, ``event``, ``partial`` or ``result``."""

    type: str
    text: str = ""
    event: Optional[Event] = None
    partial: Optional[dict[str, Any]] = None
    result: Any = None

    def __repr__(self) -> str:
        detail = self.text if self.type in ("text", "reasoning") else (
            self.event.type if self.event is not None else self.partial if self.partial is not None else self.result)
        return f"<StreamEvent {self.type} {str(detail)[:60]!r}>"


class _Relay:
    """The ``zagent_event`` observer of streamed runs: an event of a streamed task goes to its sink (what the
    sink returns, an awaitable when the stream is full, is awaited by the event's sender)."""

    def zagent_event(self, event: Event) -> Any:
        sink = STREAM_SINK.get()
        if sink is not None:
            return sink(event)
        return None


_RELAY: StashKey[list[Any]] = StashKey("zagent.agentkit.streaming.relay")  # [relay plugin, streams running]


def _attach(kernel: Any) -> None:
    held = kernel.stash.get(_RELAY)
    if held is None:
        relay = _Relay()
        kernel.add_plugin(relay, name="zagent.stream-relay")
        kernel.stash[_RELAY] = held = [relay, 0]
    held[1] += 1


def _detach(kernel: Any) -> None:
    held = kernel.stash.get(_RELAY)
    if held is None:
        return
    held[1] -= 1
    if held[1] <= 0:  # no stream left: events cost nothing again when nothing else observes them
        del kernel.stash[_RELAY]
        kernel.remove_plugin(held[0])


def _running_loop() -> Any:
    """The event loop running in this thread, or ``None``."""
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


_DONE = object()
#: the most items a stream holds for a consumer reading slower than its run writes; the run then waits
MAX_QUEUED = 1024
#: ...until the consumer has read the stream down to this many
RESUME_AT = MAX_QUEUED // 2


class _Sink:
    """A stream's queue as its runs' sink; it takes a held reply's marks (``agentkit.holding``). An item is queued
    at once; from ``MAX_QUEUED`` items on the call also returns an awaitable, which its caller awaits, until the
    consumer has read the queue down to ``RESUME_AT`` (backpressure: memory stays bounded). An item sent from
    another thread is handed to the stream's loop and never waits."""

    __slots__ = ("queue", "room", "loop", "read")
    takes_marks = True

    def __init__(self, queue: "asyncio.Queue[Any]", room: "asyncio.Event", loop: "asyncio.AbstractEventLoop") -> None:
        self.queue, self.room, self.loop = queue, room, loop
        self.read = True  # someone reads the stream (False once it ended: nothing may wait for it then)

    def __call__(self, item: Any) -> Optional[Awaitable[Any]]:
        if _running_loop() is not self.loop:  # another thread (``Kernel.emit`` runs on zagent's background loop)
            try:  # asyncio's queue is not thread-safe: the stream's own loop puts the item; nothing waits
                self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
            except RuntimeError:  # that loop is closed: the stream ended, no one reads it
                pass
            return None
        queue = self.queue
        queue.put_nowait(item)
        if queue.qsize() < MAX_QUEUED or not self.read:
            return None
        self.room.clear()
        return self.room.wait()


async def astream_run(kernel: Any, start: Callable[[], Awaitable[Any]], *,
                      json_mode: bool = False) -> AsyncIterator[StreamEvent]:
    """Run ``start()`` and yield its stream (see the module docstring)."""
    import asyncio

    from .partialjson import PartialReply

    from .holding import Mark

    queue: "asyncio.Queue[Any]" = asyncio.Queue()  # bounded by the sink: the run waits past MAX_QUEUED items
    room = asyncio.Event()
    room.set()
    sink = _Sink(queue, room, asyncio.get_running_loop())
    _attach(kernel)
    token = STREAM_SINK.set(sink)
    try:
        task = asyncio.ensure_future(start())  # the task's context holds the sink
    finally:
        STREAM_SINK.reset(token)
    task.add_done_callback(lambda _t: queue.put_nowait(_DONE))
    reply = PartialReply()
    try:
        while True:
            item = await queue.get()
            if not room.is_set() and queue.qsize() <= RESUME_AT:
                room.set()  # the run may go on
            if item is _DONE:
                break
            if isinstance(item, Mark):  # a held reply's start or end, released after its guardrails passed
                if item.type == "llm_start":
                    reply = PartialReply()
                elif json_mode:
                    found = reply.flush()
                    if found is not None:
                        yield StreamEvent(type="partial", partial=found)
            elif isinstance(item, Chunk):
                yield StreamEvent(type=item.type, text=item.text)
                if json_mode and item.type == "text":
                    found = reply.feed(item.text)
                    if found is not None:
                        yield StreamEvent(type="partial", partial=found)
            elif isinstance(item, Event):
                if item.type == "llm_start":  # a new reply begins
                    reply = PartialReply()
                elif json_mode and item.type == "llm_end":  # the reply is whole: what was not read yet
                    found = reply.flush()
                    if found is not None:
                        yield StreamEvent(type="partial", partial=found)
                yield StreamEvent(type="event", event=item)
        yield StreamEvent(type="result", result=task.result())
    finally:
        sink.read = False  # nothing waits for a stream no one reads any more (the run's last events neither)
        room.set()
        try:
            if not task.done():  # the consumer stopped early: the run stops too
                task.cancel()
                await asyncio.wait([task])  # a cancellation of the consumer itself still propagates
            if not task.cancelled():
                task.exception()  # retrieved (raised above, or moot): no "never retrieved" warning
        finally:
            _detach(kernel)


def sync_stream(stream: AsyncIterator[StreamEvent]) -> Iterator[StreamEvent]:
    """The sync twin of an ``astream()``: the same items, the run going on zagent's background loop
    (works in plain scripts, inside a running loop and in threads); leaving the loop cancels the run."""
    from .._runs.sync import run_sync

    try:
        while True:
            try:
                yield run_sync(stream.__anext__())
            except StopAsyncIteration:
                return
    finally:
        run_sync(stream.aclose())  # type: ignore[attr-defined]


class Streaming:
    """Mixin: ``astream(*args, **kwargs)`` streams ``self.arun(*args, **kwargs)`` (see ``astream_run``);
    ``stream`` is its sync twin."""

    __slots__ = ()

    def astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[StreamEvent]:
        """Run as ``arun`` does, yielding text deltas, step events and, last, the result."""
        return astream_run(self.kernel, lambda: self.arun(*args, **kwargs))  # type: ignore[attr-defined]

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[StreamEvent]:
        """Sync twin of ``astream``."""
        return sync_stream(self.astream(*args, **kwargs))


__all__ = ["StreamEvent", "Streaming", "astream_run", "sync_stream"]
