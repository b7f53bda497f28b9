"""How an MCP server's failures are told apart and described, for ``ServerConnection``.

Recognised: a lost connection, an expired HTTP session, a process that is not an MCP server (``NotAnMcpServer``)
and an HTTP refusal (``http_refusal``); ``_server_error`` makes any of them the ``McpToolError`` the model sees.
"""

from __future__ import annotations

import asyncio
import re
import sys
from typing import Any

from .config import ServerConfig
from .results import McpToolError

if sys.version_info < (3, 11):  # pragma: no cover - Python 3.10 (anyio depends on the backport there)
    from exceptiongroup import BaseExceptionGroup

_CONNECTION_CLOSED = -32000
_INVALID_REQUEST = -32600


class NotAnMcpServer(ConnectionError):
    """The process answered, but not in JSON-RPC: not an MCP server (or one that prints to stdout)."""


def _retrieved(future: "asyncio.Future[Any]") -> None:
    if not future.cancelled():
        future.exception()


def _junk_excerpt(exc: BaseException) -> str:
    """What the server wrote, from the parse error (pydantic quotes the input), at most 200 characters."""
    text = str(exc)
    m = re.search(r"input_value=(.{1,200}?)(?:, input_type=|\]$|$)", text, re.S)
    found = m.group(1) if m else text.splitlines()[0] if text else type(exc).__name__
    return found[:200]


def _method_of(message: Any) -> str:
    for obj in (message, getattr(message, "root", None)):
        method = getattr(obj, "method", None)
        if isinstance(method, str):
            return method
    return ""


def _known_dead(session: Any) -> bool:
    """Whether the session already saw its connection end (SDK internals; False when unknown)."""
    return getattr(getattr(session, "_dispatcher", None), "_closed", False) is True


def _connection_lost(exc: BaseException) -> bool:
    """A transport failure (process gone, socket closed), as opposed to an error the server answered."""
    exc = _leaf(exc)
    if getattr(exc, "code", None) == _CONNECTION_CLOSED and type(exc).__name__ == "MCPError":
        return True
    import anyio

    if isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError, EOFError)):
        return True
    package = type(exc).__module__.split(".")[0]
    return package.startswith(("httpx", "httpcore")) and any(c.__name__ == "TransportError" for c in type(exc).__mro__)


def _session_expired(exc: BaseException) -> bool:
    """An HTTP server that no longer knows our session (it restarted): the request was refused, not run."""
    exc = _leaf(exc)
    text = str(exc).lower()
    return (type(exc).__name__ == "MCPError" and getattr(exc, "code", None) == _INVALID_REQUEST
            and "session" in text and any(w in text for w in ("not found", "terminated", "expired")))


def http_refusal(cfg: ServerConfig, status: int, reason: str, challenge: str = "") -> str:
    """An HTTP refusal as a user reads it: status, the server's auth error if any, and for 401/403 a hint. The
    server's words (reason phrase, challenge) are shown with control characters escaped."""
    from zagent.plugins.cliterminal import printable

    text = printable(f"HTTP {status} {reason}".strip(), layout=False)
    detail = re.findall(r'error(?:_description)?="([^"]*)"', challenge)
    if detail:
        text += f" ({printable(': '.join(detail[:2]), layout=False)})"
    if status not in (401, 403):
        return text
    names = ", ".join(sorted(cfg.headers))
    sent = f"the headers sent were: {names} (values not shown)" if names else "no 'headers' are configured"
    if status == 401:
        what, check = "the credentials were refused or missing", "that the token is valid and not expired"
    else:
        what, check = "the credentials do not allow this", "that the token has the access (scopes) the server needs"
    return (f"{text}: {what}. Check the 'headers' (e.g. Authorization: Bearer ${{TOKEN}}) of MCP server "
            f"{cfg.name!r} in the MCP configuration and {check}; {sent}")


def _http_fallback(exc: BaseException) -> bool:
    """The SDK's stand-in error for an HTTP error status it did not explain."""
    return type(exc).__name__ == "MCPError" and "returned an error response" in str(exc)


def _server_error(server: str, exc: BaseException) -> McpToolError:
    leaf = _leaf(exc)
    if isinstance(leaf, McpToolError):
        return leaf
    code = getattr(leaf, "code", None)
    where = f"MCP server {server!r}"
    if type(leaf).__name__ == "MCPError":
        return McpToolError(f"{where} answered with error {code}: {leaf}")
    return McpToolError(f"{where} failed: {_describe(leaf)}")


def _leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside (anyio task groups wrap errors in ExceptionGroups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    leaf = _leaf(exc)
    text = str(leaf).strip()
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__
