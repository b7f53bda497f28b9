"""The ReAct loop's data: ``Decision``, ``StepResult`` and the serializable ``RunState``.

``RunState`` holds everything needed to continue a run in another process:
the conversation, the step results, the tool calls of the batch in flight
(``pending``), their finished results (``finished``, so a resumed run never
runs a finished call again) and the calls waiting for a human
(``awaiting_approval``), the agent's settings and the plugins' per-run state
(``agent_config``, ``stash``), and what compression summarised (``archived``).
It is checkpointed after every step and after every finished tool call:
``StepLog`` turns each checkpoint into a patch (the messages and steps added,
the finished results added, the small fields as they are now), with the whole
state saved again on the first checkpoint of a loop, on any status but
``running``, when compression replaced the messages, and whenever the patches
since the last full save add up to its size. Writing stays proportional to what
a step added (a full save's cost is paid for by the patches before it), and a
restore reads at most about twice the state.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

import msgspec

from zagent.types import Message, ToolCall, ToolResult, Usage

Status = Literal["running", "paused", "completed", "aborted", "failed"]
ActionKind = Literal["use_tool", "direct_response", "ask_clarification"]


class Decision(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What the model decided in one step."""

    action: ActionKind
    reasoning: str = ""
    calls: list[ToolCall] = []
    content: str = ""
    questions: list[str] = []
    feedback: str = ""


class StepResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One recorded step: a tool call and its outcome, or the final answer/questions."""

    step: int
    action: ActionKind
    tool: Optional[str] = None
    call_id: Optional[str] = None
    parameters: dict[str, Any] = {}
    result: str = ""
    reasoning: str = ""
    is_error: bool = False
    is_blocked: bool = False
    reason: str = ""
    duration: float = 0.0


class RunState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A run's whole state; ``msgspec.json.encode(state)`` is its checkpoint."""

    run_id: str
    agent: str = ""
    status: Status = "running"
    step: int = 0
    messages: list[Message] = []
    steps: list[StepResult] = []
    pending: list[ToolCall] = []
    finished: dict[str, ToolResult] = {}
    awaiting_approval: list[str] = []
    approved: list[str] = []
    reasoning: str = ""
    feedback: str = ""
    usage: Usage = Usage()
    final: Optional[str] = None
    questions: list[str] = []
    error: Optional[str] = None
    checkpoint: int = 0
    task: str = ""
    """The user's request that started the run (tool retrieval ranks against it)."""
    agent_config: dict[str, Any] = {}
    """The run's agent settings (rails...) as plain data, secrets and callables left out; a
    restored run uses them unless it is given its own."""
    stash: dict[str, Any] = {}
    """Per-run plugin state that must survive a restore (e.g. the rails' tool-budget counts): the
    ``to_state()`` of every ``ctx.stash`` value that has one. After a restore the plain data sits
    in ``ctx.stash`` under the same key, and its plugin rebuilds its object from it."""
    archived: list[Message] = []
    """Messages that context compression replaced by a summary, kept for the trajectory."""


state_decoder = msgspec.json.Decoder(RunState)

_GROWING = ("messages", "steps", "archived")
_FIXED = ("run_id", "agent", "task", "agent_config")  # set when a run starts: in full saves only
_SMALL = tuple(f for f in RunState.__struct_fields__ if f not in (*_GROWING, *_FIXED, "finished"))
_encoder = msgspec.json.Encoder()


class StepLog:
    """What the last checkpoint of a run held, so the next one can be written as a patch on it."""

    __slots__ = ("step", "lists", "lengths", "finished", "finished_keys", "full_size", "since_full")

    def __init__(self) -> None:
        self.step: Optional[int] = None  # nothing saved by this loop yet: the next checkpoint is a full one

    def patch(self, state: RunState) -> Optional[bytes]:
        """``state`` as encoded patch bytes on the last checkpoint, or ``None`` when it must be saved whole."""
        if self.step is None or state.status != "running" or self.since_full >= self.full_size:
            return None
        extend, lengths = {}, {}
        for name, old, n in zip(_GROWING, self.lists, self.lengths):
            now = getattr(state, name)
            if now is not old or len(now) < n:
                return None  # replaced (compression) or shortened: not a pure append
            if len(now) > n:
                extend[name], lengths[name] = now[n:], n
        patch: dict[str, Any] = {"after": self.step, "set": {f: getattr(state, f) for f in _SMALL}}
        if extend:
            patch["extend"], patch["lengths"] = extend, lengths
        if state.finished is not self.finished:
            patch["set"]["finished"] = state.finished
        else:
            added = {k: v for k, v in state.finished.items() if k not in self.finished_keys}
            if added:
                patch["update"] = {"finished": added}
        return _encoder.encode(patch)

    def capture(self, state: RunState) -> tuple:
        """What ``state`` holds now; taken when its checkpoint is encoded, kept once that is written."""
        lists = tuple(getattr(state, name) for name in _GROWING)  # held, so `is` never matches a new list
        return (state.checkpoint, lists, tuple(len(lst) for lst in lists), state.finished, set(state.finished))

    def saved_full(self, captured: tuple, size: int) -> None:
        self.step, self.lists, self.lengths, self.finished, self.finished_keys = captured
        self.full_size, self.since_full = size, 0

    def saved_patch(self, captured: tuple, size: int) -> None:
        self.step, self.lists, self.lengths, self.finished, self.finished_keys = captured
        self.since_full += size
