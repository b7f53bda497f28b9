"""Durable human interrupts (docs/workflows.md, "Asking a person"): in a node's (turn's)
``asking(Asking(answers, ...))`` scope, ``zagent.interrupt(question)`` gets the next answer, in order, or records
the question and raises ``zagent.Interrupted``; ``bind``/``run_in_context`` carry the scope to tool threads.
Questions and answers are JSON data (``as_data``).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
from typing import Any, Callable, Iterator, Mapping, Optional

import msgspec

from .._runs.context import ASKING, ASKING_KEY
from .._runs.stash import StashKey
from ..errors import ConfigError, Interrupted
from .counters import RunCounter
from .inputs import check_data

__all__ = ["Asking", "Interrupt", "QUESTIONS", "as_data", "asking", "bind", "run_in_context"]

NOTHING: Any = object()  # no question: a position vouched for without the question it answered

#: per run: ``"<where>#<index>#<digest>"`` -> 1 for the question last asked at that position of a node (turn), so
#: an answer is taken only by the question it was given to (``Asking.record``)
QUESTIONS: "StashKey[RunCounter]" = StashKey("zagent.interrupts_asked", restore=RunCounter.from_state)


class Interrupt(msgspec.Struct, kw_only=True):
    """A question asked by ``zagent.interrupt`` and waiting for its answer.

    :ivar question: what was asked (JSON data, usually text).
    :ivar index: its position among the interrupts of its node (turn) from 0: the ones before it were answered.
    :ivar node: the workflow node that asked; :ivar speaker: and :ivar round: the group-chat turn that asked.
    """

    question: Any
    index: int = 0
    node: Optional[str] = None
    speaker: Optional[str] = None
    round: Optional[int] = None

    @property
    def where(self) -> str:
        if self.node is not None:
            return f"node {self.node!r}"
        if self.speaker is not None:
            return f"{self.speaker!r} (round {self.round})"
        return "the run"

    @property
    def text(self) -> str:
        """The question as text (JSON when it is not text)."""
        return self.question if isinstance(self.question, str) else msgspec.json.encode(self.question).decode()

    def describe(self) -> str:
        """``node 'review' asks: Approve the plan?``."""
        return f"{self.where} asks: {self.text}"


class Asking:
    """The interrupts of one node run (turn): the answers given so far, and the first question left unanswered."""

    __slots__ = ("answers", "used", "asked", "where", "vouched", "passes", "record", "spent", "run", "store")

    def __init__(self, answers: Any = (), *, vouched: Optional[Any] = None, passes: int = 0,
                 record: Optional[RunCounter] = None, spent: Optional[set[str]] = None, run: Optional[str] = None,
                 store: str = "", **where: Any) -> None:
        self.answers = list(answers)
        self.used = 0
        self.asked: Optional[Interrupt] = None
        self.where = where
        #: the positions whose answers the restoring code gave, each with the question it answered (a mapping,
        #: or ``[index, question]`` pairs; a bare position vouches for no question); ``None``: every answer (e.g.
        #: a signed checkpoint)
        self.vouched = None if vouched is None else _vouched(vouched)
        #: the passes the node (turn) completed before this run of it (a workflow loop): an approval given in one
        #: pass is bound to it, so it never covers the same call in a later pass
        self.passes = passes
        #: the run's saved record of the question asked at each position (``QUESTIONS``): an answer given to one
        #: question is not the answer to another one asked at its position on a re-run (it is asked anew);
        #: ``None``: not checked (a remote worker's node)
        self.record = record
        #: the approvals (answers bound to a call) that ran their calls in this node run in this process: a retry's
        #: same call is asked anew (a yes covers one run of its call); each is recorded as spent (``agentkit.spent``)
        #: as its call runs, and again when the node ends
        self.spent = set() if spent is None else spent
        #: the id of the run these questions belong to (the workflow's, the chat's), which a yes is bound to: an
        #: agent under the node (a chat nested in it) has a run id of its own, new each time the node runs
        self.run = run
        #: the identity of the checkpoint store that run is kept in (``signing.store_identity``), which a yes is
        #: bound to as well: a run of the same id in another store is another run
        self.store = store

    def vouches(self, index: int, question: Any = NOTHING) -> bool:
        """Whether the answer at ``index`` came from the restoring code (or a checkpoint the kernel verified),
        not only from an unsigned checkpoint, which anyone who can write the store may have edited, and (given
        ``question``) was the answer to that very question: only such an answer may approve a tool call
        (``zagent.plugins.actions.asked``), the call the person was shown, not one an edited position or
        speaker would move it to."""
        if self.vouched is None:
            return True
        if index not in self.vouched:
            return False
        return question is NOTHING or self.vouched[index] == question

    def ask(self, question: Any, *, matched: bool = True) -> Any:
        """The answer to this node's next interrupt, or ``Interrupted`` when it has none yet (nor one given to
        this very question, when ``matched``: the tool-approval questions match theirs themselves)."""
        question = as_data(question, "the question given to zagent.interrupt()")
        index = self.used
        self.used += 1
        key = f"{self._where()}#{index}#"
        if index < len(self.answers):
            if not matched or self._answers(key, question):
                return self.answers[index]
            del self.answers[index:]  # given to another question (a re-run asked something else here): ask anew
        if self.asked is None:
            self.asked = Interrupt(question=question, index=index, **self.where)
            self.note(index, question)
        raise Interrupted(f"{self.asked.describe()} (the run pauses until it is resumed with the answer)",
                          interrupt=self.asked)

    def note(self, index: int, question: Any) -> None:
        """Record ``question`` as the one asked at position ``index`` (``record``; a remote worker's, here)."""
        if self.record is None:
            return
        key = f"{self._where()}#{index}#"
        with self.record.lock:  # this position now asks this question only
            for other in [k for k in self.record.counts if k.startswith(key)]:
                self.record.counts[other] = 0
            self.record.counts[key + _digest(question)] = 1

    def recorded(self) -> dict[str, int]:
        """The entries of ``record`` for this node (turn), to ship with it to a remote worker."""
        if self.record is None:
            return {}
        with self.record.lock:
            return {k: n for k, n in self.record.counts.items() if k.startswith(f"{self._where()}#")}

    def _where(self) -> str:
        where = "|".join(f"{k}={v}" for k, v in sorted(self.where.items()))
        return f"{where}|pass={self.passes}" if self.passes else where

    def _answers(self, key: str, question: Any) -> bool:
        """Whether the answer at ``key``'s position was given to ``question`` (yes too when no question was
        recorded there: a run saved before questions were)."""
        if self.record is None:
            return True
        with self.record.lock:
            asked = [k for k, n in self.record.counts.items() if n > 0 and k.startswith(key)]
        return not asked or key + _digest(question) in asked


def _digest(question: Any) -> str:
    return hashlib.sha256(msgspec.json.encode(question, order="sorted")).hexdigest()[:32]


def _vouched(given: Any) -> dict[int, Any]:
    """``Asking``'s ``vouched`` as ``{index: question}`` (``NOTHING`` for a bare position, which vouches for no
    question: such an answer approves no tool call)."""
    if isinstance(given, Mapping):
        return {int(i): q for i, q in given.items()}
    out: dict[int, Any] = {}
    for item in given:
        if isinstance(item, (list, tuple)):
            out[int(item[0])] = item[1]
        else:
            out[int(item)] = NOTHING
    return out


@contextlib.contextmanager
def asking(scope: Asking) -> Iterator[Asking]:
    """``scope`` is what ``zagent.interrupt`` asks through in this task (and the tasks it starts). When the node
    (turn) ends without asking or failing, the approvals that ran their calls in it are recorded as spent
    (``agentkit.spent``): a run rolled back to a checkpoint before it ended does not run those calls again."""
    token = ASKING.set(scope)
    try:
        yield scope
    finally:
        ASKING.reset(token)
    if scope.asked is None and scope.spent:
        from .spent import mark_ran

        for tag in sorted(scope.spent):
            mark_ran(tag)


def bind(ctx: Any) -> Any:
    """Put this task's scope (if any) in ``ctx``'s stash, for sync tools in the tool threads; returns ``ctx``."""
    scope = ASKING.get()
    if scope is not None and ctx is not None:
        ctx.stash[ASKING_KEY] = scope
    return ctx


def run_in_context(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[[], Any]:
    """``fn(*args, **kwargs)`` as a callable for a thread, run in a copy of this task's context (its scope too)."""
    return functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)


def as_data(value: Any, what: str = "the answer") -> Any:
    """``value`` as plain JSON data (text, numbers, booleans, None, lists, dicts with text keys; a tuple becomes
    a list), or a ``ConfigError`` saying what is not: a question or an answer is data, never an object or code."""
    check_data(value, what)  # depth and size first, so the walk below is bounded
    return _plain(value, what)


def _plain(value: Any, what: str) -> Any:
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return value
    if kind is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise ConfigError(f"{what} must be JSON data, and {value!r} is not a JSON number")
        return value
    if kind is list or kind is tuple:
        return [_plain(v, what) for v in value]
    if kind is dict:
        bad = next((k for k in value if type(k) is not str), None)
        if bad is not None:
            raise ConfigError(f"{what} must be JSON data: the dict key {bad!r} is not text")
        return {k: _plain(v, what) for k, v in value.items()}
    raise ConfigError(f"{what} must be JSON data (text, numbers, booleans, None, lists, dicts with text keys), "
                      f"got {kind.__name__}")
