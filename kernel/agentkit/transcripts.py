"""One turn in a plain-text transcript: ``turn_text(head, text)`` puts the turn's later lines under its head,
indented, so text from a model or a tool cannot start a line that reads as another turn (docs/security.md)."""

from __future__ import annotations

__all__ = ["turn_text"]


def turn_text(head: str, text: str) -> str:
    """``head`` then ``text``, each line of ``text`` after the first indented by two spaces (every line break
    counted: ``\\r``, U+2028...)."""
    return head + "\n  ".join(text.splitlines())
