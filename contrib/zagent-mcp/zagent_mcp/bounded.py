"""Transports that bound each message an MCP server sends while it is read (``max_message_bytes``).

``bounded_stdio`` gives the (read, write) streams of a stdio server and stops it on exit (its stderr kept in a
``StderrTail``: the last 64 KiB); ``BoundedStream`` counts an HTTP body (per SSE event) and refuses a compressed one. Past the bound, ``on_over`` is called and
reading stops; a message's long tool or content list is cut first (``trim``). Windows stdio is not bounded.
"""

from __future__ import annotations

import os
import re
import signal
import sys
from contextlib import asynccontextmanager, suppress
from typing import Any, AsyncIterator, Callable, Mapping, Optional

import anyio

from .sdk import sdk
from .trim import TRIM_FROM, error_reply, json_bytes, trimmed

#: bytes an SSE event may use for its framing lines beyond ``max_message_bytes``
SSE_FRAMING = 4096
_CHUNK = 65536
_FLUSH, _EXIT_GRACE, _TERM_GRACE, _KILL_GRACE = 0.5, 2.0, 2.0, 2.0


class StderrTail:
    """The last ``keep`` bytes a stdio server wrote to stderr (``stderr: capture``), read through a pipe: a
    temporary file grew with all of it (a chatty server filled the disk) and a failure report read it whole."""

    def __init__(self, keep: int = 64 * 1024):
        self.keep = keep
        self.data = bytearray()
        self.closed = False

    def feed(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > 2 * self.keep:
            del self.data[:-self.keep]

    def text(self) -> str:
        return bytes(self.data[-self.keep:]).decode("utf-8", "replace")

    def close(self) -> None:
        self.closed = True


class MessageTooLarge(ConnectionError):
    """A server sent a message over its ``max_message_bytes``; the message says which and what to do."""


def size_text(n: int) -> str:
    """``16 MiB``, ``512 KiB`` or ``1000 bytes``."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


def too_large(server: str, limit: int) -> str:
    return (f"server {server!r} sent a message over {size_text(limit)}; "
            "raise max_message_bytes in its config if it is trusted")


# -- stdio --------------------------------------------------------------------------------------------


@asynccontextmanager
async def bounded_stdio(command: str, args: list[str], env: Optional[Mapping[str, str]], cwd: Optional[str],
                        errlog: Any, limit: int, on_over: Callable[[], None]) -> AsyncIterator[Any]:
    """Start ``command`` and yield the SDK's (read, write) message streams; stop the server on exit."""
    if sys.platform == "win32":  # pragma: no cover - see the module docstring
        mcp = sdk("mcp")
        params = mcp.StdioServerParameters(command=command, args=args, cwd=cwd, env=dict(env) if env else None)
        async with mcp.stdio_client(params, errlog=errlog) as streams:
            yield streams
        return
    SessionMessage = sdk("mcp.shared.message").SessionMessage
    adapter = sdk("mcp_types").jsonrpc_message_adapter
    environment = sdk("mcp.client.stdio").get_default_environment() | dict(env or {})

    tail = errlog if isinstance(errlog, StderrTail) else None
    process = await anyio.open_process([command, *args], env=environment, stderr=-1 if tail else errlog, cwd=cwd,
                                       start_new_session=True)  # -1: subprocess.PIPE
    assert process.stdout is not None and process.stdin is not None  # opened with pipes
    stdout, stdin = process.stdout, process.stdin
    read_writer, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, write_reader = anyio.create_memory_object_stream[Any](0)
    writer_done = anyio.Event()

    def parse(line: bytes) -> Any:
        try:
            return SessionMessage(adapter.validate_json(trimmed(line), by_name=False))
        except ValueError as exc:  # not JSON-RPC: the session hands it to the message handler
            error = unreadable_reply(line, exc)
            return exc if error is None else SessionMessage(adapter.validate_python(error, by_name=False))

    async def reader() -> None:
        parts: list[bytes] = []
        pending = 0  # bytes of the line being read
        deliver = True  # after the session is gone the rest is read and dropped, so the server can exit
        with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async with read_writer:
                while True:
                    chunk = await stdout.receive(_CHUNK)
                    start = 0
                    while deliver:
                        end = chunk.find(b"\n", start)
                        if end < 0:
                            break
                        if pending + end - start > limit:
                            parts.clear()
                            on_over()
                            return  # the read stream closes: the session sees the connection end
                        parts.append(chunk[start:end])
                        line, parts, pending, start = b"".join(parts), [], 0, end + 1
                        try:
                            await read_writer.send(parse(line))
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            deliver = False
                    if not deliver:
                        continue
                    pending += len(chunk) - start
                    if pending > limit:
                        parts.clear()
                        on_over()
                        return
                    if start < len(chunk):
                        parts.append(chunk[start:] if start else chunk)

    async def writer() -> None:
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await stdin.send(data.encode("utf-8"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the server stopped reading: the session sees the end
        finally:
            writer_done.set()

    async def drain() -> None:  # the server's stderr, for ever (a full pipe would stop the server)
        assert tail is not None and process.stderr is not None
        with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            while True:
                tail.feed(await process.stderr.receive(_CHUNK))

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        if tail is not None:
            tg.start_soon(drain)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                read_stream.close()
                write_stream.close()
                with anyio.move_on_after(_FLUSH):
                    await writer_done.wait()
                await _stop(process)
                for stream in (read_stream, write_stream, read_writer, write_reader):
                    await stream.aclose()
            tg.cancel_scope.cancel()


def unreadable_reply(line: bytes, exc: BaseException) -> Optional[dict[str, Any]]:
    """A JSON-RPC error answering the request a message zagent cannot parse (nested too deep, say) names, so that
    call fails at once saying why, as the SDK's HTTP client does, instead of waiting for its timeout
    (``trim.error_reply``; ``None``: not a JSON-RPC object naming an id)."""
    from zagent.plugins.cliterminal import printable

    reason = printable(" ".join(str(exc).split())[:200], layout=False)
    return error_reply(line, f"the server's reply could not be read ({reason}); it is not valid JSON-RPC or is "
                             "nested too deep")


async def _stop(process: Any) -> None:
    """MCP shutdown: close stdin, wait; SIGTERM the process group, wait; SIGKILL; close stdout."""
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    for sig, grace in ((None, _EXIT_GRACE), (signal.SIGTERM, _TERM_GRACE), (signal.SIGKILL, _KILL_GRACE)):
        if sig is not None:
            with suppress(OSError):
                os.killpg(process.pid, sig)  # its own session: the group id is its pid
        if await _exited(process, grace):
            break
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()
        if process.stderr is not None:  # a ``StderrTail``'s pipe
            await process.stderr.aclose()


async def _exited(process: Any, timeout: float) -> bool:
    """Whether the process exited (and was reaped) within ``timeout``; polls ``returncode``
    (``wait()`` would also wait for the pipes, which a child of the server may hold open)."""
    with anyio.move_on_after(timeout):
        while process.returncode is None:
            await anyio.sleep(0.01)
    return process.returncode is not None


# -- HTTP ---------------------------------------------------------------------------------------------


def bounded_stream_class() -> type:
    """``BoundedStream``, a subclass of the SDK's httpx's ``AsyncByteStream`` (imported on first use)."""
    global _BoundedStream
    if _BoundedStream is None:
        sdk("mcp.shared._httpx_utils")  # the SDK's HTTP client module, under the import lock, before httpx2
        from httpx2 import AsyncByteStream, StreamError

        class BoundedStream(AsyncByteStream):
            """A response's raw bytes, counted per message (``events``: per SSE event) up to ``limit``."""

            def __init__(self, inner: Any, limit: int, events: bool, refuse: str,
                         on_over: Callable[[str], None]):
                self.inner, self.limit, self.events, self.refuse, self.on_over = inner, limit, events, refuse, on_over

            async def __aiter__(self) -> AsyncIterator[bytes]:
                if self.refuse:
                    self.on_over(self.refuse)
                    raise StreamError(self.refuse)
                count, last = 0, b""
                held: list[bytes] = []  # an event stream's unfinished line, or a JSON body: trimmed once whole
                async for chunk in self.inner:
                    if self.events:
                        count = _since_blank_line(last + chunk, count + len(chunk))
                        last = chunk[-1:]
                    else:
                        count += len(chunk)
                    if count > self.limit:
                        self.on_over("")
                        raise StreamError("message over max_message_bytes")
                    cut = max(chunk.rfind(b"\n"), chunk.rfind(b"\r")) + 1 if self.events else 0
                    if not cut:  # no line ended: the SDK could not act on these bytes yet either
                        held.append(chunk)
                        continue
                    lines = b"".join((*held, chunk[:cut])) if held else chunk[:cut]
                    held = [chunk[cut:]] if cut < len(chunk) else []
                    yield _trimmed_lines(lines)
                if held:
                    rest = b"".join(held)
                    yield _trimmed_lines(rest) if self.events else trimmed(rest)

            async def aclose(self) -> None:
                await self.inner.aclose()

        _BoundedStream = BoundedStream
    return _BoundedStream


_BoundedStream: Optional[type] = None


#: the shortest reconnection delay (``retry:``, milliseconds) a server may ask for: ``retry: 0`` on a stream it
#: then ends at once had the SDK open it again without pause, forever
MIN_RETRY_MS = 1000
_RETRY = re.compile(rb"(?:^|(?<=[\r\n]))retry:([^\r\n]*)")  # a ``retry:`` line, any line end


def _raised_retry(line: "re.Match[bytes]") -> bytes:
    """A ``retry:`` line as the SDK reads it (``int()`` of its value: ``" 0"``, ``"-5"``, ``"0_0"``, other scripts'
    digits too), raised to ``MIN_RETRY_MS`` when it asks for less."""
    value = line[1][1:] if line[1][:1] == b" " else line[1]
    try:
        wait = int(value.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return line[0]  # not a number: the SDK ignores it too
    return b"retry: %d" % MIN_RETRY_MS if wait < MIN_RETRY_MS else line[0]


def _trimmed_lines(lines: bytes) -> bytes:
    """Whole lines of an event stream with each long ``data:`` line's message ``trimmed``, a ``data:`` line that
    is not UTF-8 made an error for the request it answers (httpx would decode it with replacement characters: text
    the server never sent, silently), and a ``retry:`` under ``MIN_RETRY_MS`` raised to it."""
    if b"retry:" in lines:
        lines = _RETRY.sub(_raised_retry, lines)
    if len(lines) < TRIM_FROM and _utf8(lines):
        return lines
    out = []
    for line in lines.split(b"\n"):
        if line.startswith(b"data:") and not _utf8(line):
            error = error_reply(line[5:], "the server's message is not valid UTF-8; zagent does not guess its text")
            line = b"data: " + (b"{}" if error is None else json_bytes(error)) + (b"\r" if line.endswith(b"\r") else b"")
        elif len(line) >= TRIM_FROM and line.startswith(b"data:"):
            end = b"\r" if line.endswith(b"\r") else b""
            payload = line[5:len(line) - len(end)]
            line = b"data: " + trimmed(payload[1:] if payload[:1] == b" " else payload) + end
        out.append(line)
    return b"\n".join(out)


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _since_blank_line(data: bytes, count: int) -> int:
    """Bytes of the current SSE event after ``data`` (the last byte read before, then a chunk): ``count`` if
    ``data`` holds no blank line, else the bytes after the last one.

    An event ends at a blank line: two line ends in a row, which in bytes is ``\\n\\n``, ``\\r\\r`` or ``\\n\\r``
    (``\\r\\n\\r\\n`` is matched whole, so its last ``\\n`` is not counted).
    """
    after = max((found + len(end) for end in (b"\r\n\r\n", b"\n\n", b"\r\r", b"\n\r")
                 if (found := data.rfind(end)) >= 0), default=-1)
    return count if after < 0 else len(data) - after
