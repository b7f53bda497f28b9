"""``McpServe``: a chosen set of a kernel's tools, and agents (their ``as_tool()``), offered to MCP clients.

Each ``tools/call`` is one run through ``Kernel.arun_tool`` (validation, timeout, rails, tightened by ``rails``),
scoped to the served set; a failure is an ``isError`` result; at most ``max_calls`` run at once. ``run_stdio()``,
``http_app()`` (``/mcp``; Host/Origin checked on loopback) and ``run_http(host, port, token)`` serve it (a host that
is not loopback needs a bearer token).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

from .sdk import sdk

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

__all__ = ["MAX_CALLS", "McpServe"]

#: the default number of calls a server runs at once (each may be an agent run on the app's key)
MAX_CALLS = 8
#: calls that may wait for a place, per place; past that a call is refused as busy
_WAITING_PER_CALL = 4


class McpServe:
    """The MCP server for ``kernel`` (see the module docstring)."""

    def __init__(self, kernel: "Kernel", *, tools: Sequence[str] = (), agents: Sequence[Any] = (),
                 rails: Optional[dict[str, Any]] = None, name: str = "zagent", max_calls: int = MAX_CALLS) -> None:
        from zagent.agentkit.toolrefs import resolve_tool_refs
        from zagent.errors import ConfigError

        if isinstance(max_calls, bool) or not isinstance(max_calls, int) or not 1 <= max_calls <= 1024:
            raise ConfigError(f"max_calls (calls run at once) must be a whole number from 1 to 1024, got {max_calls!r}")
        self.max_calls, self._waiting = max_calls, 0
        self._slots: Any = None  # an anyio.Semaphore of max_calls, made in the server's loop on the first call
        self.kernel, self.name = kernel, name
        names = resolve_tool_refs(kernel, list(tools), key="served tool")
        for agent in agents:
            as_tool = getattr(agent, "as_tool", None)
            if as_tool is None:
                raise ConfigError(f"agent {getattr(agent, 'name', agent)!r} cannot be served: it has no as_tool()")
            tool = as_tool()
            if tool.name not in names:
                names.append(tool.name)
        if not names:
            raise ConfigError("nothing to serve: name tools (--tool NAME, toolset:NAME, module:function) or "
                              "agent files (--agent FILE)")
        self.tool_names = names
        self.offered = frozenset(names)
        self.rails = dict(rails or {})
        self.server = self._server()

    def _server(self) -> Any:
        Server = sdk("mcp.server.lowlevel").Server

        return Server(self.name, on_list_tools=self._list, on_call_tool=self._call)

    async def _list(self, ctx: Any, params: Any) -> Any:
        t = sdk("mcp.types")

        tools = []
        for name in self.tool_names:
            tool = self.kernel.find("tools", name)
            if tool is not None:
                schema = dict(tool.parameters or {"type": "object", "properties": {}})
                schema.setdefault("type", "object")
                tools.append(t.Tool(name=tool.name, description=tool.description or None, input_schema=schema))
        return t.ListToolsResult(tools=tools)

    async def _call(self, ctx: Any, params: Any) -> Any:
        import anyio

        if self._slots is None:
            self._slots = anyio.Semaphore(self.max_calls)
        if self._slots.value == 0 and self._waiting >= self.max_calls * _WAITING_PER_CALL:
            text = (f"this zagent MCP server is busy: {self.max_calls} calls are running and {self._waiting} waiting "
                    f"(max_calls={self.max_calls}); retry later")
            return sdk("mcp.types").CallToolResult(content=[sdk("mcp.types").TextContent(type="text", text=text)],
                                                   is_error=True)
        self._waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self._waiting -= 1
        try:
            return await self._run_call(params)
        finally:
            self._slots.release()

    async def _run_call(self, params: Any) -> Any:
        t = sdk("mcp.types")
        from zagent.errors import RunStopped
        from zagent.types import ToolCall

        config = {"rails": self.rails} if self.rails else {}
        run = self.kernel.context(agent=self.name, agent_config=config)
        run.offered_tools = self.offered  # the kernel blocks any tool outside the served set
        call = ToolCall(id=f"mcp-{run.run_id}", name=str(params.name), arguments=dict(params.arguments or {}))
        try:
            result = await self.kernel.arun_tool(call, run)
        except RunStopped as exc:  # a usage limit or guardrail ended the call's run: a failed call, said (masked)
            from zagent.agentkit.secrets import error_excerpt

            return t.CallToolResult(content=[t.TextContent(type="text", text=error_excerpt(exc, 2000))], is_error=True)
        text = result.content if result.content is not None else (result.error or "")
        return t.CallToolResult(content=[t.TextContent(type="text", text=str(text))],
                                is_error=result.state != "success")

    async def run_stdio(self) -> None:
        """Serve one MCP client over this process's stdin and stdout until it closes them (``servestdio``: lines
        of at most 4 MiB, as over HTTP; past ``max_calls`` calls running and waiting, nothing more is read until
        answers are written)."""
        from .servestdio import MAX_OPEN, serve_stdio

        await serve_stdio(self.server, max(MAX_OPEN, self.max_calls * (1 + _WAITING_PER_CALL) + 24))

    def http_app(self, host: str = "127.0.0.1", token: Optional[str] = None) -> Any:
        """The streamable-HTTP ASGI app (path ``/mcp``) for ``host``; with ``token``, every request must carry it as
        ``Authorization: Bearer <token>`` (``serveauth.BearerGate``: 401 otherwise). A host that is not loopback
        needs a token (``ConfigError``); a loopback one gets the Host and Origin checks."""
        from .serveauth import is_loopback, loopback_security, require_token

        require_token(host, token)  # an app building the app for 0.0.0.0 itself is refused as run_http is
        security = loopback_security(host) if is_loopback(host) else None  # no page rebinding its name to it
        app = self.server.streamable_http_app(host=host, transport_security=security)
        if token is None:
            return app
        from .serveauth import BearerGate

        return BearerGate(app, token)

    def run_http(self, host: str = "127.0.0.1", port: int = 8000, token: Optional[str] = None) -> None:
        """Serve streamable HTTP on ``host:port`` until interrupted. A host that is not loopback needs a ``token``
        (a ``ConfigError`` before anything is bound otherwise: anyone reaching it could call the tools)."""
        from .serveauth import require_token

        require_token(host, token)
        app = self.http_app(host, token)
        import uvicorn

        uvicorn.run(app, host=host, port=port, log_level="warning")
