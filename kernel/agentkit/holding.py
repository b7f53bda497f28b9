"""A streamed answer waits for its output guardrails (docs/streaming.md): ``hold(ctx, own)`` (``None`` when the run
is not streamed or no output guardrail applies) keeps the agent's text and reasoning pieces while its events still
pass; ``release(judge)``, once the answer passed, judges the rest (earlier replies, reasoning) and sends all on in
order; ``drop_last()`` forgets a rejected reply; ``replace_last_text()`` keeps of the latest only what was judged;
``close()`` drops the rest. A nested agent's hold releases into its caller's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional, Sequence

from .._runs.context import STREAM_SINK
from ..types import Chunk, Event
from .guardrails import wanted

if TYPE_CHECKING:  # pragma: no cover
    from .._runs.context import RunContext

__all__ = ["Held", "Mark", "hold", "unjudged"]


class Mark:
    """Where a held reply started or ended (``llm_start``/``llm_end``), so a stream reads its pieces reply by reply."""

    __slots__ = ("type",)

    def __init__(self, type: str) -> None:
        self.type = type


class Held:
    """The sink of a held agent (``ctx.on_delta`` and the task's stream sink while it runs)."""

    __slots__ = ("ctx", "outer", "pieces", "token")
    takes_marks = True

    def __init__(self, ctx: "RunContext[Any]", outer: Callable[[Any], Any]) -> None:
        self.ctx, self.outer = ctx, outer
        self.pieces: list[Any] = []
        ctx.on_delta = self
        self.token = STREAM_SINK.set(self)  # contexts made later in this task (and its child tasks) hold too

    def __call__(self, item: Any) -> Any:
        if isinstance(item, (Chunk, Mark)):
            self.pieces.append(item)
            return None
        if isinstance(item, Event) and item.type in ("llm_start", "llm_end"):
            self.pieces.append(Mark(item.type))
        return self.outer(item)  # events are not the answer: they pass now

    async def release(self, judge: Optional[Callable[[str], Awaitable[Any]]] = None,
                      answer: Optional[str] = None) -> None:
        """Send the held pieces on (the guardrails passed the answer). What they did not judge -- the text of
        earlier replies (written before their tool calls), the latest reply's text when it is not ``answer``, and
        every reply's reasoning -- is first given to ``judge`` (a guardrail that trips raises, nothing is sent), or,
        without one (a structured answer's guardrails read fields, not text), not sent."""
        if judge is not None:
            for text in self._unjudged(answer):
                await judge(text)
        else:
            last = self._last()
            self.pieces = [p for i, p in enumerate(self.pieces) if not isinstance(p, Chunk) or
                           (i >= last and p.type == "text")]
        pieces, self.pieces = self.pieces, []
        marks = getattr(self.outer, "takes_marks", False)
        for piece in pieces:
            if isinstance(piece, Mark) and not marks:
                continue
            sent = self.outer(piece)
            if sent is not None:
                await sent

    def _unjudged(self, answer: Optional[str]) -> list[str]:
        """Each held reply's text (the latest's only when it is not ``answer``) and reasoning, in order."""
        replies: list[dict[Any, list[str]]] = [{}]
        for p in self.pieces:
            if isinstance(p, Mark) and p.type == "llm_start":
                replies.append({})
            elif isinstance(p, Chunk) and p.type in ("text", "reasoning"):
                replies[-1].setdefault(p.type, []).append(p.text)  # joined once: `+` per piece was quadratic
        return unjudged([{kind: "".join(parts) for kind, parts in r.items()} for r in replies], answer, "text")

    def _last(self) -> int:
        starts = [i for i, p in enumerate(self.pieces) if isinstance(p, Mark) and p.type == "llm_start"]
        return starts[-1] if starts else 0

    def last_text(self) -> str:
        """The text (not the reasoning) of the latest held reply."""
        return "".join(p.text for p in self.pieces[self._last():] if isinstance(p, Chunk) and p.type == "text")

    def replace_last_text(self, text: str) -> None:
        """The latest reply's text pieces become one piece, ``text`` (what the guardrails judged, where the reply
        held more: a structured answer's prose around its fields), where its first text piece was."""
        first = self._last()
        kept = self.pieces[first:]
        at = next((i for i, p in enumerate(kept) if isinstance(p, Chunk) and p.type == "text"), len(kept))
        rest = [p for p in kept[at:] if not (isinstance(p, Chunk) and p.type == "text")]
        self.pieces[first:] = [*kept[:at], Chunk(type="text", text=text), *rest]

    def drop_last(self) -> None:
        """Drop the pieces of the latest reply (from its ``llm_start``; all held pieces when none is marked): an
        answer rejected before the guardrails judged it (a validator's retry) never reaches the stream."""
        starts = [i for i, p in enumerate(self.pieces) if isinstance(p, Mark) and p.type == "llm_start"]
        del self.pieces[starts[-1] if starts else 0:]

    def close(self) -> None:
        """Stop holding; pieces not released (a guardrail tripped, the run failed) are dropped."""
        self.pieces = []
        if self.ctx.on_delta is self:
            self.ctx.on_delta = self.outer
        try:
            STREAM_SINK.reset(self.token)
        except ValueError:  # closed from another context: that context's variable ends with it
            pass


def hold(ctx: "RunContext[Any]", own: Sequence[Any] = ()) -> Optional[Held]:
    """A ``Held`` for a streamed run whose answer output guardrails judge, else ``None`` (O(1))."""
    outer = ctx.on_delta
    if outer is None or not wanted(ctx, "output", own):
        return None
    return Held(ctx, outer)


def unjudged(replies: Sequence[dict[Any, str]], answer: Optional[str], said: Any) -> list[str]:
    """The texts of ``replies`` (each ``{kind: text}``, in order) the output guardrails have not judged: all but the
    latest reply's ``said`` text when it is ``answer`` (the latest reply is the last that said anything)."""
    last = max((i for i, r in enumerate(replies) if any(t.strip() for t in r.values())), default=0)
    return [text for i, reply in enumerate(replies) for kind, text in reply.items() if text.strip() and
            not (i == last and kind == said and answer is not None and text.strip() == answer.strip())]
