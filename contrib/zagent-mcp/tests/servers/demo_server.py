"""A small MCP server for the tests, written with the SDK's MCPServer (FastMCP before mcp 2).

Run it as ``python demo_server.py`` (stdio) or ``python demo_server.py http PORT``
(streamable HTTP on 127.0.0.1:PORT, path ``/mcp``). With
``python demo_server.py http PORT TOKEN`` the HTTP server requires
``Authorization: Bearer TOKEN`` (the SDK's own bearer-token auth): another
token is refused with 401, and the token ``no-scope`` with 403 (it lacks the
``demo`` scope). Tools:

* ``echo(text)``: the text back, as text content;
* ``add(a, b)``: a structured result ``{"sum": a + b}``;
* ``fail(message)``: raises the SDK's ``ToolError``, so the server answers with ``isError``;
* ``pixel()``: a 1x1 PNG image;
* ``pid()``: the server process id (to see a restart; read-only, so safe to retry);
* ``crash()``: exits the server process in the middle of the call;
* ``slow(seconds)``: sleeps, to exercise timeouts;
* ``header(name)``: the value of an HTTP request header (HTTP only);
* ``readme()``: a text resource embedded in the result;
* ``grow()``: adds the tool ``shout(text)``, removes ``pixel`` and sends
  ``notifications/tools/list_changed``;
* ``configure(name, level, note)``: its arguments back; its schema forbids
  unknown arguments (``additionalProperties: false``, as zod-based servers
  declare), and ``note`` is nullable (``anyOf`` string/null).
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys

from pydantic import BaseModel

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import EmbeddedResource, TextResourceContents, ToolAnnotations

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)



class DemoTokens:
    """Accepts the token given on the command line (scope ``demo``) and ``no-scope`` (no scopes)."""

    def __init__(self, token: str):
        self.token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        if token == self.token:
            return AccessToken(token=token, client_id="demo", scopes=["demo"])
        if token == "no-scope":
            return AccessToken(token=token, client_id="demo", scopes=[])
        return None


def _auth_options(argv: list[str]) -> dict:
    if len(argv) > 3 and argv[1] == "http":
        url = f"http://127.0.0.1:{argv[2]}"
        return {"token_verifier": DemoTokens(argv[3]),
                "auth": AuthSettings(issuer_url=url, resource_server_url=f"{url}/mcp", required_scopes=["demo"])}
    return {}


server = MCPServer("demo", **_auth_options(sys.argv))


class Sum(BaseModel):
    sum: int


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> Sum:
    """Add two integers; the result is structured."""
    return Sum(sum=a + b)


@server.tool()
def fail(message: str) -> str:
    """Always fail with the given message."""
    raise ToolError(message)


@server.tool()
def pixel() -> Image:
    """A 1x1 PNG image."""
    return Image(data=PNG, format="png")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def pid() -> int:
    """The process id of this server."""
    return os.getpid()


@server.tool()
def crash() -> str:
    """Exit the server process before answering."""
    os._exit(3)


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep for the given number of seconds."""
    await asyncio.sleep(seconds)
    return "done"


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of an HTTP request header, or '' when absent."""
    request = getattr(ctx.request_context, "request", None)
    return request.headers.get(name, "") if request is not None else ""


@server.tool()
def configure(name: str, level: int = 1, note: str | None = None) -> dict:
    """Return the arguments as received."""
    return {"name": name, "level": level, "note": note}


server._tool_manager.get_tool("configure").parameters["additionalProperties"] = False


@server.tool()
def readme() -> EmbeddedResource:
    """A text resource embedded in the result."""
    return EmbeddedResource(type="resource", resource=TextResourceContents(
        uri="file:///demo/README.txt", mimeType="text/plain", text="Demo README: the answer is 42."))


def shout(text: str) -> str:
    """Upper-case the text (added at run time by grow)."""
    return text.upper()


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool shout, remove pixel, and tell the client the tool list changed."""
    server.add_tool(shout)
    server.remove_tool("pixel")
    await ctx.session.send_tool_list_changed()
    return "grown"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
