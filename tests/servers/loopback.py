"""A scriptable HTTP/1.1 server on 127.0.0.1, stdlib asyncio only, running in its own thread.

Tests script what it answers, one ``Reply`` per request (or a callable
``reply(request) -> Reply``), with faults a real network produces:

* ``Reply(status=429, headers={"retry-after": "0"})`` -- any status, headers, body;
* ``Reply(chunks=[...])`` -- a chunked (streamed) body, then ``end=`` one of
  ``"done"`` (proper end), ``"close"`` (connection closed mid-body: truncated),
  ``"reset"`` (TCP reset mid-body);
* ``Reply(hang=True)`` -- read the request and never answer (client timeout);
* ``Reply(body=b"{not json")`` -- a malformed body.

When the script is exhausted the server uses its ``default`` callable. Every
request is recorded in ``server.requests`` (method, path, headers, body).
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from typing import Any, Callable, Optional, Union

import attrs

from .threaded import Request, ThreadedServer

__all__ = ["LoopbackServer", "Reply", "Request", "Script"]


@attrs.define
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = attrs.field(factory=dict)
    chunks: Optional[list[bytes]] = None
    end: str = "done"
    hang: bool = False
    content_type: str = "application/json"

    @classmethod
    def json(cls, data: Any, status: int = 200, **kw: Any) -> "Reply":
        return cls(status=status, body=json.dumps(data).encode(), **kw)


Script = Union[Reply, Callable[[Request], Reply]]

_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            408: "Request Timeout", 409: "Conflict", 429: "Too Many Requests", 500: "Internal Server Error",
            502: "Bad Gateway", 503: "Service Unavailable"}


class LoopbackServer(ThreadedServer):
    """Start with ``with LoopbackServer(default) as server:``; ``server.url`` is its root URL."""

    def __init__(self, default: Callable[[Request], Reply]):
        super().__init__()
        self.default = default
        self.script: list[Script] = []

    def then(self, *replies: Script) -> "LoopbackServer":
        """Queue replies for the next requests, in order."""
        self.script.extend(replies)
        return self

    async def answer_on(self, request: Request, writer: asyncio.StreamWriter) -> bool:
        script = self.script.pop(0) if self.script else self.default
        reply = script(request) if callable(script) else script
        return await self._write(reply, writer)

    async def _write(self, reply: Reply, writer: asyncio.StreamWriter) -> bool:
        """Send ``reply``; return whether the connection may be reused."""
        if reply.hang:
            await asyncio.sleep(3600)
            return False
        reason = _REASONS.get(reply.status, "Status")
        head = [f"HTTP/1.1 {reply.status} {reason}", f"content-type: {reply.content_type}"]
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        if reply.chunks is None:
            head.append(f"content-length: {len(reply.body)}")
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + reply.body)
            await writer.drain()
            return True
        head.append("transfer-encoding: chunked")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        for chunk in reply.chunks:
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            await writer.drain()
        if reply.end == "done":
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        await asyncio.sleep(0.05)  # let the client read what was sent before the cut
        if reply.end == "reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort() if reply.end == "reset" else writer.close()
        return False
