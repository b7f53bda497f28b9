"""``McpServe`` over stdio, bounded as over HTTP. zagent reads stdin itself (the SDK read a line whole, however
long): a line over ``MAX_LINE`` (4 MiB, the HTTP body limit) is dropped as it comes and answered with an error
naming the limit. At most ``open_limit`` requests are open at once: past that nothing more is read until answers
are written (a client never reading them made the SDK hold a task and an answer per request).
"""

from __future__ import annotations

import os
import re
import sys
from contextlib import contextmanager
from typing import Any, Iterator, Optional

import anyio

from .sdk import sdk

__all__ = ["MAX_LINE", "MAX_OPEN", "serve_stdio"]

#: the longest request line read (bytes; the streamable-HTTP transport's body limit)
MAX_LINE = 4 * 1024 * 1024
#: requests open at once (read, not yet answered) when ``max_calls`` asks for no more
MAX_OPEN = 64
_CHUNK = 65536
# the top-level id of a JSON-RPC request as the SDK's client writes it (before "params"), to answer a refused line
_ID = re.compile(rb'^\s*\{(?:[^{}\[\]"]*"[^"\\]{0,40}"\s*:\s*(?:"[^"\\]{0,80}"|[\w.+-]{1,40})\s*,)*?\s*"id"\s*:\s*'
                 rb'(-?\d{1,18}|"[^"\\]{0,200}")\s*[,}]')


class LineReader:
    """The SDK's ``stdin``: the lines of file descriptor ``fd``; a line over ``MAX_LINE`` is skipped unkept."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buf, self.scanned, self.eof = fd, bytearray(), 0, False
        self.write: Any = None  # the server's write stream, to answer a skipped line

    def __aiter__(self) -> "LineReader":
        return self

    async def _read(self) -> bytes:
        chunk = await anyio.to_thread.run_sync(os.read, self.fd, _CHUNK, abandon_on_cancel=True)
        self.eof = not chunk
        return chunk

    async def __anext__(self) -> str:
        while True:
            end = self.buf.find(b"\n", self.scanned)
            if end >= 0:
                line = bytes(self.buf[:end + 1])
                del self.buf[:end + 1]
                self.scanned = 0
                return line.decode("utf-8", "replace")
            self.scanned = len(self.buf)
            if self.scanned > MAX_LINE:
                await self._skip()
            elif self.eof:
                if not self.buf:
                    raise StopAsyncIteration
                line = bytes(self.buf)
                self.buf.clear()
                return line.decode("utf-8", "replace")
            else:
                self.buf += await self._read()

    async def _skip(self) -> None:
        """Drop the rest of an over-long line as it comes, then answer it (by its id when it starts with one)."""
        found = _ID.match(bytes(self.buf[:4096]))
        self.buf.clear()
        self.scanned = 0
        while not self.eof:
            chunk = await self._read()
            end = chunk.find(b"\n")
            if end >= 0:
                self.buf += chunk[end + 1:]
                break
        request_id: Optional[Any] = None
        if found:
            raw = found.group(1)
            request_id = raw[1:-1].decode("utf-8", "replace") if raw.startswith(b'"') else int(raw)
        sys.stderr.write(f"zagent mcp serve: skipped a request line over {MAX_LINE >> 20} MiB\n")
        if self.write is not None:
            t = sdk("mcp.types")
            text = (f"this request is over {MAX_LINE >> 20} MiB, the most zagent mcp serve reads (over stdio as over "
                    "HTTP); it was skipped unread: send smaller arguments (a file path or URL instead of the data)")
            error = t.JSONRPCError(jsonrpc="2.0", id=request_id, error=t.ErrorData(code=-32600, message=text))
            await self.write.send(sdk("mcp.shared.message").SessionMessage(error))


class OpenRequests:
    """Counts the requests read and not yet answered; ``seen`` waits while ``limit`` are open."""

    def __init__(self, limit: int) -> None:
        self.limit, self.count = limit, 0
        self.ids: dict[str, int] = {}  # open requests by id (a client may repeat one)
        self._room: Optional[anyio.Event] = None

    async def seen(self, item: Any) -> None:
        t = sdk("mcp.types")
        message = getattr(item, "message", None)
        if isinstance(message, t.JSONRPCRequest):
            while self.count >= self.limit:
                self._room = anyio.Event()
                await self._room.wait()
            key = str(message.id)
            self.ids[key] = self.ids.get(key, 0) + 1
            self.count += 1
        elif isinstance(message, t.JSONRPCNotification) and message.method == "notifications/cancelled":
            params = message.params if isinstance(message.params, dict) else {}
            self.closed(params.get("requestId"))  # a cancelled request is never answered

    def closed(self, request_id: Any) -> None:
        key = str(request_id)
        left = self.ids.get(key, 0)
        if not left:
            return
        if left == 1:
            del self.ids[key]
        else:
            self.ids[key] = left - 1
        self.count -= 1
        if self._room is not None:
            self._room.set()


class _GatedRead:
    """The server's read stream, holding each request back while ``gate`` is full."""

    def __init__(self, inner: Any, gate: OpenRequests) -> None:
        self.inner, self.gate = inner, gate

    @property
    def last_context(self) -> Any:
        return getattr(self.inner, "last_context", None)

    async def receive(self) -> Any:
        item = await self.inner.receive()
        await self.gate.seen(item)
        return item

    def __aiter__(self) -> "_GatedRead":
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> "_GatedRead":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class _CountedWrite:
    """The server's write stream, closing a request in ``gate`` once its answer is written."""

    def __init__(self, inner: Any, gate: OpenRequests) -> None:
        self.inner, self.gate = inner, gate

    async def send(self, item: Any) -> None:
        await self.inner.send(item)
        t = sdk("mcp.types")
        message = getattr(item, "message", None)
        if isinstance(message, (t.JSONRPCResponse, t.JSONRPCError)):
            self.gate.closed(message.id)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> "_CountedWrite":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


@contextmanager
def _claimed_stdin() -> Iterator[int]:
    """A private copy of fd 0 to read the wire from; fd 0 itself reads the null device meanwhile (a console
    prompt or a child process must not read the client's messages, as with the SDK's own claim)."""
    import fcntl

    try:
        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:  # no fd 0 to move (closed): read it as it is
        yield 0
        return
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        yield private
    finally:
        os.dup2(private, 0)  # the copy stays open: a reader thread may still be blocked on it


async def serve_stdio(server: Any, open_limit: int = MAX_OPEN) -> None:
    """Run the SDK ``server`` on this process's stdin and stdout until the client closes stdin."""
    stdio_server = sdk("mcp.server.stdio").stdio_server
    options = server.create_initialization_options()
    if sys.platform == "win32":  # pragma: no cover - no fd claim there: the SDK's own (unbounded) reader
        async with stdio_server() as (read, write):
            await server.run(read, write, options)
        return
    gate = OpenRequests(open_limit)
    with _claimed_stdin() as fd:
        reader = LineReader(fd)
        async with stdio_server(stdin=reader) as (read, write):
            reader.write = write
            await server.run(_GatedRead(read, gate), _CountedWrite(write, gate), options)
