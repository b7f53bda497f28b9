"""``StreamReply`` (a streamed reply read within the deadline and the size limit), the deadline timer, and
``release`` (a closed response freed by reference counting, not the cycle collector)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, AsyncIterator, Optional

from ..errors import ProtocolError
from .decode import PIECES_FROM, body_chunks, fragmented

if TYPE_CHECKING:  # pragma: no cover
    from .client import HttpClient


class StreamReply:
    """A streamed reply being read: its lines, within the call's deadline and ``max_response_bytes``.

    Made by ``HttpClient.post(..., stream=True)``. It holds the call's slot of the
    in-flight limit until ``aclose()``. Other attributes come from the
    underlying response (``status_code``, ``headers``...).
    """

    __slots__ = ("_response", "_http", "_gate", "_guard", "_size", "_pieces", "_closed", "_end")

    def __init__(self, http: HttpClient, response: Any, gate: Any, guard: Optional["_Deadline"]):
        self._response = response
        self._http = http
        self._gate = gate
        self._guard = guard
        self._size = 0
        self._pieces = 0
        self._closed = False
        self._end: Optional[tuple[float, int]] = None  # (time, size) the reply's end marker was read at
        if guard is not None:
            guard.armed = False

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._response, name)

    @property
    def bytes_read(self) -> int:
        return self._size

    def ended(self) -> None:
        """The provider read the reply's end marker (``[DONE]``, ``message_stop``...): from now on the body is read
        for at most ``AFTER_END_BYTES`` and ``AFTER_END_SECONDS`` more (an honest server ends it at once, and the
        connection is reused), then the lines end quietly and the connection is closed: a server talking on after
        the end can neither hold nor fail a finished reply."""
        if self._end is None:
            import asyncio

            self._end = (asyncio.get_running_loop().time() + AFTER_END_SECONDS, self._size + AFTER_END_BYTES)

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body's (decoded) bytes as they come; ``DeadlineExceeded``/``ResponseTooLarge`` past a limit."""
        import asyncio

        http, guard = self._http, self._guard
        limit = http.config.max_response_bytes
        chunks = body_chunks(self._response, limit, http)
        try:
            while True:
                if guard is not None:
                    if guard.fired:
                        raise http.deadline_error(guard)
                    guard.arm()
                try:
                    if self._end is None:
                        chunk = await chunks.__anext__()
                    else:  # after the end marker: a little more, briefly, or nothing
                        rest = self._end[0] - asyncio.get_running_loop().time()
                        if rest <= 0 or self._size > self._end[1]:
                            return
                        try:
                            chunk = await asyncio.wait_for(chunks.__anext__(), rest)
                        except (asyncio.TimeoutError, ProtocolError):  # a compressed body's junk after the end too
                            return
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    if guard is not None and guard.expired_here():
                        raise http.deadline_error(guard) from None
                    raise
                finally:
                    if guard is not None:
                        guard.armed = False
                self._size += len(chunk)
                if limit is not None and self._size > limit:
                    raise http.too_large(limit, f"streamed, {self._size} bytes so far")
                self._pieces += 1
                if self._pieces > PIECES_FROM and (error := fragmented(
                        self._pieces, self._size, f"{http.provider} ({http.base_url}) ")) is not None:
                    raise error
                yield chunk
        finally:
            await chunks.aclose()

    async def aiter_lines(self) -> AsyncIterator[str]:
        """The body's lines (UTF-8, else ``ProtocolError``; ends ``\\n``, ``\\r\\n`` or ``\\r`` removed); an
        unterminated last line too.

        A line arriving over many chunks is kept as bytes in one ``bytearray`` and decoded once, when it ends:
        linear in its length (re-joining the growing line on every chunk was quadratic), and one byte of memory
        per byte (a list of decoded pieces cost some 50 bytes per piece: a server sending 2-byte chunks made
        32 MiB of body into gigabytes). UTF-8 never has a line break inside a character, so lines split as bytes."""
        pending = bytearray()
        skip_lf = False
        async for chunk in self.aiter_bytes():
            if not chunk:
                continue
            if skip_lf and chunk[:1] == b"\n":
                chunk = chunk[1:]
            skip_lf = False
            if b"\n" not in chunk and b"\r" not in chunk:
                pending += chunk
                continue
            if pending:
                pending += chunk
                chunk = bytes(pending)
                pending.clear()
            cut = max(chunk.rfind(b"\n"), chunk.rfind(b"\r")) + 1
            pending += chunk[cut:]
            skip_lf = not pending and chunk[cut - 1:cut] == b"\r"
            try:
                lines = _NEWLINES.split(chunk[:cut].decode("utf-8"))
            except UnicodeDecodeError:  # line by line: each one before the end marker must be UTF-8
                for raw in _BYTE_NEWLINES.split(chunk[:cut])[:-1]:
                    yield self._text(raw)
                continue
            lines.pop()  # the empty rest after the last line break
            for line in lines:
                yield line
        if pending:
            yield self._text(bytes(pending))  # the unterminated last line

    def _text(self, data: bytes) -> str:
        """``data`` (one line) decoded; bytes that are not UTF-8 are a ``ProtocolError`` (a JSON reply holding them
        is one too), never replacement characters in the text, a call's arguments or its name."""
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            if self._end is not None:  # after the end marker: lines the provider skips, never read as text
                return data.decode("utf-8", "replace")
            http = self._http
            raise ProtocolError(
                f"{http.provider} ({http.base_url}) streamed a line that is not valid UTF-8 (bytes "
                f"{data[exc.start:exc.start + 4]!r} within {self._size} bytes read); zagent does not guess the text. "
                "Check the server or the proxy in front of it", provider=http.provider, status=200) from None

    async def aclose(self) -> None:
        """Close the response and give back its in-flight slot (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            await self._response.aclose()
            release(self._response)
        finally:
            if self._gate is not None:
                self._gate.release()
            if self._guard is not None:
                self._guard.cancel()

    def __repr__(self) -> str:
        return f"<StreamReply {getattr(self._response, 'status_code', '?')} read={self._size}>"


_NEWLINES = re.compile(r"\r\n|\r|\n")
_BYTE_NEWLINES = re.compile(rb"\r\n|\r|\n")
#: What is read of a streamed body after its end marker before it is closed unread (``StreamReply.ended``).
AFTER_END_BYTES = 64 * 1024
AFTER_END_SECONDS = 1.0


class _Deadline:
    """The whole-call deadline of one request: cancels the waiting task when it passes while ``armed`` (the call
    awaits the network); between stream reads it only marks itself passed, and the next read raises. Like
    ``asyncio.timeout`` it tells its own cancellation from another one; under a ``Deadlines`` it needs no timer.
    """

    __slots__ = ("seconds", "task", "handle", "armed", "fired", "when", "_cancelled", "_base", "_loop", "_owner")

    def __init__(self, seconds: float, owner: Optional["Deadlines"] = None):
        import asyncio

        self._loop = asyncio.get_running_loop()
        self.seconds = seconds
        self.fired = False
        self._cancelled = False
        self.task: Any = None
        self._base = 0
        self.arm()
        self.when = self._loop.time() + seconds
        self._owner = owner
        self.handle: Any = None
        if owner is None:
            self.handle = self._loop.call_at(self.when, self._fire)
        else:
            owner.add(self)

    def arm(self) -> None:
        import asyncio

        task = self.task = asyncio.current_task()
        cancelling = getattr(task, "cancelling", None)
        self._base = cancelling() if cancelling is not None else 0
        self.armed = True

    def _fire(self) -> None:
        self.fired = True
        if self.armed and self.task is not None and not self.task.done():
            self._cancelled = True
            self.task.cancel()

    def remaining(self) -> float:
        return self.when - self._loop.time()

    def expired_here(self) -> bool:
        """Whether the ``CancelledError`` being handled is this deadline's own (then it is absorbed)."""
        if not self._cancelled:
            return False
        self._cancelled = False
        uncancel = getattr(self.task, "uncancel", None)
        return uncancel is None or uncancel() <= self._base

    def cancel(self) -> None:
        if self._owner is not None:
            self._owner.discard(self)
        else:
            self.handle.cancel()


