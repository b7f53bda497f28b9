"""``Secret`` (a string that never shows its value) and ``mask_userinfo`` (URL credentials out of text);
``Masker``, ``looks_secret`` and ``public_data`` are in ``zagent.agentkit.secrets``."""

from __future__ import annotations

import re
from typing import Optional

#: ``scheme://userinfo@``; greedy to the authority's last ``@`` (a raw ``@`` in a password, as URL parsers read it)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#\s'\"<>]+@")


class Secret:
    """A secret string: ``repr``/``str`` print ``'***'``, ``reveal()`` returns the value."""

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

    def __reduce__(self) -> tuple[type["Secret"], tuple[str]]:  # pickling would leak nothing new, but keep it explicit
        return (Secret, (self._value,))


def mask_userinfo(text: str) -> str:
    """``text`` with the userinfo of every URL in it replaced by ``***`` (``http://***@proxy/v1``)."""
    return _USERINFO.sub(r"\1***@", text) if "@" in text and "://" in text else text
