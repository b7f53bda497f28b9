"""The one safe renderer of spec text with ``{name}`` placeholders (docs/security.md, 5c):
``placeholders(text, names, key)`` parses once (cached) with ``str.format``'s brace rules and takes plain names
only; anything else, or a name outside ``names``, is a ``ConfigError`` naming the placeholder and the key.
``render(values)`` only joins strings.
"""

from __future__ import annotations

from functools import lru_cache
from string import Formatter
from typing import Any, Mapping, Optional, Union

from ..errors import ConfigError

_PARSE = Formatter().parse
_BRACES = "write a literal brace as '{{' or '}}'"


class Placeholders:
    """A text parsed once into literal strings and placeholder names; ``render(values)`` joins them."""

    __slots__ = ("key", "names", "parts", "static", "text")

    def __init__(self, text: str, parts: tuple[Union[str, tuple[str]], ...], key: str):
        self.text, self.parts, self.key = text, parts, key
        self.names = frozenset(p[0] for p in parts if isinstance(p, tuple))
        self.static = "".join(p for p in parts if isinstance(p, str)) if not self.names else None

    def render(self, values: Mapping[str, Any]) -> str:
        """The text with each placeholder replaced by its value (``str()`` of a non-string); a name missing from
        ``values`` is a ``ConfigError`` naming it and the key."""
        if self.static is not None:
            return self.static
        out = []
        for p in self.parts:
            if isinstance(p, str):
                out.append(p)
                continue
            try:
                value = values[p[0]]
            except KeyError:
                raise ConfigError(f"{self.key}: no value for placeholder {{{p[0]}}}; "
                                  f"give one of {', '.join(sorted(values)) or 'no values'}") from None
            out.append(value if isinstance(value, str) else str(value))
        return "".join(out)

    def __repr__(self) -> str:
        return f"<Placeholders {self.key} {sorted(self.names)}>"


#: longer texts are parsed each time, never kept by the process-wide cache (specs varying a 16 MiB prompt)
MAX_CACHED_TEXT = 16_384


def placeholders(text: str, names: Optional[Any] = None, key: str = "prompt") -> Placeholders:
    """``text`` parsed (once: cached, up to ``MAX_CACHED_TEXT`` characters) for ``render``; ``names``: the
    placeholders allowed (``None``: any name); ``key``: the spec key named in errors (``title_format``,
    ``prompt`` of agent ``'Editor'``)."""
    allowed = None if names is None else frozenset(names)
    if isinstance(text, str) and len(text) > MAX_CACHED_TEXT:
        return _parse(text, allowed, key)
    return _parsed(text, allowed, key)


@lru_cache(maxsize=1024)
def _parsed(text: str, names: Optional[frozenset[str]], key: str) -> Placeholders:
    return _parse(text, names, key)


def _parse(text: str, names: Optional[frozenset[str]], key: str) -> Placeholders:
    if not isinstance(text, str):
        raise ConfigError(f"{key} must be a string, got {type(text).__name__}")
    try:
        pieces = list(_PARSE(text))
    except ValueError as exc:
        raise ConfigError(f"{key} {_short(text)!r} is malformed ({exc}); {_BRACES} and a placeholder as "
                          "'{name}'") from None
    parts: list[Union[str, tuple[str]]] = []
    for literal, field, spec, conversion in pieces:
        if literal:
            parts.append(literal)
        if field is None:
            continue
        shown = "{" + field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        if not field.isidentifier():
            raise ConfigError(f"{key}: placeholder {shown} is refused: only plain names like {{draft}} are "
                              f"placeholders (no attribute or index access, no positional {{}}); {_BRACES}")
        if conversion or spec:
            raise ConfigError(f"{key}: placeholder {shown} is refused: a conversion or format spec is not allowed, "
                              f"write {{{field}}}")
        if names is not None and field not in names:
            raise ConfigError(f"{key}: unknown placeholder {{{field}}}; the placeholders here are "
                              f"{', '.join('{' + n + '}' for n in sorted(names)) or 'none'} ({_BRACES})")
        parts.append((field,))
    merged: list[Union[str, tuple[str]]] = []
    for p in parts:
        if isinstance(p, str) and merged and isinstance(merged[-1], str):
            merged[-1] += p
        else:
            merged.append(p)
    return Placeholders(text, tuple(merged), key)


def _short(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."
