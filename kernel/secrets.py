"""``Secret``: a string wrapper that never shows its value in repr, str, logs or JSON.

Providers keep API keys as ``Secret``; only ``reveal()`` gives the value, at the
one place that puts it into a request header.
"""

from __future__ import annotations

import re
from typing import Any, Optional

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


#: Values shorter than this are not masked inside text: replacing a 1-3 character "key" everywhere would
#: mangle every message (``OPENAI_API_KEY=x`` would mask each ``x``) while hiding nothing worth hiding.
MIN_MASK_LENGTH = 6
MASK = "***"


def header_secrets(headers: Any) -> list[str]:
    """The secret values among HTTP ``headers``: every ``Secret``, and the value of every header whose
    name says key, token, secret, auth, cookie or password (``X-Api-Key``, ``Authorization``, ``Cookie``);
    for ``Authorization: Bearer abc`` both the whole value and ``abc``."""
    out: list[str] = []
    for name, value in (dict(headers or {})).items():
        if isinstance(value, Secret):
            value = value.reveal()
        elif not (isinstance(value, str) and _secret_header(str(name))):
            continue
        out.append(value)
        scheme, _, credential = value.partition(" ")
        if credential.strip():
            out.append(credential.strip())
    return out


def _secret_header(name: str) -> bool:
    lowered = name.lower()
    return looks_secret(name) or any(w in lowered for w in ("key", "token", "secret", "auth", "cookie", "passw"))


class Masker:
    """Replaces known secret values (and their JSON-escaped forms) by ``***`` in any text.

    Keyed on the actual values, longest first; values shorter than ``MIN_MASK_LENGTH`` are ignored.
    ``Masker(values)(text)``; an empty masker returns text unchanged at the cost of one check.
    """

    __slots__ = ("values",)

    def __init__(self, values: Any = ()):
        import json  # here, not at module level: ``import zagent`` stays light

        forms: set[str] = set()
        for v in values:
            if isinstance(v, Secret):
                v = v.reveal()
            if not isinstance(v, str) or len(v) < MIN_MASK_LENGTH:
                continue
            forms.add(v)
            forms.add(json.dumps(v)[1:-1])  # as it appears inside a JSON string
        self.values = tuple(sorted(forms, key=len, reverse=True))

    def __call__(self, text: str) -> str:
        for v in self.values:
            if v in text:
                text = text.replace(v, MASK)
        return text

    def __bool__(self) -> bool:
        return bool(self.values)

    def __repr__(self) -> str:
        return f"<Masker {len(self.values)} value(s)>"


def mask(text: str, values: Any) -> str:
    """``text`` with each secret in ``values`` (strings or ``Secret``s) replaced by ``***``."""
    return Masker(values)(text)
