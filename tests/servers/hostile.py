"""A hostile HTTP/1.1 server on 127.0.0.1 (stdlib asyncio, own thread): bodies that never end, trickles, streams forever.

Each test gives it one *behaviour*: an ``async def behave(request, writer)``
that writes whatever it likes (the ``endless_body``, ``trickle``,
``endless_sse``, ``hang``, ``written``, ``reply``, ``echo_headers`` and ``slow`` factories
make the common ones). Requests are counted in ``server.requests``; the most
requests open at one time is ``server.peak_open`` (to check client-side
concurrency limits). The server stops writing when the client goes away.
"""

from __future__ import annotations

import asyncio
import json
from typing import Awaitable, Callable, Optional

from .threaded import Request, ThreadedServer

Behaviour = Callable[[Request, asyncio.StreamWriter], Awaitable[bool]]


class HostileServer(ThreadedServer):
    """``with HostileServer(behave) as server:``; ``server.url`` is its root URL (``/v1`` under it is fine)."""

    thread_name = "hostile-server"
    backlog = 1024

    def __init__(self, behave: Behaviour):
        super().__init__()
        self.behave = behave
        self.open = 0
        self.peak_open = 0

    async def answer_on(self, request: Request, writer: asyncio.StreamWriter) -> bool:
        self.open += 1
        self.peak_open = max(self.peak_open, self.open)
        try:
            return await self.behave(request, writer)
        finally:
            self.open -= 1


def _head(status: int, content_type: str, extra: Optional[dict[str, str]] = None, length: Optional[int] = None) -> bytes:
    lines = [f"HTTP/1.1 {status} X", f"content-type: {content_type}"]
    lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
    lines.append(f"content-length: {length}" if length is not None else "transfer-encoding: chunked")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


# -- behaviours -------------------------------------------------------------------------


def endless_body(size: int = 64 * 1024, content_type: str = "application/json") -> Behaviour:
    """200, then a chunked body of ``size``-byte chunks that never ends."""
    block = _chunk(b"[" * size)

    async def behave(request: Request, writer: asyncio.StreamWriter) -> bool:
        writer.write(_head(200, content_type))
        while True:
            writer.write(block)
            await writer.drain()

    return behave


def trickle(every: float = 0.05, content_type: str = "application/json", length: Optional[int] = None) -> Behaviour:
    """200 (announcing ``length`` bytes, else chunked), then one byte every ``every`` seconds, forever."""
    piece = b" " if length is not None else _chunk(b" ")

    async def behave(request: Request, writer: asyncio.StreamWriter) -> bool:
        writer.write(_head(200, content_type, length=length))
        while True:
            writer.write(piece)
            await writer.drain()
            await asyncio.sleep(every)

    return behave


def endless_sse(every: float = 0.01, text: str = "la ") -> Behaviour:
    """A well-formed OpenAI chat-completions event stream that never finishes."""
    event = b"data: " + json.dumps({"object": "chat.completion.chunk", "model": "m", "choices": [
        {"index": 0, "delta": {"content": text}, "finish_reason": None}]}).encode() + b"\n\n"

    async def behave(request: Request, writer: asyncio.StreamWriter) -> bool:
        writer.write(_head(200, "text/event-stream"))
        while True:
            writer.write(_chunk(event))
            await writer.drain()
            if every:
                await asyncio.sleep(every)

    return behave


def hang() -> Behaviour:
    """Read the request and never answer."""

    async def behave(request: Request, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(3600)
        return False

    return behave


def written(*parts: "bytes | tuple[bytes, float]", keep: bool = False) -> Behaviour:
    """Write ``parts`` (bytes, or ``(bytes, pause in seconds)``) exactly as they are; ``keep``: keep the
    connection open after them."""

    async def behave(request: Request, writer: asyncio.StreamWriter) -> bool:
        for part in parts:
            data, pause = part if isinstance(part, tuple) else (part, 0)
            writer.write(data)
            await writer.drain()
            if pause:
                await asyncio.sleep(pause)
        return keep

    return behave


def reply(status: int = 200, body: bytes = b"", content_type: str = "application/json",
          headers: Optional[dict[str, str]] = None) -> Behaviour:
    """One ordinary reply (connection kept alive)."""

    async def behave(request: Request, writer: asyncio.StreamWriter) -> bool:
        writer.write(_head(status, content_type, headers, len(body)) + body)
        await writer.drain()
        return True

    return behave


def echo_headers(status: int = 400) -> Behaviour:
    """An error reply whose message repeats every request header (as some proxies and debug servers do)."""

    async def behave(request: Request, writer: asyncio.StreamWriter) -> bool:
        seen = "; ".join(f"{k}: {v}" for k, v in request.headers.items())
        body = json.dumps({"error": {"message": f"bad request; you sent {seen}"}}).encode()
        writer.write(_head(status, "application/json", None, len(body)) + body)
        await writer.drain()
        return True

    return behave


def slow(seconds: float, then: Behaviour) -> Behaviour:
    """Wait ``seconds``, then behave as ``then``."""

    async def behave(request: Request, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(seconds)
        return await then(request, writer)

    return behave


def bomb(size: int, layers: int = 2, wbits: int = 31) -> bytes:
    """``size`` zero bytes compressed ``layers`` times (gzip by default; ``wbits=15`` zlib-deflate, ``-15`` raw)."""
    import zlib

    z = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = bytes(2**20)
    parts = [z.compress(block) for _ in range(size // len(block))]
    parts.append(z.compress(bytes(size % len(block))) + z.flush())
    body = b"".join(parts)
    for _ in range(layers - 1):
        z = zlib.compressobj(9, zlib.DEFLATED, wbits)
        body = z.compress(body) + z.flush()
    return body


def encoded(body: bytes, encoding: str, status: int = 200, content_type: str = "application/json") -> Behaviour:
    """One reply whose body is sent as it is, with ``Content-Encoding: encoding`` (a bomb from ``bomb``)."""
    return reply(status, body, content_type, {"content-encoding": encoding})


def long_line(size: int, piece: int = 16 * 1024) -> Behaviour:
    """A 200 event stream of one ``data:`` line of ``size`` bytes with no newline, in ``piece``-byte chunks, then the end."""
    block = _chunk(b"z" * piece)

    async def behave(request: Request, writer: asyncio.StreamWriter) -> bool:
        writer.write(_head(200, "text/event-stream") + _chunk(b"data: "))
        for _ in range(size // piece):
            writer.write(block)
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    return behave


def cut_body(length: int = 1000, sent: bytes = b'{"id": "c", "object": "chat.completion", "cho') -> Behaviour:
    """A 200 announcing ``length`` bytes, sending only ``sent``, then closing the connection."""

    async def behave(request: Request, writer: asyncio.StreamWriter) -> bool:
        writer.write(_head(200, "application/json", length=length) + sent)
        await writer.drain()
        return False

    return behave
