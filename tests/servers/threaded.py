"""The part every loopback test server shares: a stdlib-asyncio HTTP/1.1 server on 127.0.0.1 in its own thread.

``ThreadedServer`` (the base of ``LoopbackServer`` and ``HostileServer``) starts on ``with server:`` (an
ephemeral port, ``server.url``), reads each request (``read_request``), records it in ``server.requests`` and
hands it to the subclass's ``answer_on``, which writes the reply and says whether the connection may serve
another request. On exit the server stops, cancelling any answer still running (a hanging reply ends quietly).
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Optional, TypeVar

import attrs


@attrs.define
class Request:
    """One request as the server read it (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


async def read_request(reader: asyncio.StreamReader) -> Optional[Request]:
    """The next request on a connection (its body by ``content-length``), or ``None`` when the client is gone."""
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


S = TypeVar("S", bound="ThreadedServer")


class ThreadedServer:
    """Base of the loopback servers: lifecycle, request reading and bookkeeping; subclasses answer."""

    #: the server thread's name and the listen backlog (asyncio's default unless a subclass needs more)
    thread_name = "loopback-server"
    backlog = 100

    def __init__(self) -> None:
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

    async def answer_on(self, request: Request, writer: asyncio.StreamWriter) -> bool:
        """Write the answer to ``request``; return whether the connection may be reused."""
        raise NotImplementedError

    def __enter__(self: S) -> S:
        ready = threading.Event()

        def run() -> None:
            loop = self._loop = asyncio.new_event_loop()
            self._server = loop.run_until_complete(
                asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=self.backlog))
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._shutdown())
            loop.close()

        self._thread = threading.Thread(target=run, name=self.thread_name, daemon=True)
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
        # every task of this loop, including a connection's ``_serve`` accepted just before the stop that has not
        # started yet (cancelled before its first step, its coroutine closes without a "never awaited" warning)
        tasks = {*self._tasks, *asyncio.all_tasks()} - {asyncio.current_task()}
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        self.connections += 1
        try:
            while True:
                request = await read_request(reader)
                if request is None:
                    break
                self.requests.append(request)
                if not await self.answer_on(request, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:  # server shutdown while a reply hangs: end quietly
            pass
        finally:
            self._tasks.discard(task)
            if not writer.is_closing():
                writer.close()
