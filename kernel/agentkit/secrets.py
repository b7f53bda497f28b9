"""Secrets out of what zagent shows: ``looks_secret`` (a setting's name says it holds one), ``looks_secret_header``
(the same for an HTTP header, as providers mask them), ``public_data`` (settings without them) and ``Masker`` (known
secret values out of text)."""

from __future__ import annotations

import re
from typing import Any

from .._trust.secrets import Secret, mask_userinfo

__all__ = ["Masker", "looks_secret", "looks_secret_header", "public_data"]

#: a setting is secret when the last word of its name is one of these (``api_key``, ``X-Auth-Token``)
SECRET_KEY_WORDS = frozenset({"key", "apikey", "secret", "token", "password", "passwd", "pwd", "authorization",
                              "auth", "cookie", "credential", "credentials", "passphrase"})
#: words that make a header secret anywhere in its name (``X-Authentication``, ``X-Api-Keys``), as providers mask
#: the values of such headers when a server echoes them (``zagent.providerkit.masking.header_secrets``)
HEADER_SECRET_WORDS = ("key", "token", "secret", "auth", "cookie", "passw")
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
#: a trailing number or version (``2``, ``v2``) says which secret, not whether it is one
_VERSION = re.compile(r"^[vV]?[0-9]+$")
_PLACEHOLDER = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")


def looks_secret(key: str) -> bool:
    """Whether a setting named ``key`` holds a secret (``api_key``, ``Authorization``, ``X-Auth-Token``...)."""
    words = [w for w in _WORDS.findall(key) if not _VERSION.match(w)]  # ``X-Api-Key-2``, ``api_key_v2``
    return bool(words) and words[-1].lower().rstrip("0123456789") in SECRET_KEY_WORDS


def looks_secret_header(name: str) -> bool:
    """Whether an HTTP header named ``name`` holds a secret: ``looks_secret``, or its name says key, token,
    secret, auth, cookie or password anywhere (``X-Authentication``, ``X-Custom-Auth-Header``)."""
    lowered = name.lower()
    return looks_secret(name) or any(w in lowered for w in HEADER_SECRET_WORDS)


def headers_key(key: Any) -> bool:
    """Whether the setting ``key`` is a mapping of HTTP headers (``headers``, ``extra_headers``)."""
    return str(key).lower().endswith("headers")


def public_data(value: Any, *, headers: bool = False) -> Any:
    """``value`` (settings) without values under secret-looking keys (a ``${VAR}`` reference stays; in a mapping
    of HTTP headers, ``looks_secret_header``), ``Secret`` objects and anything that is not plain JSON data, at
    any depth."""
    if isinstance(value, dict):
        out = {}
        secret = looks_secret_header if headers else looks_secret
        for k, v in value.items():
            if secret(str(k)) and not (isinstance(v, str) and _PLACEHOLDER.match(v)):
                continue
            v = public_data(v, headers=headers_key(k))
            if v is not _DROP:
                out[k] = v
        return out
    if isinstance(value, (list, tuple)):
        return [v for v in (public_data(x) for x in value) if v is not _DROP]
    if isinstance(value, str):
        return mask_userinfo(value)
    if isinstance(value, (int, float, bool, type(None))):
        return value
    return _DROP


_DROP = object()


MASK = "***"
MIN_MASK_LENGTH = 6  # shorter values (dummy keys such as ``x``) are never masked
WORD_MASK_LENGTH = 8  # nor shorter letters-only ones (``ollama``)
ANYWHERE_MASK_LENGTH = 20  # longer ones are masked even inside other text; shorter ones only standing alone
_TOKEN_CHARS = r"A-Za-z0-9_\-"


class Masker:
    """``Masker(values)(text)``: ``text`` with the known secret ``values`` (and their JSON-escaped forms) and URL
    userinfo replaced by ``***``, longest first (lengths: see the constants above)."""

    __slots__ = ("values", "_patterns")

    def __init__(self, values: Any = ()):
        import json  # here, not at module level: ``import zagent`` stays light

        forms: set[str] = set()
        for v in values:
            if isinstance(v, Secret):
                v = v.reveal()
            if not isinstance(v, str) or len(v) < MIN_MASK_LENGTH or (len(v) < WORD_MASK_LENGTH and v.isalpha()):
                continue
            forms.add(v)
            forms.add(json.dumps(v)[1:-1])  # as it appears inside a JSON string
        self.values = tuple(sorted(forms, key=len, reverse=True))
        self._patterns = tuple(
            None if len(v) >= ANYWHERE_MASK_LENGTH
            else re.compile(f"(?<![{_TOKEN_CHARS}]){re.escape(v)}(?![{_TOKEN_CHARS}])")
            for v in self.values)

    def __call__(self, text: str) -> str:
        text = mask_userinfo(text)
        for v, pattern in zip(self.values, self._patterns):
            if v in text:
                text = text.replace(v, MASK) if pattern is None else pattern.sub(MASK, text)
        return text

    def __bool__(self) -> bool:
        return bool(self.values)

    def __repr__(self) -> str:
        return f"<Masker {len(self.values)} value(s)>"
