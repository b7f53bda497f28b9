"""The secret values a provider's client holds, found so its error messages can mask them when a server echoes
them back: those in its headers (``header_secrets``), in its base URL (``url_secrets``) and in the request fields
it sends (``option_secrets``, held encoded: ``sealed_fields``); ``mask`` masks given values in one text, and
``mask_pieces`` long runs of them (cut short, upper-cased).
"""

from __future__ import annotations

import re
from typing import Any

from ..agentkit.secrets import Masker, headers_key, looks_secret, looks_secret_header
from .._trust.secrets import PIECE_LENGTH, Secret, looks_secret_param, mask_pieces

__all__ = ["PIECE_LENGTH", "client_secrets", "header_secrets", "mask", "mask_pieces", "mask_call_options",
           "masked_error", "option_secrets", "sealed_fields", "url_secrets"]

_COOKIE_PARTS = re.compile(r";\s*")


def sealed_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """A provider's request ``fields`` (sent with every call) with the value of each secret-named key, at any
    depth (``extra_body``'s ``api_key``), held as the ``msgspec.Raw`` of its JSON: sent as it was (the JSON
    encoder writes it as is, no work per call), shown by no ``repr`` or ``attrs.asdict``."""
    import msgspec

    out: dict[str, Any] = {}
    for key, value in fields.items():
        if isinstance(value, dict):
            out[key] = sealed_fields(value)
        elif value is not None and not isinstance(value, msgspec.Raw) and looks_secret(str(key)):
            try:
                out[key] = msgspec.Raw(msgspec.json.encode(value))
            except TypeError:  # not JSON: the encoder of the request will say so, as before
                out[key] = value
        else:
            out[key] = value
    return out


def url_secrets(url: str) -> list[str]:
    """The credentials a URL carries, as they may be echoed back: those of its userinfo (the password,
    ``user:password``, the user name when there is no password (a token), and the Basic ``Authorization`` value
    made of them) and the values of its query parameters named like a credential (``?key=...``)."""
    import base64
    from urllib.parse import unquote, urlsplit

    try:
        parts = urlsplit(str(url))
    except ValueError:
        return []
    query = [v for name, _, raw in (p.partition("=") for p in re.split("[&;]", parts.query))
             if raw and looks_secret_param(unquote(name)) for v in (raw, unquote(raw))]
    info = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    if not info:
        return query
    user, _, password = info.partition(":")
    out = [info, unquote(info), password, unquote(password)] if password else [user, unquote(user)]
    pair = f"{unquote(user)}:{unquote(password)}"
    out.append(base64.b64encode(pair.encode()).decode())
    return [v for v in [*out, *query] if v]


def header_secrets(headers: Any) -> list[str]:
    """The secret values among HTTP ``headers``: every ``Secret``, and the value of every header whose
    name says key, token, secret, auth, cookie or password (``X-Api-Key``, ``Authorization``, ``Cookie``);
    for ``Authorization: Bearer abc`` both the whole value and ``abc``, for ``Basic <base64>`` also the decoded
    ``user:password`` and password, for ``Cookie: a=1; sid=xyz`` also each cookie's value."""
    out: list[str] = []
    for name, value in dict(headers or {}).items():
        if isinstance(value, Secret):
            value = value.reveal()
        elif not (isinstance(value, (str, bytes, bytearray)) and looks_secret_header(_text(name))):
            continue
        if isinstance(value, (bytes, bytearray)):  # httpx sends a bytes value as it is: echoed as its text
            value = bytes(value).decode("latin-1")
        out.append(value)
        scheme, _, credential = value.partition(" ")
        if credential.strip():
            out.append(credential.strip())
            if scheme.lower() == "basic":
                out.extend(_basic_pair(credential.strip()))
        if "cookie" in str(name).lower():
            out.extend(part.split("=", 1)[1] for part in _COOKIE_PARTS.split(value) if "=" in part)
    return out


def client_secrets(client: Any) -> list[str]:
    """The secrets a user's own ``client=`` sends with every request, which a server may echo: its secret-named
    headers, its query ``params`` named like a credential, its cookies' values and its Basic ``auth``."""
    out = header_secrets(dict(getattr(client, "headers", None) or {}))
    params = getattr(client, "params", None)
    out.extend(str(v) for k, v in getattr(params, "multi_items", list)() if looks_secret_param(str(k)))
    out.extend(str(c.value) for c in getattr(getattr(client, "cookies", None), "jar", ()) if c.value)
    auth = getattr(getattr(client, "auth", None), "_auth_header", None)  # httpx's ``BasicAuth``
    if isinstance(auth, str):
        out.extend(header_secrets({"Authorization": auth}))
    return [s for s in out if s]


def _text(name: Any) -> str:
    return bytes(name).decode("latin-1") if isinstance(name, (bytes, bytearray)) else str(name)


def _basic_pair(credential: str) -> list[str]:
    """``user:password`` and the password of a Basic credential (nothing when it is not base64 text)."""
    import base64
    import binascii

    try:
        pair = base64.b64decode(credential, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return []
    return [pair, pair.partition(":")[2]] if ":" in pair else [pair]


def option_secrets(options: Any, *, headers: bool = False, under: bool = False) -> list[str]:
    """The secret values in a provider's options at any depth: every ``Secret``, and the text under a
    secret-looking key (``extra_body={"provider": {"api_key": ...}}``; in a ``headers`` mapping, a secret-looking
    header), which a server echoing the request body back in an error would show."""
    if isinstance(options, Secret):
        return [options.reveal()]
    if isinstance(options, str):
        return [options] if under else []
    out: list[str] = []
    if isinstance(options, dict):
        secret = looks_secret_header if headers else looks_secret
        for name, value in options.items():
            out.extend(option_secrets(value, headers=headers_key(name), under=under or secret(str(name))))
    elif isinstance(options, (list, tuple)):
        for value in options:
            out.extend(option_secrets(value, under=under))
    return out


def mask_call_options(error: Any, options: Any) -> Any:
    """``error`` (a ``ProviderError``) with the secret values of a call's own ``options`` masked in its message
    and ``body``: a per-call option (``extra_body={"api_key": ...}``, a secret-named field) the client was not
    built with, echoed by a server. For the error path only."""
    values = [v for v in option_secrets(options) if v] if options else []
    return masked_error(error, Masker(values)) if values else error


def masked_error(error: Any, masker: Any) -> Any:
    """``error`` (a ``ProviderError``) with ``masker``'s values (also cut short, in another case or encoded) masked
    in its message and ``body``: a server's text a check quoted as it was (a content type, a Content-Encoding, a
    tool name; lower-cased). For the error path only."""
    values = masker.values
    text = mask_pieces(masker(str(error)), values)
    if text != str(error):
        error.args = (text, *error.args[1:])
    if isinstance(getattr(error, "body", None), str) and error.body:
        error.body = mask_pieces(masker(error.body), values)
    return error


def mask(text: str, values: Any) -> str:
    """``text`` with each secret in ``values`` (strings or ``Secret``s) replaced by ``***`` (see ``Masker``)."""
    return Masker(values)(text)
