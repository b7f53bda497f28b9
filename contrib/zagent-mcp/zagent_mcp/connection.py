"""One MCP server, ``ServerConnection``: session, tools, state and reconnection, used on the runtime's loop only.

States: ``configured``, ``connecting``, ``ready``, ``failed`` (``error`` says why), ``disconnected`` (the next
call reconnects), ``closed``. A call that loses its connection reconnects once and is resent only for a
``readOnlyHint``/``idempotentHint`` tool or an expired HTTP session. Errors are scrubbed of secrets.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from contextlib import AsyncExitStack
import logging
from typing import TYPE_CHECKING, Any, Callable, Optional

from .bounded import SSE_FRAMING, MessageTooLarge, StderrTail, bounded_stdio, bounded_stream_class, too_large
from .config import ServerConfig
from .failures import (_CONNECTION_CLOSED, NotAnMcpServer, _connection_lost, _describe, _http_fallback,
                       _junk_excerpt, _known_dead, _leaf, _method_of, _retrieved, _server_error, _session_expired,
                       http_refusal)
from .refresh import Relister
from .results import McpToolError, refuse_non_finite, unvalidated
from .sdk import sdk

if TYPE_CHECKING:  # pragma: no cover
    from mcp import ClientSession

log = logging.getLogger("zagent.mcp")

_MAX_PAGES = 100
#: tools read of one server's list (the rest are dropped, with a warning): each is offered to models
MAX_TOOLS = 1000
#: characters of a server's name and version kept (control characters shown escaped)
MAX_SERVER_INFO = 200


class ServerConnection:
    """The live side of one ``ServerConfig``; use only on the runtime's loop."""

    def __init__(self, config: ServerConfig):
        self.config = config
        self.state = "configured"
        self.error: Optional[str] = None
        self.tools: list[dict[str, Any]] = []
        self.server_info = ""
        self.connects = 0
        self._session: Any = None
        self._owner: Optional[asyncio.Task[None]] = None
        self._stop: Optional[asyncio.Event] = None
        self._lock: Optional[asyncio.Lock] = None
        self._stderr: Any = None
        self._http_refusal: Optional[str] = None  # "HTTP 401 Unauthorized ..." of the last refused request
        self._ready: Optional[asyncio.Future[list[dict[str, Any]]]] = None  # the connect in progress, failed early by junk on stdout
        self._too_large: Optional[str] = None  # why the server was cut off: a message over max_message_bytes
        self._relister = Relister(self.refresh_tools, config.name)  # list_changed: read again, at most once a second
        #: called (on the runtime's loop) after the server said its tool list changed and it was read again
        self.on_tools_changed: Optional[Callable[["ServerConnection"], None]] = None

    # -- connecting -----------------------------------------------------------

    async def connect(self) -> None:
        """Start the server (or open the HTTP session), initialize and list tools; never raises.

        On failure ``state`` is ``failed`` and ``error`` says why (with the
        last lines of a stdio server's stderr).
        """
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.state == "ready" and self._session is not None:  # a first call connected it meanwhile
                return
            await self._connect()

    async def _connect(self) -> None:
        await self._stop_owner()
        self.state, self.error, self._http_refusal, self._too_large = "connecting", None, None, None
        self.connects += 1
        ready: asyncio.Future[list[dict[str, Any]]] = asyncio.get_running_loop().create_future()
        ready.add_done_callback(_retrieved)  # a failure after we stopped waiting is not "never retrieved"
        self._ready = ready
        self._stop = asyncio.Event()
        self._owner = asyncio.create_task(self._own(ready, self._stop), name=f"zagent-mcp:{self.config.name}")
        try:
            self.tools = await asyncio.wait_for(asyncio.shield(ready), self.config.connect_timeout)
        except asyncio.CancelledError:  # the caller gave up (a tool timeout): do not leave a half-open server
            await self._stop_owner(grace=0)
            self._fail("connecting was cancelled")
            raise
        except asyncio.TimeoutError:
            await self._stop_owner(grace=0)
            self._fail(f"did not answer within {self.config.connect_timeout:g} s (connect_timeout)")
            return
        except Exception as exc:
            await self._stop_owner(grace=0)
            leaf = _leaf(exc)
            if self._too_large:
                self._fail(self._too_large)
            elif isinstance(leaf, NotAnMcpServer):
                self._fail(str(leaf))
            elif type(leaf).__name__ == "MCPError" and getattr(leaf, "code", None) == _CONNECTION_CLOSED:
                self._fail("the server closed the connection while starting (did it exit, or is it not an MCP server?)")
            elif self._http_refusal and _http_fallback(leaf):
                self._fail(f"could not start: {self._http_refusal}")
            else:
                self._fail(f"could not start: {_describe(exc)}")
            return
        self.state = "ready"

    async def _own(self, ready: asyncio.Future[list[dict[str, Any]]], stop: asyncio.Event) -> None:
        """The owner task: enter transport and session, publish the tools, wait for ``stop``, exit."""
        ClientSession = sdk("mcp").ClientSession

        session = None
        try:
            async with AsyncExitStack() as stack:
                streams = await self._open_transport(stack)
                session = unvalidated(await stack.enter_async_context(
                    ClientSession(streams[0], streams[1], message_handler=self._on_message)))
                init = await session.initialize()
                info = getattr(init, "server_info", None) or getattr(init, "serverInfo", None)
                self.server_info = self.config.scrub(_info_text(info))  # a server naming itself after its token
                tools = await _list_tools(session, self.config.name)
                self._relister.listed()
                self._session = session
                ready.set_result(tools)
                await stop.wait()
        except BaseException as exc:  # noqa: B036 - report everything, re-raise cancellation
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else ConnectionError("cancelled"))
            elif self._too_large:
                pass  # failed with the reason already
            elif self._session is session and self.state == "ready" and isinstance(exc, Exception):
                self.state, self.error = "disconnected", self.config.scrub(_describe(exc))  # the transport died
            if not isinstance(exc, Exception):
                raise
        finally:
            if self._session is session:
                self._session = None

    async def _on_message(self, message: Any) -> None:
        """Server notifications and transport faults the session surfaces: text that is not JSON-RPC fails a
        connect still waiting for ``initialize`` at once (``NotAnMcpServer``), and is logged later;
        ``notifications/tools/list_changed`` makes the tool list be read again (``refresh.Relister``)."""
        if isinstance(message, Exception):
            ready = self._ready
            text = self.config.scrub(_junk_excerpt(message))
            if ready is not None and not ready.done():
                ready.set_exception(NotAnMcpServer(
                    f"is not an MCP server (or writes to stdout): it wrote text that is not JSON-RPC: {text}"))
            else:
                log.warning("MCP server %r wrote something that is not JSON-RPC: %s", self.config.name, text)
            return
        if _method_of(message) == "notifications/tools/list_changed":
            self._relister.changed()

    async def refresh_tools(self) -> None:
        """Read the tool list again (``Relister`` calls this after ``list_changed``) and tell the runtime."""
        session = self._session
        if session is None or self.state != "ready":
            return
        try:
            self.tools = await _list_tools(session, self.config.name)
        except Exception as exc:
            log.warning("MCP server %r changed its tools but listing them failed: %s", self.config.name,
                        self.config.scrub(_describe(exc)))
            return
        if self.on_tools_changed is not None:
            self.on_tools_changed(self)

    async def _open_transport(self, stack: AsyncExitStack) -> Any:
        """Enter the transport on ``stack``; return its (read, write) streams."""
        cfg = self.config
        if cfg.transport == "stdio":
            env = {k: v.reveal() for k, v in cfg.env.items()} or None
            return await stack.enter_async_context(bounded_stdio(
                cfg.command or "", list(cfg.args), env, cfg.cwd, self._errlog(), cfg.max_message_bytes,
                self._over_limit))
        from zagent.providerkit.logmask import mask_http_logs

        mask_http_logs(self, "mcp.client.streamable_http")  # an app's DEBUG log: the URL, echoed headers
        streamable_http_client = sdk("mcp.client.streamable_http").streamable_http_client
        create_mcp_http_client = sdk("mcp.shared._httpx_utils").create_mcp_http_client

        headers = {k: v.reveal() for k, v in cfg.headers.items()}
        if not any(k.lower() == "accept-encoding" for k in headers):
            headers["Accept-Encoding"] = "identity"  # a compressed body's decoded size could not be bounded
        client = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        client.event_hooks["response"].append(self._note_response)
        return await stack.enter_async_context(streamable_http_client(
            cfg.url, http_client=client, max_sse_event_size=cfg.max_message_bytes + 2 * SSE_FRAMING))

    def masker(self) -> Callable[[str], str]:
        """What masks this server's secrets in the HTTP libraries' log records (``providerkit.logmask``)."""
        return self.config.scrub

    def _over_limit(self, reason: str = "") -> None:
        """A message over ``max_message_bytes`` (or a body that cannot be bounded): fail, stop the server."""
        if self._too_large:
            return
        self._too_large = reason or too_large(self.config.name, self.config.max_message_bytes)
        log.warning("MCP server %r cut off: %s", self.config.name, self._too_large)
        ready = self._ready
        if ready is not None and not ready.done():
            ready.set_exception(MessageTooLarge(self._too_large))
        elif self._stop is not None:
            self._fail(self._too_large)
            self._stop.set()  # the owner task leaves the session: the server is stopped

    async def _note_response(self, response: Any) -> None:
        """httpx response hook: bound the body as it is read; remember a refused request's status (the SDK
        reports it without)."""
        events = response.headers.get("content-type", "").lower().startswith("text/event-stream")
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        refuse = "" if encoding in ("", "identity") else (
            f"server {self.config.name!r} sent a compressed response (Content-Encoding: {encoding}) though "
            "none was asked; its size cannot be bounded")
        response.stream = bounded_stream_class()(response.stream, self.config.max_message_bytes
                                                 + (SSE_FRAMING if events else 0), events, refuse, self._over_limit)
        if response.status_code >= 400:
            self._http_refusal = http_refusal(self.config, response.status_code, response.reason_phrase,
                                              response.headers.get("www-authenticate", ""))

    def _errlog(self) -> Any:
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self.config.stderr == "inherit":
            return sys.stderr
        if self.config.stderr == "devnull":
            self._stderr = open(os.devnull, "w")
        elif sys.platform == "win32":  # pragma: no cover - the SDK's stdio client there wants a file
            self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        else:
            self._stderr = StderrTail()
        return self._stderr

    def stderr_tail(self, lines: int = 8) -> str:
        """The last lines a stdio server wrote to stderr (``stderr: capture`` only)."""
        f = self._stderr
        if f is None or self.config.stderr != "capture":
            return ""
        if isinstance(f, StderrTail):
            return "\n".join(f.text().strip().splitlines()[-lines:])
        if f.closed:
            return ""
        try:
            f.flush()
            f.seek(0)
            text = f.read()
            f.seek(0, os.SEEK_END)
        except (OSError, ValueError):
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def _fail(self, message: str) -> None:
        tail = self.stderr_tail()
        self.state = "failed"
        self.error = self.config.scrub(
            message + ("\n  server stderr:\n    " + tail.replace("\n", "\n    ") if tail else ""))

    async def _stop_owner(self, grace: float = 5.0) -> None:
        """Let the owner task leave its session cleanly (at most ``grace`` s), else cancel it."""
        owner, self._owner = self._owner, None
        if owner is None:
            return
        if self._stop is not None:
            self._stop.set()
        try:
            if grace <= 0 or owner.done():
                raise asyncio.TimeoutError
            await asyncio.wait_for(asyncio.shield(owner), grace)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            owner.cancel()
            await asyncio.gather(owner, return_exceptions=True)
        except Exception:
            pass

    # -- calling ----------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any], retry_safe: bool) -> dict[str, Any]:
        """Call ``tool``; return the result's wire form. Raises ``McpToolError`` for server errors."""
        if self.state == "closed":
            raise McpToolError(f"MCP server {self.config.name!r} is closed")
        session = await self._live_session()
        try:
            return await _call(session, tool, arguments)
        except Exception as exc:
            if self._too_large:
                raise McpToolError(self._too_large) from None
            expired = _session_expired(exc)
            if not expired and not _connection_lost(exc):
                raise self._error(exc) from None
            lost = exc
        self.state = "disconnected"
        session = await self._live_session(after=session)
        if not retry_safe and not expired:
            raise McpToolError(self.config.scrub(
                f"the MCP server {self.config.name!r} lost the connection during this call "
                f"({_describe(lost)}); it was restarted, but the call may or may not have run. "
                "Call the tool again if it is still needed"))
        try:
            return await _call(session, tool, arguments)
        except Exception as exc:
            if _connection_lost(exc):
                self.state = "disconnected"
            raise self._error(exc) from None

    def _error(self, exc: BaseException) -> McpToolError:
        """What the model is told about a failed call: the server's error, its HTTP status if any, no secrets."""
        leaf = _leaf(exc)
        if self._too_large:
            error = McpToolError(self._too_large)
        elif self._http_refusal and _http_fallback(leaf):
            error = McpToolError(f"MCP server {self.config.name!r} refused the call: {self._http_refusal}")
        else:
            error = _server_error(self.config.name, exc)
        return McpToolError(self.config.scrub(str(error)))

    async def _live_session(self, after: Any = None) -> Any:
        """The current session, reconnecting (once) if it is dead or is the one that just failed."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            session = self._session
            if session is None or session is after or _known_dead(session) or self.state != "ready":
                await self._connect()
                session = self._session
            if self.state != "ready" or session is None:
                raise McpToolError(f"MCP server {self.config.name!r} is not available: {self.error}")
            return session

    async def close(self) -> None:
        """Stop the server (or end the HTTP session); idempotent."""
        self.state = "closed"
        self._relister.cancel()
        await self._stop_owner()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def __repr__(self) -> str:
        return f"<ServerConnection {self.config.name!r} {self.state} tools={len(self.tools)}>"


async def _list_tools(session: Any, server: str = "?") -> list[dict[str, Any]]:
    """The server's tools, at most ``MAX_TOOLS`` (a server listing more is told off in the log)."""
    PaginatedRequestParams = sdk("mcp.types").PaginatedRequestParams

    tools: list[dict[str, Any]] = []
    cursor = None
    seen: set[int] = set()  # hashes: a cursor may be megabytes long
    for _ in range(_MAX_PAGES):
        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(t.model_dump(by_alias=True, mode="json", exclude_none=True)
                     for t in page.tools[:MAX_TOOLS + 1 - len(tools)])
        cursor = getattr(page, "next_cursor", None)
        if not cursor or len(tools) > MAX_TOOLS:
            break
        if hash(cursor) in seen:  # a cycle: the pages after it were read already
            log.warning("MCP server %r gave a tool-list cursor it had given before; its list is read up to there "
                        "(the server's pagination goes round in a cycle)", server)
            break
        seen.add(hash(cursor))
    else:
        if cursor and len(tools) <= MAX_TOOLS:
            log.warning("MCP server %r: its tool list did not end after %d pages; the %d tools of those pages are "
                        "used (check the server's pagination)", server, _MAX_PAGES, len(tools))
    if len(tools) > MAX_TOOLS:
        log.warning("MCP server %r lists more than %d tools; only the first %d are used (each tool is offered to "
                    "models: split the server, or list the tools you need in its 'tools' entry)",
                    server, MAX_TOOLS, MAX_TOOLS)
        del tools[MAX_TOOLS:]
    return tools


def _info_text(info: Any) -> str:
    """A server's ``name version`` as one line of text: control characters escaped, at most ``MAX_SERVER_INFO``."""
    if not info:
        return ""
    from zagent.plugins.cliterminal import printable

    text = printable(f"{getattr(info, 'name', '')} {getattr(info, 'version', '')}".strip(), layout=False)
    return text if len(text) <= MAX_SERVER_INFO else text[:MAX_SERVER_INFO - 3] + "..."


async def _call(session: "ClientSession", tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    refuse_non_finite(getattr(result, "structured_content", None))
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)
