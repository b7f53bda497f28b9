"""When a group chat ends: combinable termination conditions (docs/groupchat.md#termination).

A condition has a ``name`` and ``check(view)`` or ``acheck(view)`` returning ``None`` (go on) or a reason (stop);
the first that holds after a turn ends the chat. ``from_spec`` builds the built-ins from a ``termination``
mapping in this order: keyword, judge, max_tokens, max_time, max_rounds.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import attrs

from zagent.errors import ConfigError
from zagent.agentkit.awaits import maybe_await
from zagent.types import Usage

from .history import ChatMessage
from .speakers import Turn, speak

if TYPE_CHECKING:  # pragma: no cover
    from zagent import RunContext

DONE_WORDS = ("done", "yes", "true", "terminate", "stop", "finished", "complete")
HEDGE_WORDS = frozenset({"but", "however", "not", "except", "although", "though", "almost", "yet", "missing",
                         "unless", "needs", "need"})
SPEC_KEYS = ("max_rounds", "keywords", "keyword", "case_sensitive", "judge", "judge_every", "max_tokens",
             "max_seconds")


@attrs.frozen(repr=False)
class ChatView:
    """What a condition sees after a turn (``usage`` is live: it includes a judge's tokens)."""

    round: int
    messages: tuple[ChatMessage, ...]
    elapsed: float
    task: str
    inputs: dict[str, Any]
    ctx: "RunContext[Any]"

    @property
    def usage(self) -> Usage:
        return self.ctx.usage

    @property
    def last(self) -> Optional[ChatMessage]:
        return self.messages[-1] if self.messages else None


@attrs.define(repr=False)
class MaxRounds:
    rounds: int
    name: str = "max_rounds"

    def __attrs_post_init__(self) -> None:
        if self.rounds < 1:
            raise ConfigError(f"max_rounds must be at least 1, got {self.rounds}")

    def check(self, view: ChatView) -> Optional[str]:
        return f"{self.rounds} rounds were taken" if view.round >= self.rounds else None


@attrs.define(repr=False)
class Keyword:
    phrases: Sequence[str]
    case_sensitive: bool = False
    name: str = "keyword"

    def check(self, view: ChatView) -> Optional[str]:
        last = view.last
        if last is None or last.round == 0:
            return None
        text = last.content if self.case_sensitive else last.content.lower()
        for phrase in self.phrases:
            if (phrase if self.case_sensitive else phrase.lower()) in text:
                return f"{last.speaker} said {phrase!r}"
        return None


@attrs.define(repr=False)
class TokenBudget:
    max_tokens: int
    name: str = "max_tokens"

    def check(self, view: ChatView) -> Optional[str]:
        spent = view.usage.total_tokens
        return f"{spent} tokens spent (budget {self.max_tokens})" if spent >= self.max_tokens else None


@attrs.define(repr=False)
class TimeBudget:
    seconds: float
    name: str = "max_time"

    def check(self, view: ChatView) -> Optional[str]:
        return (f"ran {view.elapsed:.1f}s (budget {self.seconds:g}s)" if view.elapsed >= self.seconds else None)


@attrs.define(repr=False)
class Judge:
    """An agent (any speaker kind) that reads the transcript and decides whether the chat is done."""

    agent: Any
    every: int = 1
    name: str = "judge"

    async def acheck(self, view: ChatView) -> Optional[str]:
        if view.round % max(1, self.every):
            return None
        judge_name = getattr(self.agent, "name", None) or "judge"
        ctx = view.ctx.kernel.context(run_id=view.ctx.run_id, agent=judge_name,
                                      metadata={"groupchat": True, "role": "judge", "round": view.round})
        turn = Turn(speaker=judge_name, round=view.round, task=view.task, inputs=view.inputs,
                    messages=view.messages, ctx=ctx)
        reply = await speak(self.agent, turn)
        view.ctx.add_usage(reply.usage)  # the judge's tokens count against the chat's budget
        if not is_done(reply.output, reply.content):
            return None
        reason = reply.output.get("reason")
        return f"{judge_name}: {reason if isinstance(reason, str) and reason else reply.content}"


def is_done(output: dict[str, Any], content: str) -> bool:
    """A judge's verdict: boolean ``done`` (or the first boolean output), else the reply's first word,
    unless its first sentence hedges ("Yes, but ...")."""
    done = output.get("done")
    if isinstance(done, bool):
        return done
    flags = [v for v in output.values() if isinstance(v, bool)]
    if flags:
        return flags[0]
    first_sentence = re.split(r"[.!?\n]", content.strip().lower().lstrip("\"'`*#"), maxsplit=1)[0]
    words = [w.strip(".,!:;\"'`*()") for w in first_sentence.split()]
    # "Yes, but the conclusion is missing" is not a verdict of done.
    return bool(words) and words[0] in DONE_WORDS and not any(w in HEDGE_WORDS for w in words[1:])


async def first_met(conditions: Sequence[Any], view: ChatView) -> Optional[tuple[str, str]]:
    """``(name, reason)`` of the first condition that holds, or ``None``."""
    for cond in conditions:
        fn = getattr(cond, "acheck", None) or getattr(cond, "check", None) or cond
        reason = await maybe_await(fn(view))
        if reason:
            return getattr(cond, "name", type(cond).__name__), str(reason)
    return None


def from_spec(spec: Optional[dict[str, Any]], resolve_agent: Callable[[Any], Any]) -> list[Any]:
    """Conditions from the declarative ``termination`` mapping (see the module docstring)."""
    spec = dict(spec or {})
    unknown = sorted(set(spec) - set(SPEC_KEYS))
    if unknown:
        raise ConfigError(f"unknown termination setting(s) {', '.join(unknown)}; known: {', '.join(SPEC_KEYS)}")
    conditions: list[Any] = []
    phrases = spec.get("keywords") or ([spec["keyword"]] if spec.get("keyword") else [])
    if isinstance(phrases, str):
        phrases = [phrases]
    if not isinstance(phrases, (list, tuple)) or not all(isinstance(p, str) and p for p in phrases):
        raise ConfigError(f"termination.keywords (or keyword) must be a phrase or a list of phrases (non-empty "
                          f"text), got {_shape(spec.get('keywords') or spec.get('keyword'))}; write e.g. "
                          "\"keywords\": [\"DONE\"]")
    if phrases:
        conditions.append(Keyword(list(phrases), case_sensitive=bool(spec.get("case_sensitive", False))))
    if spec.get("judge") is not None:
        every = spec.get("judge_every", 1)
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ConfigError(f"termination.judge_every must be a whole number of rounds >= 1, got "
                              f"{_shape(every)}; leave it out to ask the judge after every round")
        conditions.append(Judge(resolve_agent(spec["judge"]), every=every))
    if spec.get("max_tokens") is not None:
        conditions.append(TokenBudget(int(spec["max_tokens"])))
    if spec.get("max_seconds") is not None:
        conditions.append(TimeBudget(float(spec["max_seconds"])))
    if spec.get("max_rounds") is not None:
        conditions.append(MaxRounds(int(spec["max_rounds"])))
    return conditions


def _shape(value: Any) -> str:
    """``value``'s type and a short repr, for an error about a setting of the wrong form."""
    shown = repr(value)
    return f"{type(value).__name__} {shown if len(shown) <= 60 else shown[:57] + '...'}"
