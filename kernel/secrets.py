"""``Secret``: a string wrapper that never shows its value in repr, str, logs or JSON.

Providers keep API keys as ``Secret``; only ``reveal()`` gives the value, at the
one place that puts it into a request header.
"""

from __future__ import annotations

from typing import Optional


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
