"""A group chat's serializable state (``ChatState``) and its result (``GroupChatResult``).

``ChatState`` is what is checkpointed (kind ``groupchat``) and all a chat needs to continue in another process;
``step_log()`` is a chat's checkpoint log (patches between whole saves); ``resumed`` checks a checkpoint before
a chat continues from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Optional

import attrs
import msgspec

from zagent.agentkit.interrupts import Interrupt
from zagent.agentkit.steplog import StepLog
from zagent.types import Usage

from .history import ChatMessage, render_transcript

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

Status = Literal["running", "paused", "completed", "aborted", "failed"]


class ChatState(msgspec.Struct, kw_only=True, omit_defaults=True):
    run_id: str
    name: str = ""
    status: Status = "running"
    round: int = 0
    task: str = ""
    inputs: dict[str, Any] = {}
    messages: list[ChatMessage] = []
    usage: Usage = Usage()
    elapsed: float = 0.0
    stopped_by: Optional[str] = None
    detail: str = ""
    error: Optional[str] = None
    checkpoint: int = 0
    counters: dict[str, Any] = {}
    """The run's shared per-run counters (``ctx.shared.to_state()``: tool budgets), so a resumed chat keeps them."""
    counted: dict[str, Any] = {}
    """The round, usage, elapsed time and rails' counts when saved, sealed (``zagent.agentkit.countseal``): a resume
    from an unsigned store needs them intact and never lowers a count below them (``raise_to_sealed``)."""
    interrupt: Optional[Interrupt] = None
    """The question a turn asked through ``zagent.interrupt`` (the chat is ``paused`` on it until resumed with
    an answer); kept while that turn is run again, so the same speaker speaks at the same round."""
    answers: list[Any] = []
    """The answers given to the interrupts of the turn in flight, in order (data only)."""


state_decoder = msgspec.json.Decoder(ChatState)
#: ``interrupt`` and ``answers`` are in full saves only: the chat saves whole whenever they change
_SMALL = ("status", "round", "usage", "elapsed", "stopped_by", "detail", "error", "checkpoint", "counters", "counted")


def step_log(kernel: Optional["Kernel"] = None) -> StepLog:
    """A new checkpoint log for one chat run: ``messages`` grows, the small fields are set, the rest is fixed;
    signed with ``kernel``'s checkpoint key, if any."""
    from zagent.agentkit.signing import signer_of

    return StepLog(lists=("messages",), small=_SMALL, signer=signer_of(kernel) if kernel is not None else None)


@attrs.frozen(repr=False)
class GroupChatResult:
    """How a chat ended: ``stopped_by`` names the termination condition, ``detail`` says why.

    ``stopped_by`` is ``max_rounds``, ``keyword``, ``judge``, ``max_tokens``,
    ``max_time`` or the ``name`` of a custom condition; a chat ``paused`` on a
    turn's ``zagent.interrupt`` has ``stopped_by="interrupt"`` and its question in
    ``interrupts`` (answer it with ``GroupChat.aresume(run_id, answer=...)``).
    """

    run_id: str
    stopped_by: str
    detail: str
    rounds: int
    messages: tuple[ChatMessage, ...]
    usage: Usage
    status: str = "completed"
    output_name: str = "content"
    interrupts: tuple[Interrupt, ...] = ()

    @property
    def paused(self) -> bool:
        return self.status == "paused"

    @property
    def content(self) -> str:
        """The last participant's message (the chat's outcome)."""
        for m in reversed(self.messages):
            if m.round > 0:
                return m.content
        return ""

    @property
    def speakers(self) -> list[str]:
        """Who spoke, turn by turn."""
        return [m.speaker for m in self.messages if m.round > 0]

    def transcript(self) -> str:
        return render_transcript(self.messages)

    def to_dict(self) -> dict[str, Any]:
        """The outcome as plain data; the last participant's message is under ``output_name``."""
        return {self.output_name: self.content, "transcript": self.transcript(), "stopped_by": self.stopped_by,
                "detail": self.detail, "rounds": self.rounds, "run_id": self.run_id}

    def __repr__(self) -> str:
        return f"<GroupChatResult {self.run_id} stopped_by={self.stopped_by} rounds={self.rounds}>"


