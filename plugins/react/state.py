"""The ReAct loop's data: ``Decision``, ``StepResult`` and the serializable ``ReActState``.

``ReActState`` is all a run needs to continue in another process (conversation, steps, the tool batch in flight
and its finished results, calls awaiting a human, settings, stash). It is checkpointed after every step and
finished tool call, as patches between whole saves (``ReActStepLog``).
"""

from __future__ import annotations

from typing import Any, Literal, Optional

import msgspec

from zagent.agentkit.steplog import StepLog as _StepLog
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


class ReActState(msgspec.Struct, kw_only=True, omit_defaults=True):
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
    """Approval keys (``zagent.agentkit.approvals``) of calls a human approved in this process; a restored
    run starts with none (a checkpoint cannot approve a call)."""
    call_keys: dict[str, str] = {}
    """The id zagent minted for each call of the batch in flight, by the model's call id."""
    approval_keys: dict[str, str] = {}
    """The approval key of each call awaiting a human, by call id: what ``resume(approve=[id])`` approves."""
    held_tools: dict[str, str] = {}
    """The identity of the tool each call awaiting a human was asked about (``approvals.tool_identity``), by call id: a
    restore where another tool has the name asks again."""
    held_seals: dict[str, str] = {}
    """Each held call bound to the run (``seals.seal_held``), by call id: a restored call edited since asks again."""
    reasoning: str = ""
    feedback: str = ""
    usage: Usage = Usage()
    final: Optional[str] = None
    questions: list[str] = []
    error: Optional[str] = None
    checkpoint: int = 0
    counted: dict[str, Any] = {}
    """The counts (checkpoint, step, usage, the rails' counts) when saved, sealed (``seals.seal_counts``): a restore
    from an unsigned store needs them intact and never lowers a count below them."""
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


state_decoder = msgspec.json.Decoder(ReActState)

_GROWING = ("messages", "steps", "archived")
_FIXED = ("run_id", "agent", "task", "agent_config")  # set when a run starts: in full saves only
_MAPS = ("finished", "held_tools", "held_seals")  # added to: a patch carries the new keys only (nothing, most steps)
_SMALL = tuple(f for f in ReActState.__struct_fields__ if f not in (*_GROWING, *_FIXED, *_MAPS))


class ReActStepLog(_StepLog):
    """The step log of a ReAct run (``zagent.agentkit.steplog``): messages, steps and archived messages are
    appended to, finished results and held tools added, the other fields small; ids and settings are in full saves
    only."""

    def __init__(self) -> None:
        super().__init__(lists=_GROWING, maps=_MAPS, small=_SMALL)
