"""Inline reasoning: ``<think>``/``<thinking>`` spans split from the answer (``split_think``; ``ThinkStream`` for
streamed deltas), for the providers of the kit (``zagent.providerkit.ProviderLLM``). The rules are in
docs/architecture.md (Design notes).
"""

from __future__ import annotations

from typing import Literal, Optional

_OPEN = "<think"
_CLOSE = "</think"
#: the most leading whitespace held back (it goes when a think span follows); more is the answer's, released
MAX_LEAD = 4096
#: a piece of streamed text: ``("text", s)`` or ``("reasoning", s)``
Piece = tuple[Literal["text", "reasoning"], str]


def _tag_end(text: str, at: int, stem: str) -> int:
    """End of the tag ``stem>`` or ``stem + 'ing>'`` at ``at`` (``-1`` when it is another word, like ``<thinker``)."""
    after = at + len(stem)
    if text.startswith(">", after):
        return after + 1
    if text.startswith("ing>", after):
        return after + 4
    return -1


def _find(text: str, stem: str, start: int) -> tuple[int, int]:
    """``(index, end)`` of the next whole tag ``stem`` from ``start``, or ``(-1, -1)``."""
    at = text.find(stem, start)
    while at != -1:
        end = _tag_end(text, at, stem)
        if end != -1:
            return at, end
        at = text.find(stem, at + 1)
    return -1, -1


def split_think(text: str) -> tuple[str, str]:
    """``(answer, reasoning)`` of ``text``; ``(text, "")`` when it holds no think tag."""
    if _OPEN not in text and _CLOSE not in text:
        return text, ""
    answer: list[str] = []
    reasoning: list[str] = []
    pos = 0
    first_open, open_end = _find(text, _OPEN, 0)
    first_close, close_end = _find(text, _CLOSE, 0)
    if first_close != -1 and (first_open == -1 or first_close < first_open):
        reasoning.append(text[:first_close])
        pos = close_end
        first_open, open_end = _find(text, _OPEN, pos)
    reasoning_first = pos > 0 or (first_open != -1 and not text[:first_open].strip())
    while first_open != -1:
        answer.append(text[pos:first_open])
        close, end = _find(text, _CLOSE, open_end)
        if close == -1:
            reasoning.append(text[open_end:])
            pos = len(text)
            break
        reasoning.append(text[open_end:close])
        pos = end
        first_open, open_end = _find(text, _OPEN, pos)
    answer.append(text[pos:])
    out = "".join(answer)
    if reasoning_first:
        out = out.lstrip()
    return out, "\n\n".join(part.strip() for part in reasoning if part.strip())


def join_reasoning(*parts: Optional[str]) -> Optional[str]:
    """Reasoning from several sources, joined by a blank line (``None`` when all are empty)."""
    found = [p for p in parts if p]
    return "\n\n".join(found) if found else None


class ThinkStream:
    """Splits streamed text deltas into pieces: ``feed(delta)`` gives those ready now, ``flush()`` the rest."""

    __slots__ = ("inside", "held", "begun", "lead", "reasoned")

    def __init__(self) -> None:
        self.inside = False
        self.held = ""
        self.begun = False  # answer text (not only whitespace) was emitted
        self.lead = ""  # leading whitespace held until we know whether reasoning comes first
        self.reasoned = False  # a span came before any answer text: the answer's leading whitespace goes

    def feed(self, delta: str) -> list[Piece]:
        if self.begun and not self.inside and not self.held and "<" not in delta:
            return [("text", delta)]
        buf = self.held + delta
        self.held = ""
        out: list[Piece] = []
        while buf:
            stem = _CLOSE if self.inside else _OPEN
            at, end = _find(buf, stem, 0)
            cut = len(buf) - _partial(buf, stem) if at == -1 else at
            if self.inside:
                self._put(out, "reasoning", buf[:cut])
            else:
                self._text(out, buf[:cut])
            if at == -1:
                self.held = buf[cut:]
                break
            if not self.inside and not self.begun:
                self.lead = ""
                self.reasoned = True
            self.inside = not self.inside
            buf = buf[end:]
        return out

    def flush(self) -> list[Piece]:
        out: list[Piece] = []
        held, self.held = self.held, ""
        if held:
            if self.inside:
                self._put(out, "reasoning", held)
            else:
                self._text(out, held)
        if self.lead and not self.begun and not self.reasoned:
            out.append(("text", self.lead))
            self.lead = ""
        return out

    def _text(self, out: list[Piece], text: str) -> None:
        if not text:
            return
        if not self.begun:
            if not text.strip() and len(self.lead) + len(text) <= MAX_LEAD:
                self.lead += text
                return
            text, self.lead = self.lead + text, ""
            if self.reasoned:
                text = text.lstrip()
            self.begun = True
        out.append(("text", text))

    @staticmethod
    def _put(out: list[Piece], kind: Literal["text", "reasoning"], text: str) -> None:
        if text:
            out.append((kind, text))


def _partial(buf: str, stem: str) -> int:
    """Length of the tail of ``buf`` that could still become the tag ``stem>``/``stem + 'ing>'``."""
    at = buf.rfind("<", max(0, len(buf) - len(stem) - 4))
    if at == -1:
        return 0
    tail = buf[at:]
    whole = stem + "ing>"
    if whole.startswith(tail) or (stem + ">").startswith(tail):
        return len(tail)
    return 0
