"""Bearer tokens for ``zagent mcp serve --transport http``: a host that is not loopback needs one
(``ZAGENT_MCP_TOKEN`` or ``--token-file``), refused before binding otherwise; a loopback host needs one only when
given. ``BearerGate`` checks every request in constant time (401 with the reason otherwise) and keeps only the
token's digest, so it is never printed.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
import shlex
import stat
from typing import Any, Optional

from zagent import ConfigError

__all__ = ["TOKEN_ENV", "MIN_TOKEN", "BearerGate", "is_loopback", "loopback_security", "require_token", "token_from"]

#: the environment variable ``zagent mcp serve`` reads the token from (``--token-file`` names a file instead)
TOKEN_ENV = "ZAGENT_MCP_TOKEN"
#: the shortest token accepted (a short one can be guessed)
MIN_TOKEN = 16
#: the mode bits that refuse a token file on POSIX: read or write for its group or for other users
_SHARED = stat.S_IRGRP | stat.S_IWGRP | stat.S_IROTH | stat.S_IWOTH
_HOW = (f"set a bearer token of at least {MIN_TOKEN} characters in {TOKEN_ENV} (for example "
        "`export ZAGENT_MCP_TOKEN=$(python -c 'import secrets; print(secrets.token_urlsafe(32))')`) or pass "
        "--token-file FILE, and have clients send `Authorization: Bearer <token>`")


def is_loopback(host: str) -> bool:
    """Whether ``host`` only reaches this machine (``localhost``, ``127.0.0.0/8``, ``::1``)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:  # a host name (or "" meaning every interface): it may resolve anywhere
        return False


def loopback_security(host: str) -> Any:
    """The SDK's Host and Origin checks (against DNS rebinding) for a loopback ``host``, allowing that host as
    written and the usual loopback names; the SDK turns them on by itself only for ``127.0.0.1``, ``localhost``
    and ``::1`` written so, leaving ``127.0.0.2`` or ``LOCALHOST`` open to any web page."""
    from .sdk import sdk

    name = host.strip().strip("[]").lower()
    shown = f"[{name}]" if ":" in name else name
    hosts = sorted({shown, "127.0.0.1", "localhost", "[::1]"})
    return sdk("mcp.server.transport_security").TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=[*hosts, *(f"{h}:*" for h in hosts)],
        allowed_origins=[o for h in hosts for o in (f"http://{h}", f"http://{h}:*")])


def check_token(token: str, source: str) -> str:
    """``token`` when it can be one: printable ASCII without spaces, at least ``MIN_TOKEN`` long."""
    if len(token) < MIN_TOKEN or not all("!" <= c <= "~" for c in token):
        raise ConfigError(f"the bearer token from {source} must be at least {MIN_TOKEN} printable ASCII characters "
                          f"without spaces (it was {len(token)} characters long); {_HOW}")
    return token


def token_from(token_file: Optional[str] = None, environ: Optional[dict[str, str]] = None) -> Optional[str]:
    """The token of ``--token-file`` (its first line), else of ``ZAGENT_MCP_TOKEN``; ``None`` when neither is set."""
    if token_file:
        try:
            with open(token_file, encoding="utf-8") as f:
                _check_owner(token_file, os.fstat(f.fileno()))
                first = f.readline(4096).strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"--token-file {token_file!r} cannot be read ({type(exc).__name__}); {_HOW}") from None
        return check_token(first, f"--token-file {token_file!r}")
    value = (os.environ if environ is None else environ).get(TOKEN_ENV, "").strip()
    return check_token(value, TOKEN_ENV) if value else None


def _check_owner(token_file: str, st: os.stat_result) -> None:
    """Refuse a token file another user can write (every user, or its owner: they could set a token they know)
    or, on POSIX, one its group or other users can read or write (they could copy the token), as ssh does keys."""
    me = os.getuid() if hasattr(os, "getuid") else None
    if st.st_mode & stat.S_IWOTH or (me is not None and st.st_uid not in (me, 0)):
        who = (f"every user can write it (mode {stat.S_IMODE(st.st_mode):04o})" if st.st_mode & stat.S_IWOTH
               else f"it is owned by another user (uid {st.st_uid})")
        raise ConfigError(f"--token-file {token_file!r} is refused: {who}, so they could put in a token they know "
                          "and call the served tools; make it yours alone (owned by you, then "
                          f"chmod 600 {shlex.quote(token_file)}); {_HOW}")
    if os.name == "posix" and st.st_mode & _SHARED:
        raise ConfigError(f"--token-file {token_file!r} is refused: its mode is {stat.S_IMODE(st.st_mode):04o}, so "
                          "users of its group or other users can read (or change) the bearer token and call the "
                          f"served tools; make it readable by you alone: chmod 600 {shlex.quote(token_file)}")


def require_token(host: str, token: Optional[str]) -> None:
    """Refuse to serve a host other machines can reach without a token (before anything is bound)."""
    if token is None and not is_loopback(host):
        raise ConfigError(f"zagent mcp serve: --host {host!r} is not a loopback address, so anyone who can reach "
                          f"it could call the served tools; {_HOW}. To serve only this machine, use --host 127.0.0.1")


def _digest(value: bytes) -> bytes:
    return hashlib.sha256(value).digest()


class BearerGate:
    """An ASGI app letting through to ``app`` only requests with ``Authorization: Bearer <token>``."""

    def __init__(self, app: Any, token: str):
        self.app = app
        self._digest = _digest(check_token(token, "the server's settings").encode())  # the token itself is not kept

    def refusal(self, scope: dict[str, Any]) -> Optional[str]:
        """Why the request of ``scope`` is refused (``None``: it carries the token)."""
        values = [v for k, v in scope.get("headers") or () if k.lower() == b"authorization"]
        if not values:
            return ("this zagent MCP server needs a bearer token: send `Authorization: Bearer <token>` with the "
                    f"token the server was started with ({TOKEN_ENV} or --token-file)")
        scheme, _, sent = values[0].partition(b" ")
        ok = len(values) == 1 and scheme.lower() == b"bearer"
        if not hmac.compare_digest(_digest(sent.strip()), self._digest) or not ok:  # compared whatever the scheme
            return ("the bearer token sent is not this zagent MCP server's; send `Authorization: Bearer <token>` "
                    f"with the token the server was started with ({TOKEN_ENV} or --token-file)")
        return None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "lifespan":
            await self.app(scope, receive, send)
            return
        reason = self.refusal(scope)
        if reason is None:
            await self.app(scope, receive, send)
            return
        if scope.get("type") != "http":  # a websocket: closed before it is accepted
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps({"error": "unauthorized", "error_description": reason}).encode()
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b'Bearer realm="zagent-mcp"')]})
        await send({"type": "http.response.body", "body": body})
