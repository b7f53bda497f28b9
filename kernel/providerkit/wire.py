"""Reading provider replies: SSE and NDJSON streams, ``Retry-After``, server messages, and the
helpers network providers share (``network_options``, ``stream_interrupted``, ``malformed``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Optional

import msgspec

from ..errors import (
    ProtocolError,
    ProviderError,
)
from .._trust.secrets import Secret
from .codec import crowded, crowded_error

if TYPE_CHECKING:  # pragma: no cover
    from .client import HttpClient


def retry_after(headers: Any) -> Optional[float]:
    """Seconds the server asks to wait: ``retry-after-ms``, ``Retry-After`` seconds or HTTP date."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


#: what a server's text may not bring into an error message (a log line, a terminal): C0 and C1 controls (terminal
#: escapes such as ESC and CSI) and bidi controls, shown escaped; tabs stay
_CONTROLS = {c: f"\\x{c:02x}" for c in [*range(0x20), *range(0x7F, 0xA0)] if c != 0x09}
_CONTROLS.update({c: f"\\u{c:04x}" for c in [0x061C, 0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F),
                                             *range(0x2066, 0x206A)]})


def shown(text: str) -> str:
    """Server text as it may go into an error message: control and bidi characters escaped (``\\x1b``)."""
    return text.translate(_CONTROLS)


def server_message(body: bytes, limit: int = 500, redact: Optional[Callable[[str], str]] = None) -> str:
    """The human part of an error body: ``error.message``, ``error``, ``message`` or ``detail``; else the text.
    ``redact`` (``HttpClient.redact``) applies before the cut to ``limit``, so no part of a secret is left."""
    try:
        data = msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError):  # an error body nested past msgspec's limit too
        data = None
    for candidate in _message_candidates(data):
        if isinstance(candidate, str) and candidate:
            return (redact(candidate) if redact else candidate)[:limit]
    text = body.decode("utf-8", "replace").strip()
    return ((redact(text) if redact else text)[:limit] or "(empty body)")


def _message_candidates(data: Any) -> list[Any]:
    if not isinstance(data, dict):
        return []
    err = data.get("error")
    out = [err.get("message") if isinstance(err, dict) else err, data.get("message"), data.get("detail")]
    return out


async def iter_sse(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, str]]:
    """Parse Server-Sent Events from a line iterator: yields ``(event, data)``; ``event`` is "" when unnamed.

    A last event not followed by a blank line is still dispatched when the body
    ends cleanly (a cut connection raises from ``lines`` before that). An event of many ``data:`` lines is
    gathered in one buffer from the ``_MANY``-th on (a list of short strings costs some 50 bytes each).
    """
    import io

    event = ""
    data: list[str] = []
    many: Optional[io.StringIO] = None
    first = True
    async for line in lines:
        if first:  # one leading byte order mark is ignored, as the SSE standard says (read as a field name, it
            first = False  # dropped the first event unsaid)
            if line[:1] == "\ufeff":
                line = line[1:]
        if not line:
            if many is not None:
                yield event, _uncrowded(many.getvalue())
            elif data:
                yield event, _uncrowded("\n".join(data))
            event, data, many = "", [], None
            continue
        if line.startswith("data:"):
            value = line[6:] if line[5:6] == " " else line[5:]
            if many is not None:
                many.write("\n")
                many.write(value)
                continue
            data.append(value)
            if len(data) >= _MANY:
                many = io.StringIO()
                many.write("\n".join(data))
                data = []
        elif line.startswith("event:"):
            event = line[6:].strip()
    if many is not None or data:  # the body ended cleanly without the closing blank line: dispatched, as the
        yield event, _uncrowded(many.getvalue() if many is not None else "\n".join(data))  # official SDKs do


#: ``data:`` lines of one event kept as a list before they go to one buffer
_MANY = 64


async def iter_ndjson(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """The non-empty lines of a newline-delimited JSON stream."""
    async for line in lines:
        if line.strip():
            yield _uncrowded(line)


def _uncrowded(data: str) -> str:
    """``data`` (one event's JSON), unless it holds more objects and arrays than zagent decodes (``ProtocolError``)."""
    if n := crowded(data):
        raise crowded_error(n, "the server ")
    return data


# -- a base for network providers ------------------------------------------------------


def _llm_base() -> Any:
    from .._model.llm import LLM

    return LLM


def network_options(
    provider: str, options: dict[str, Any], *, key_env: str, base_env: str, default_base_url: str,
    auth_header: str = "Authorization", auth_prefix: str = "Bearer ",
) -> tuple["HttpClient", dict[str, Any]]:
    """Split a network provider's options: an ``HttpClient`` (key, base URL, HTTP settings) and the rest.

    ``api_key`` comes from the options or ``key_env``; ``base_url`` from the
    options, ``base_env`` or ``default_base_url``. What is left (request
    fields such as ``temperature``) is returned for the provider to send.
    """
    import os

    from .credentials import check_destination, check_http_settings, check_one_authorization, check_options
    from .client import HttpClient
    from .masking import option_secrets

    options = dict(options)
    check_options(options)
    check_http_settings(provider, options)
    own_key = options.pop("api_key", None)
    key = Secret.of(own_key or os.environ.get(key_env) or None)
    configured = os.environ.get(base_env) or default_base_url
    base_url = options.pop("base_url", None) or configured
    # A key from the environment goes only where the user configured (not to a spec's base_url).
    check_destination(provider, base_url, configured, key_env=key_env, env_key=key is not None, own_key=bool(own_key))
    check_one_authorization(provider, base_url, own_key=bool(own_key), headers=options.get("headers"),
                            auth_header=auth_header)
    secrets = tuple(option_secrets(options))  # ``extra_body={"provider": {"api_key": ...}}``, echoed in an error
    http = HttpClient.build(provider, base_url, options, api_key=key, key_env=key_env,
                            auth_header=auth_header, auth_prefix=auth_prefix, secrets=secrets)
    return http, options


def stream_interrupted(http: HttpClient, exc: BaseException, partial: str, calls: Any = ()) -> Any:
    """The ``StreamInterrupted`` for a stream cut by ``exc`` (a transport error or a premature end)."""
    from ..errors import StreamInterrupted

    reason = f"{type(exc).__name__}: {http.redact(str(exc))}" if str(exc) else type(exc).__name__
    return StreamInterrupted(
        f"the {http.provider} stream ({http.base_url}) was cut after {len(partial)} characters ({reason}); "
        "the text received so far is on the error's .partial; retry the call",
        provider=http.provider, partial=partial, partial_tool_calls=list(calls), retryable=True)


def malformed(http: HttpClient, what: str, exc: BaseException, body: bytes | str) -> ProviderError:
    """The ``ProtocolError`` (not retryable) for a reply that is not the JSON the protocol promises."""
    head = body[:4096] if isinstance(body, str) else body[:4096].decode("utf-8", "replace")
    head = http.redact(head)[:200]  # masked before the cut: no head of a secret is left
    return ProtocolError(
        f"{http.provider} ({http.base_url}) sent a {what} that is not valid JSON for its protocol ({exc}); "
        f"it starts with {head!r}. Check that base_url points at a compatible server",
        provider=http.provider, status=200, body=head)
