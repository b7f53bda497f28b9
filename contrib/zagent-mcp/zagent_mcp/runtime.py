"""``McpRuntime``: one kernel's MCP servers, on a private event loop in a daemon thread; called from any loop.

``start_background(publish)`` connects every server at once and returns, publishing a server's tools when it is
ready or changes them; ``wait(name)`` blocks until a tool name's server has connected (at most its
``connect_timeout``). Cancelling a call cancels it on the MCP loop.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from concurrent.futures import Future
from typing import Any, Awaitable, Callable, Optional

import attrs
import msgspec

from zagent import Tool
from zagent import ArgumentsError

from .config import McpSettings
from .connection import ServerConnection
from .results import McpToolError, convert
from .schema import check_arguments

log = logging.getLogger("zagent.mcp")
_NAME_BAD = re.compile(r"[^A-Za-z0-9_.\-]")
#: characters of a tool description kept, and bytes of an input schema accepted (both go to models every call)
MAX_DESCRIPTION = 8192
MAX_SCHEMA_BYTES = 256 * 1024
#: bytes of one server's tool descriptions and input schemas together offered (the tools after are skipped)
MAX_OFFERED_BYTES = 4 * 2**20
#: reasons for skipped tools kept in ``McpRuntime.skipped`` (and logged)
MAX_SKIPPED = 1000


class McpRuntime:
    """The MCP servers of one kernel and the loop they live on."""

    def __init__(self, settings: McpSettings):
        self.settings = settings
        self.connections = {name: ServerConnection(cfg) for name, cfg in settings.servers.items()}
        self.skipped: list[str] = []  # tools that could not be registered, and why (each message once)
        self._skips: set[str] = set()
        self._settled = {name: threading.Event() for name in self.connections}  # first connect attempt over
        self._publish: Optional[Any] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._thread: Optional[threading.Thread] = None
        self._closed = False

    # -- the loop ------------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            self._thread = threading.Thread(target=serve, name="zagent-mcp-loop", daemon=True)
            self._thread.start()
            ready.wait()
            self._loop = loop
        return self._loop

    def submit(self, coro: Awaitable[Any]) -> "Future[Any]":
        """Schedule ``coro`` on the MCP loop from any thread."""
        return asyncio.run_coroutine_threadsafe(coro, self._ensure_loop())  # type: ignore[arg-type]

    async def arun(self, coro: Awaitable[Any]) -> Any:
        """Await ``coro`` on the MCP loop from any other loop (cancellation is passed on)."""
        return await asyncio.wrap_future(self.submit(coro))

    # -- lifecycle -------------------------------------------------------------------

    def start_background(self, publish: Optional[Any] = None) -> None:
        """Begin connecting every server in parallel and return at once; never raises.

        ``publish(server_name, tools)`` is called (on the MCP loop's thread) with a
        server's ``Tool``s when it becomes ready, and again whenever it changes its
        tool list. Configuration problems and invalid entries are logged here (they
        were skipped).
        """
        self._publish = publish
        for problem in self.settings.problems:
            log.warning("%s", problem)
        for bad in self.settings.invalid.values():
            log.warning("%s. Server %r is skipped; the other servers are used", bad.error, bad.name)
        for conn in self.connections.values():
            conn.on_tools_changed = self._tools_changed
        if self.connections:
            self.submit(self._connect_all())

    def start(self, publish: Optional[Any] = None) -> None:
        """``start_background``, then wait until every server has finished connecting (bounded)."""
        self.start_background(publish)
        self.wait(None)

    def wait(self, name: Optional[str] = None) -> None:
        """Block until the server tool ``name`` belongs to (``None``: every server) finished its first
        connect attempt, at most its ``connect_timeout`` (+5 s); returns at once for other names."""
        if threading.current_thread() is self._thread:  # on the MCP loop itself: never block it
            return
        for server, done in self._settled.items():
            if done.is_set():
                continue
            if name is not None and not name.startswith(server + self.settings.separator):
                continue
            bound = self.connections[server].config.connect_timeout + 5.0
            if not done.wait(bound):
                log.warning("MCP server %r did not finish connecting within %.0f s", server, bound)

    async def _connect_all(self) -> None:
        await asyncio.gather(*(self._connect_one(name, c) for name, c in self.connections.items()))

    async def _connect_one(self, name: str, conn: ServerConnection) -> None:
        try:
            await conn.connect()
            if conn.state == "ready":
                log.info("MCP server %r ready: %d tool(s)", conn.config.name, len(conn.tools))
                self._tools_changed(conn)
            else:
                log.warning("MCP server %r (%s) is skipped: %s", conn.config.name, conn.config.target,
                            conn.error or conn.state)
        finally:
            self._settled[name].set()

    def _tools_changed(self, conn: ServerConnection) -> None:
        if self._publish is None or self._closed:
            return
        try:
            self._publish(conn.config.name, self.make_tools(conn))
        except Exception:  # a clash or a plugin bug must not kill the MCP loop
            log.exception("registering the tools of MCP server %r failed", conn.config.name)

    async def aclose(self) -> None:
        """Close every server, then stop the loop and its thread (from any loop)."""
        if self._closed:
            return
        self._closed = True
        if self._loop is None:
            return
        try:
            await self.arun(self._close_all())
        finally:
            self._stop_loop()
            thread = self._thread
            if thread is not None:
                await asyncio.get_running_loop().run_in_executor(None, thread.join, 5.0)

    def close(self, timeout: float = 10.0) -> None:
        """Sync twin of ``aclose`` for threads without a running loop (atexit, finalizers)."""
        if self._closed:
            return
        self._closed = True
        if self._loop is None:
            return
        if threading.current_thread() is self._thread:  # e.g. a finalizer run by the loop's own thread
            self._stop_loop()
            return
        try:
            self.submit(self._close_all()).result(timeout=timeout)
        except Exception as exc:
            log.warning("closing MCP servers did not finish cleanly: %s", exc)
        finally:
            self._stop_loop()
            if self._thread is not None and self._thread is not threading.current_thread():
                self._thread.join(timeout)

    async def _close_all(self) -> None:
        await asyncio.gather(*(c.close() for c in self.connections.values()), return_exceptions=True)

    def _stop_loop(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)

    @property
    def closed(self) -> bool:
        return self._closed

    # -- tools -------------------------------------------------------------------------

    def make_tools(self, only: Optional[ServerConnection] = None) -> list[Any]:
        """A zagent ``Tool`` for each tool of each ready server (or of ``only``); bad or clashing names are skipped."""
        tools: list[Any] = []
        seen: set[str] = set()
        for conn in self.connections.values():
            if only is not None and conn is not only:
                continue
            if conn.state != "ready":
                continue
            allowed = conn.config.tools
            offered = 0  # bytes of this server's descriptions and schemas so far (all are sent with every call)
            for spec in conn.tools:
                if allowed is not None and spec.get("name") not in allowed:
                    continue
                tool = self._make_tool(conn, spec, seen)
                if tool is None:
                    continue
                offered += len(tool.description) + len(msgspec.json.encode(tool.parameters))
                if offered > MAX_OFFERED_BYTES:
                    seen.discard(tool.name)
                    self.skip(f"{conn.config.name}: tool {tool.name!r} and the tools listed after it are skipped: "
                              f"the server's descriptions and input schemas come to more than {MAX_OFFERED_BYTES} "
                              "bytes (sent to the model with every call); list the tools you need in its 'tools' "
                              "entry")
                    break
                tools.append(tool)
        return tools

    def _make_tool(self, conn: ServerConnection, spec: dict[str, Any], seen: set[str]) -> Any:
        server, original = conn.config.name, str(spec.get("name", ""))
        name = tool_name(server, original, self.settings.separator)
        if name in seen:
            self.skip(f"{server}: tool {original!r} is skipped: its name {name!r} is already taken")
            return None
        sep = self.settings.separator  # with "_" or "-", server "web"'s "search_x" would be server "web_search"'s "x"
        owner = max((s for s in self.connections if name.startswith(s + sep)), key=len, default=server)
        if owner != server:
            self.skip(f"{server}: tool {original!r} is skipped: its name {name!r} is in the namespace of server "
                      f"{owner!r}; rename the tool or the server, or use another name_separator")
            return None
        annotations = spec.get("annotations") or {}
        retry_safe = bool(annotations.get("readOnlyHint") or annotations.get("idempotentHint"))
        runtime = self

        async def call_mcp_tool(**arguments: Any) -> Any:
            if runtime.closed:
                raise McpToolError(f"MCP server {server!r} is closed (its kernel was closed)")
            result = await runtime.arun(conn.call(original, arguments, retry_safe))
            try:
                return convert(result)
            except McpToolError as exc:  # an isError result: the server's words, scrubbed as its other errors
                raise McpToolError(conn.config.scrub(str(exc))) from None

        size = len(msgspec.json.encode(spec.get("inputSchema") or {}))
        if size > MAX_SCHEMA_BYTES:  # sent to the model with every call that offers it
            self.skip(f"{server}: tool {original!r} is skipped: its input schema is {size} bytes, more than "
                      f"{MAX_SCHEMA_BYTES}")
            return None
        description, parameters = _description(spec), _parameters(spec)
        size = len(msgspec.json.encode(parameters))
        if size > MAX_SCHEMA_BYTES:  # its help texts' hidden characters, shown escaped, made it larger
            self.skip(f"{server}: tool {original!r} is skipped: its input schema is {size} bytes with its "
                      f"descriptions' hidden characters shown escaped, more than {MAX_SCHEMA_BYTES}")
            return None
        shown = _scrubbed([description, parameters], conn.config.scrub)
        if shown != [description, parameters]:  # a server filling its help text or defaults from its env
            log.warning("MCP server %r: tool %r quotes the server's own secrets (env, headers) in its description "
                        "or input schema: they are offered as ***", server, original)
            description, parameters = shown
        try:
            tool = McpTool(name=name, description=description, handler=call_mcp_tool,
                        parameters=parameters, args_type=None, toolset=server,
                        timeout=conn.config.timeout, is_async=True,
                        available=lambda: not runtime.closed,
                        metadata={"mcp_server": server, "mcp_tool": original, "annotations": annotations})
        except Exception as exc:
            self.skip(f"{server}: tool {original!r} is skipped: {exc}")
            return None
        seen.add(name)
        return tool

    def skip(self, message: str) -> None:
        """Keep and log ``message`` once (a server re-listing its tools after ``list_changed`` repeats it), at most
        ``MAX_SKIPPED`` messages (one naming new tools at each listing never stops)."""
        if message in self._skips or len(self.skipped) > MAX_SKIPPED:
            return
        if len(self.skipped) == MAX_SKIPPED:
            message = f"more tools of MCP servers were skipped; only the first {MAX_SKIPPED} reasons are kept"
        self._skips.add(message)
        self.skipped.append(message)
        log.warning("%s", message)

    # -- reporting -----------------------------------------------------------------------

    def status(self, wait: bool = True) -> list[dict[str, Any]]:
        """Per server: name, transport, target, state, error, server info and tool names (zagent's).

        Waits (bounded) for servers still connecting unless ``wait=False``, which gives a snapshot
        (a server still connecting shows ``connecting`` or ``configured``).
        """
        if wait:
            self.wait(None)
        out = []
        for conn in self.connections.values():
            cfg = conn.config
            names = list(dict.fromkeys(  # each name once: a server listing a name twice gets one tool
                tool_name(cfg.name, t.get("name", ""), self.settings.separator) for t in conn.tools
                if cfg.tools is None or t.get("name") in cfg.tools))
            out.append({"name": cfg.name, "transport": cfg.transport, "target": cfg.target, "state": conn.state,
                        "error": conn.error, "server": conn.server_info, "tools": names})
        for bad in self.settings.invalid.values():
            out.append({"name": bad.name, "transport": bad.transport, "target": bad.target, "state": "invalid",
                        "error": bad.error, "server": "", "tools": []})
        for name in self.settings.disabled:
            out.append({"name": name, "transport": "-", "target": "", "state": "disabled", "error": None,
                        "server": "", "tools": []})
        return out

    def __repr__(self) -> str:
        states = ", ".join(f"{n}={c.state}" for n, c in self.connections.items())
        return f"<McpRuntime {states or 'no servers'}{' closed' if self._closed else ''}>"


@attrs.define(repr=False, eq=False)
class McpTool(Tool):
    """A zagent ``Tool`` for an MCP tool: arguments are checked against its ``inputSchema`` before the call.

    The check (``zagent_mcp.schema``) runs in ``validate``, the kernel's own
    argument-validation step, so a failure is the same ``error`` result, with
    the same kind of message, as bad arguments for any zagent tool, and the
    server is not called.
    """

    def validate(self, arguments: Any) -> dict[str, Any]:
        kwargs = super().validate(arguments)
        kwargs, problems = check_arguments(self.parameters, kwargs)
        if problems:
            raise ArgumentsError(
                f"invalid arguments for tool {self.name!r}: {'; '.join(problems)}. "
                f"Call it again with arguments matching this schema: {msgspec.json.encode(self.parameters).decode()}")
        return kwargs


def tool_name(server: str, tool: str, separator: str = ".") -> str:
    """``server.tool``, with characters zagent does not allow in tool names replaced by ``_``."""
    return _NAME_BAD.sub("_", f"{server}{separator}{tool}")[:128]


def _description(spec: dict[str, Any]) -> str:
    """The text models read about the tool: control and bidi characters shown escaped (they hide text from a
    person reviewing the tool list), at most ``MAX_DESCRIPTION`` characters (it is sent with every call)."""
    from zagent.plugins.cliterminal import printable

    text = printable(spec.get("description") or spec.get("title") or (spec.get("annotations") or {}).get("title")
                     or f"MCP tool {spec.get('name')}")
    if len(text) > MAX_DESCRIPTION:
        text = text[:MAX_DESCRIPTION] + f" [... {len(text) - MAX_DESCRIPTION} more characters cut]"
    return text


def _scrubbed(value: Any, scrub: Callable[[str], str]) -> Any:
    """``value`` (JSON data) with ``scrub`` applied to every string in it but mapping keys."""
    return _strings_changed(value, lambda _key, text: scrub(text))


def _parameters(spec: dict[str, Any]) -> dict[str, Any]:
    """The tool's input schema as zagent offers it to models (always an object with properties); each
    ``description`` and ``title`` in it escaped as the tool's own description is (hidden text is seen)."""
    schema: dict[str, Any] = _help_escaped(dict(spec.get("inputSchema") or {}))
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def _help_escaped(value: Any) -> Any:
    """``value`` (JSON data) with every string under a ``description`` or ``title`` key shown printable."""
    from zagent.plugins.cliterminal import printable

    return _strings_changed(value, lambda key, text: printable(text) if key in ("description", "title") else text)


def _strings_changed(value: Any, change: Callable[[Any, str], str]) -> Any:
    """A copy of ``value`` (JSON data) with each string ``text`` in it (not a mapping key) as ``change(key, text)``
    (``key``: its mapping key or list index), made without recursion: a schema may be nested as deep as the SDK's
    parser goes."""
    if isinstance(value, str):
        return change(None, value)

    def copy(item: Any) -> Any:
        return dict(item) if isinstance(item, dict) else list(item) if isinstance(item, list) else item

    top = copy(value)
    stack = [top] if isinstance(top, (dict, list)) else []
    while stack:
        node = stack.pop()
        for key in list(node.keys() if isinstance(node, dict) else range(len(node))):
            item = node[key]
            if isinstance(item, str):
                node[key] = change(key, item)
            elif isinstance(item, (dict, list)):
                node[key] = copy(item)
                stack.append(node[key])
    return top