def resumed(found: tuple[int, bytes], task: Any, run_id: str) -> ChatState:
    """The chat state of checkpoint ``found`` (step, bytes) to continue, checked: a checkpoint carries no
    policy, so its counts must be whole numbers >= 0 (``CheckpointError`` naming the step), the round, usage
    and elapsed time are at least what the messages show (their rounds, their turns' usage and durations: a
    reset cannot buy rounds, tokens or time), and the counters are plain counts (adopted, never lowering)."""
    from zagent.errors import CheckpointError, ConfigError
    from zagent.agentkit.counters import check_counters, raise_counters

    if task is not None:
        raise ConfigError(f"run {run_id!r} already has checkpoints; call arun(run_id=...) without a task "
                          "to continue it, or use a new run id")
    try:
        state = state_decoder.decode(found[1])
    except (msgspec.DecodeError, RecursionError) as exc:  # a wrong shape, or nested past msgspec's limit
        raise CheckpointError(f"checkpoint {found[0]} of group chat run {run_id!r} is not a chat state "
                              f"({str(exc)[:200]}); it is damaged or was edited, so the run is not resumed. Start "
                              "a new run", run_id=run_id, step=found[0]) from None
    if state.status in ("completed", "aborted"):
        raise ConfigError(f"group chat run {run_id!r} is {state.status}; only unfinished runs resume")
    numbers = {"round": state.round, "elapsed": state.elapsed, "usage.input_tokens": state.usage.input_tokens,
               "usage.output_tokens": state.usage.output_tokens, "usage.calls": state.usage.calls}
    try:
        bad = next((f"{k} is {v}" for k, v in numbers.items() if v < 0), None)
        state.counters = check_counters(state.counters)
    except ValueError as exc:
        bad = str(exc)
    asked = state.interrupt
    if bad is None and asked is not None and (type(asked.index) is not int or asked.index < 0
                                              or not isinstance(asked.speaker, str)):
        bad = f"its interrupt has index {asked.index!r} and speaker {asked.speaker!r}"
    if bad is None and state.run_id != run_id:  # another chat's state (its counts sealed for its own id) copied in
        bad = (f"it holds the state of run {state.run_id!r}, copied from another run (its counts are that run's; "
               "restore an intact copy of the store, or sign checkpoints with a checkpoint_key)")
    if bad is not None:
        raise CheckpointError(f"checkpoint {found[0]} of group chat run {run_id!r} is damaged or was edited: {bad}; "
                              "the chat is not continued", run_id=run_id, step=found[0])
    try:  # the tool-budget and usage counts each turn's message shows (counters dropped from a store reset none)
        for m in state.messages:
            raise_counters(state.counters, m.metadata.get("counts"), f"the counts of message {m.seq}")
    except ValueError as exc:
        raise CheckpointError(f"checkpoint {found[0]} of group chat run {run_id!r} is damaged or was edited: {exc}; "
                              "the chat is not continued", run_id=run_id, step=found[0]) from None
    state.round = max([state.round, *(m.round for m in state.messages)])
    shown, spent = Usage(), 0.0
    for m in state.messages:
        usage, took = m.metadata.get("usage"), m.metadata.get("duration")
        if isinstance(usage, dict):
            shown = shown + Usage(**{k: v for k, v in usage.items() if k in _USAGE and _count(v)})
        spent += took if isinstance(took, (int, float)) and not isinstance(took, bool) and took > 0 else 0.0
    state.usage = Usage(**{k: max(getattr(state.usage, k), getattr(shown, k)) for k in _USAGE})
    _raise_usage_counts(state)
    state.elapsed = max(state.elapsed, spent)
    state.status = "running"
    state.checkpoint = max(state.checkpoint, found[0])  # new checkpoints go after the latest one
    return state


_USAGE = ("input_tokens", "output_tokens", "calls")


def _raise_usage_counts(state: ChatState) -> None:
    """The ``usage_limits`` counts (``USAGE_COUNTS``) raised to the usage the chat shows (its model requests and
    tokens): counters dropped from an unsigned checkpoint reset no limit."""
    from zagent.agentkit.runkeys import USAGE_COUNTS

    usage = state.usage
    floor = {"requests": usage.calls, "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
             "total_tokens": usage.input_tokens + usage.output_tokens}
    counts = dict(state.counters.get(USAGE_COUNTS) or {})
    for name, n in floor.items():
        if n > counts.get(name, 0):
            counts[name] = n
    if any(counts.values()):
        state.counters[USAGE_COUNTS] = counts


def counts_now(state: ChatState) -> dict[str, Any]:
    """What a chat's checkpoint seals: its round, usage, elapsed time and tool-budget counts (its ``usage_limits``
    counts are raised to the usage, as from the transcript)."""
    from zagent.agentkit.runkeys import BUDGET_COUNTS

    usage = state.usage
    return {"round": state.round, "usage": [usage.input_tokens, usage.output_tokens, usage.calls],
            "elapsed": state.elapsed, "counters": {k: v for k, v in state.counters.items() if k == BUDGET_COUNTS}}


def raise_to_sealed(kernel: "Kernel", state: ChatState, step: int, required: bool, store: Any,
                    kept: Any = ()) -> None:
    """The resumed chat's counts raised to the sealed ones, and to ``kept`` (the counts the store's other steps
    sealed: ``countseal.akept_seals``); ``required`` (an unsigned store): a seal missing or not this user's for this
    run of ``store`` is a ``CheckpointError`` (``zagent.agentkit.countseal``)."""
    from zagent.errors import CheckpointError
    from zagent.agentkit.countseal import sealed_counts
    from zagent.agentkit.counters import raise_counters

    saved = sealed_counts(kernel, state.run_id, "groupchat", state.counted, step, required=required, store=store)
    try:
        for record in ([saved] if saved is not None else []) + list(kept):
            i, o, c = record["usage"]
            state.round = max(state.round, record["round"])
            state.elapsed = max(state.elapsed, record["elapsed"])
            state.usage = Usage(input_tokens=max(state.usage.input_tokens, i),
                                output_tokens=max(state.usage.output_tokens, o), calls=max(state.usage.calls, c))
            raise_counters(state.counters, record["counters"], "the sealed counts")
        _raise_usage_counts(state)
    except (KeyError, TypeError, ValueError) as exc:  # sealed by this user, in another shape: a bug, not an edit
        raise CheckpointError(f"checkpoint {step} of group chat run {state.run_id!r}: its sealed counts are not "
                              f"readable ({exc}); the chat is not continued", run_id=state.run_id, step=step) from None


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