class Deadlines:
    """The deadlines of one client on one event loop, all ``seconds`` long, under one timer: they pass in the order
    they start, so an insertion-ordered dict holds the pending ones and the timer is set for the oldest."""

    __slots__ = ("loop", "seconds", "pending", "handle")

    def __init__(self, loop: Any, seconds: float):
        self.loop = loop
        self.seconds = seconds
        self.pending: dict[_Deadline, None] = {}
        self.handle: Any = None

    def add(self, guard: _Deadline) -> None:
        self.pending[guard] = None
        if self.handle is None:
            self.handle = self.loop.call_at(guard.when, self._sweep)

    def discard(self, guard: _Deadline) -> None:
        self.pending.pop(guard, None)

    def _sweep(self) -> None:
        self.handle = None
        now = self.loop.time() + getattr(self.loop, "_clock_resolution", 0.0)  # a timer may run that early
        pending = self.pending
        while pending:
            guard = next(iter(pending))
            if guard.when > now:
                self.handle = self.loop.call_at(guard.when, self._sweep)
                return
            del pending[guard]
            guard._fire()


async def _close_quietly(response: Any) -> None:
    try:
        await response.aclose()
    except Exception:  # closing a broken connection: nothing more to learn
        pass
    release(response)


class _Consumed:
    """What a released response's ``stream`` becomes: an empty, closed stream (sync and async)."""

    __slots__ = ()

    def __iter__(self) -> Any:
        return iter(())

    def __aiter__(self) -> "_Consumed":
        return self

    async def __anext__(self) -> bytes:
        raise StopAsyncIteration

    def close(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


_CONSUMED = _Consumed()


def release(response: Any) -> None:
    """Break the reference cycle httpx leaves in a closed response (its stream refers back to it), so reference
    counting frees it when dropped: the stream of a closed response becomes an empty one. An open one is left alone.
    """
    if getattr(response, "is_closed", False) and hasattr(response, "stream"):
        _retire_overfed(response.stream)
        response.stream = _CONSUMED


def _retire_overfed(stream: Any) -> None:
    """Mark expired (the pool then closes it, never reuses it) a kept-alive HTTP/1.1 connection holding bytes its
    server sent past the whole response: h11 would read them as the reply to the *next* request, one not sent yet
    (a smuggled reply). Reaches into httpx/httpcore's objects; with any other stack it does nothing."""
    for name in ("_stream", "_httpcore_stream", "_pool_request", "connection", "_connection"):
        stream = getattr(stream, name, None)
    state = getattr(stream, "_h11_state", None)
    if state is not None and getattr(state, "trailing_data", (b"",))[0]:
        stream._expire_at = 0.0


def _should_retry(headers: Any) -> Optional[bool]:
    """A server's ``x-should-retry: true|false`` (the OpenAI and Anthropic APIs send it), else ``None``."""
    value = headers.get("x-should-retry")
    if value is None:
        return None
    value = value.strip().lower()
    return True if value == "true" else False if value == "false" else None
