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
import threading
from typing import Any, Callable, Optional, Union

import attrs


@attrs.define
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


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


class LoopbackServer:
    """Start with ``with LoopbackServer(default) as server:``; ``server.url`` is its root URL."""

    def __init__(self, default: Callable[[Request], Reply]):
        self.default = default
        self.script: list[Script] = []
        self.requests: list[Request] = []
        self.connections = 0  # accepted so far (keep-alive reuse shows as fewer connections than requests)
        self.port = 0
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._server: Any = None
        self._tasks: set[asyncio.Task] = set()
        self._thread: Optional[threading.Thread] = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def then(self, *replies: Script) -> "LoopbackServer":
        """Queue replies for the next requests, in order."""
        self.script.extend(replies)
        return self

    # -- lifecycle ------------------------------------------------------------------

    def __enter__(self) -> "LoopbackServer":
        ready = threading.Event()

        def run() -> None:
            loop = self._loop = asyncio.new_event_loop()
            self._server = loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._shutdown())
            loop.close()

        self._thread = threading.Thread(target=run, name="loopback-server", daemon=True)
        self._thread.start()
        ready.wait(5)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(5)

    async def _shutdown(self) -> None:
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- serving ------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        self.connections += 1
        try:
            while True:
                request = await self._read(reader)
                if request is None:
                    break
                self.requests.append(request)
                script = self.script.pop(0) if self.script else self.default
                reply = script(request) if callable(script) else script
                if not await self._write(reply, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:  # server shutdown while a reply hangs: end quietly
            pass
        finally:
            self._tasks.discard(task)
            if not writer.is_closing():
                writer.close()

    async def _read(self, reader: asyncio.StreamReader) -> Optional[Request]:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
        return Request(method=method, path=target, headers=headers, body=body)

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
