"""``Secret``: a string wrapper that never shows its value in repr, str, logs or JSON.

Providers keep API keys as ``Secret``; only ``reveal()`` gives the value, at the
one place that puts it into a request header.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Optional

#: A setting is a secret when the last word of its name is one of these (``api_key``,
#: ``X-Auth-Token``, ``clientSecret``, ``Authorization``; not ``max_tokens`` or ``api_key_env``).
SECRET_KEY_WORDS = frozenset({"key", "apikey", "secret", "token", "password", "passwd", "pwd", "authorization",
                              "auth", "cookie", "credential", "credentials"})
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_PLACEHOLDER = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")


class Secret:
    """Holds a secret string. ``repr``/``str`` print ``'***'``; ``reveal()`` returns the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    @classmethod
    def of(cls, value: "Optional[str | Secret]") -> "Optional[Secret]":
        """Wrap ``value`` unless it is ``None``, empty or already a ``Secret``."""
        if value is None or value == "":
            return None
        return value if isinstance(value, Secret) else cls(value)

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))

    def __bool__(self) -> bool:
        return bool(self._value)

    def __reduce__(self):  # pickling would leak nothing new, but keep it explicit
        return (Secret, (self._value,))


def looks_secret(key: str) -> bool:
    """Whether a setting named ``key`` holds a secret (``api_key``, ``Authorization``, ``X-Auth-Token``...)."""
    words = _WORDS.findall(key)
    return bool(words) and words[-1].lower() in SECRET_KEY_WORDS


def public_data(value: Any) -> Any:
    """``value`` (settings as plain data) with every secret removed, at any depth.

    Dropped: values under secret-looking keys (a ``${VAR}`` reference is kept: it
    names a secret without holding it), ``Secret`` objects, and anything that is
    not plain JSON data (clients, callables). For declarations that get saved,
    shown or logged.
    """
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if looks_secret(str(k)) and not (isinstance(v, str) and _PLACEHOLDER.match(v)):
                continue
            v = public_data(v)
            if v is not _DROP:
                out[k] = v
        return out
    if isinstance(value, (list, tuple)):
        return [v for v in (public_data(x) for x in value) if v is not _DROP]
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    return _DROP


_DROP = object()


# -- masking secret values in text ----------------------------------------------------

#: Values shorter than this are never masked: a dummy key such as ``x`` or ``none``
#: (common for local servers) would otherwise mangle every message it occurs in.
MIN_SECRET_LENGTH = 8
#: Values at least this long are masked wherever they occur, even glued to other text;
#: shorter ones only where they stand alone (not inside a longer word or token).
ANYWHERE_SECRET_LENGTH = 20
_TOKEN_CHARS = r"A-Za-z0-9_\-"
_HEADER_PARTS = re.compile(r"[;,\s]+")


def mask_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of a secret value replaced by ``***``.

    Only whole values are masked, never fragments of words: a value shorter than
    ``MIN_SECRET_LENGTH`` is left alone (it cannot be a real credential, and
    masking it would mangle the text), one shorter than ``ANYWHERE_SECRET_LENGTH``
    is masked where it stands as a token of its own (not preceded or followed by a
    letter, digit, ``_`` or ``-``), and a longer one wherever it occurs.
    """
    for secret in secrets:
        if len(secret) < MIN_SECRET_LENGTH or secret not in text:
            continue
        if len(secret) >= ANYWHERE_SECRET_LENGTH:
            text = text.replace(secret, "***")
        else:
            pattern = f"(?<![{_TOKEN_CHARS}]){re.escape(secret)}(?![{_TOKEN_CHARS}])"
            text = re.sub(pattern, "***", text)
    return text


def secret_header_values(headers: Any) -> list[str]:
    """The values to mask of the headers whose name says they hold a secret.

    For ``Authorization: Bearer abc...`` that is the whole value and the credential
    after the scheme; for ``Cookie: a=1; session=xyz`` also each cookie's value.
    Longest first, so a value is masked before a part of it.
    """
    found: set[str] = set()
    for name, value in dict(headers or {}).items():
        if not isinstance(value, str) or not looks_secret(str(name)):
            continue
        value = value.strip()
        found.add(value)
        for part in _HEADER_PARTS.split(value):
            found.add(part)
            if "=" in part:
                found.add(part.split("=", 1)[1])
    return sorted((v for v in found if len(v) >= MIN_SECRET_LENGTH), key=len, reverse=True)
