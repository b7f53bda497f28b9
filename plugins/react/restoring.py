"""Restoring a ReAct run: read the saved state, then check it, as a checkpoint carries no policy
(docs/security.md#11-checkpoints-carry-no-policy): settings come from ``agent_config=`` (else a signed
checkpoint's, else refused), approvals and transient stash keys are dropped, counts are checked and raised (to
the sealed ones too). A bad count, signature or seal is a ``CheckpointError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import msgspec
from zagent.providerkit import new_call_id
from zagent.agentkit.approvals import approval_key, tool_identity, vetted_arguments
from zagent.agentkit.runkeys import BUDGET_COUNTS, USAGE_COUNTS
from zagent.agentkit.signing import read_latest, signer_of
from zagent.errors import CheckpointError, ConfigError
from zagent.agentkit.counters import check_counts

from .seals import held_intact, newest_sealed, raise_to_sealed
from .state import ReActState, state_decoder

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

__all__ = ["TRANSIENT", "restored"]

#: stash names read as transient per-run state, never saved by a run (``to_state`` values only are): a
#: checkpoint naming them was edited. The runkeys, the LLM cost so far, the spec rails' token count, the
#: skills plugin's chosen skill.
TRANSIENT = frozenset({"zagent.approved", "zagent.pending_approval", "zagent.pending_keys", "zagent.call_keys",
                       "zagent.cost_usd", "output_tokens", "zagent.skills", "zagent.runshare"})


def restored(kernel: "Kernel", state: Any, config: dict[str, Any],
             checked: Optional[dict[str, tuple[Any, Any]]] = None) -> ReActState:
    """The state to continue, read from ``state`` (see ``ReActLoop.restore``) and checked; fills ``config``'s
    ``agent`` and ``agent_config`` defaults, and ``checked`` with the tool (and handler) each call still awaiting a
    person was checked against (its approval covers that object only: ``runkeys.HELD_TOOLS``)."""
    store = config.get("checkpoints")
    where, verified, at, wanted = "the state given", False, None, None
    if isinstance(state, str) and store is not None and not state.endswith(".json"):
        signer, wanted = signer_of(kernel), state
        found = read_latest(store, state, signer)
        if found is None:
            raise ConfigError(f"no checkpoint for run {state!r} in {store!r}")
        where, state, verified = f"the last checkpoint of run {state!r}", found[1], signer is not None
        at = found[0]
    elif isinstance(state, str):
        try:
            from zagent.agentkit.files import read_bounded

            where, state = f"state file {state!r}", read_bounded(state, "the run state file")
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the run state file {state!r}: {exc}") from None
    if isinstance(state, (bytes, bytearray)):
        try:
            state = state_decoder.decode(state)
        except (msgspec.DecodeError, RecursionError) as exc:
            raise ConfigError(f"{where} is not a ReAct run state ({exc}); it is damaged or of another kind")
    if not isinstance(state, ReActState):
        raise ConfigError("restore a ReActState, its JSON bytes, a file path or a run id, "
                          f"got {type(state).__name__}")
    if wanted is not None and state.run_id != wanted:  # another run's state under this id: its seals are its own
        raise CheckpointError(
            f"checkpoint {at} of run {wanted!r} holds the state of run {state.run_id!r} (copied from another run: its "
            "counts, held calls and approvals are that run's); the run is not restored. Restore an intact copy of the "
            "store, or sign checkpoints (Kernel(config={'checkpoint_key': ...}))", run_id=wanted, step=at or 0)
    if state.status in ("completed", "aborted"):
        raise ConfigError(f"run {state.run_id} is {state.status}; only running, paused or failed runs resume")
    state.status = "running"
    state.stash = {k: v for k, v in state.stash.items() if k not in TRANSIENT}
    check_counts_of(state, state.checkpoint if at is None else at)
    # an unsigned store's counts as sealed when saved (a signed one's signature covers them already)
    raise_to_sealed(kernel, state, state.checkpoint if at is None else at, at is not None and not verified, store)
    if at is not None and not verified:  # the other steps the store keeps: none sealed later than this one
        newest_sealed(kernel, store, state, at)
    held = forget_approvals(state, state.checkpoint if at is None else at, kernel, store)
    if checked is not None:
        checked.update(held)
    state.checkpoint = max(state.checkpoint, at or 0)  # new checkpoints go after the latest one
    config.setdefault("agent", state.agent or "react")
    if config.get("agent_config") is None:
        if not verified:
            raise ConfigError(
                f"run {state.run_id!r}: {where} is not signed, so its saved agent settings (rails: deny_tools, "
                "tool budgets, approval...) cannot be trusted and are not used. Pass the agent's settings: "
                "ReActLoop.restore(..., agent_config=agent.run_config()) (agent_config={} for none), or set "
                "Kernel(config={'checkpoint_key': ...}) so signed checkpoints keep theirs")
        config["agent_config"] = dict(state.agent_config)
    return state


def check_counts_of(state: ReActState, step: int) -> None:
    """Counts >= 0 (else ``CheckpointError`` naming checkpoint ``step``), raised to what the saved steps show."""

    def bad(what: str) -> CheckpointError:
        return CheckpointError(f"checkpoint {step} of run {state.run_id!r} is damaged or was edited: {what}; "
                               "the run is not restored", run_id=state.run_id, step=step)

    numbers = {"step": state.step, "checkpoint": state.checkpoint, "usage.input_tokens": state.usage.input_tokens,
               "usage.output_tokens": state.usage.output_tokens, "usage.calls": state.usage.calls}
    for name, n in numbers.items():
        if n < 0:
            raise bad(f"{name} is {n}")
    shown: dict[str, int] = {}
    for s in state.steps:
        if s.tool and not s.is_blocked and not s.is_error:
            shown[s.tool] = shown.get(s.tool, 0) + 1
    state.step = max([state.step, *(s.step for s in state.steps)])
    _raise_usage(state, shown, bad)
    saved = state.stash.get(BUDGET_COUNTS)
    if saved is None and not shown:
        return
    try:
        counts = check_counts(saved if saved is not None else {}, f"the tool budget counts ({BUDGET_COUNTS!r})")
    except ValueError as exc:
        raise bad(str(exc)) from None
    for tool, n in shown.items():
        counts[tool] = max(counts.get(tool, 0), n)
    state.stash[BUDGET_COUNTS] = counts


def _raise_usage(state: ReActState, shown: dict[str, int], bad: Any) -> None:
    """The ``usage_limits`` counts (``USAGE_COUNTS``) raised to what the state shows: a model request per step, a
    tool call per call that ran, the tokens of ``usage``; dropping them from the stash resets no limit."""
    try:
        counts = check_counts(state.stash.get(USAGE_COUNTS) or {}, f"the usage limit counts ({USAGE_COUNTS!r})")
    except ValueError as exc:
        raise bad(str(exc)) from None
    usage = state.usage
    floor = {"requests": state.step, "tool_calls": sum(shown.values()), "input_tokens": usage.input_tokens,
             "output_tokens": usage.output_tokens, "total_tokens": usage.input_tokens + usage.output_tokens}
    for name, n in floor.items():
        if n > counts.get(name, 0):
            counts[name] = n
    if any(counts.values()):
        state.stash[USAGE_COUNTS] = counts


def forget_approvals(state: ReActState, step: int, kernel: "Kernel", store: Any) -> dict[str, tuple[Any, Any]]:
    """No approval survives a restore; every pending call gets a fresh minted id (never the file's: two calls
    given one would share an approval), and only calls awaiting a human with an approval key, about the tool now
    under the name, and sealed as they are (``seals``) still wait for one (the others are asked again), under a key
    made from the call itself as the rail sees it (an edited key could name another call). Two pending calls under
    one id (a batch the loop never writes) are a ``CheckpointError``. Returns the tool (and handler) of each call
    still waiting."""
    seen: set[str] = set()
    for call in state.pending:
        if call.id in seen:
            raise CheckpointError(
                f"checkpoint {step} of run {state.run_id!r} is damaged or was edited: two pending tool calls have "
                f"the id {call.id!r} (an approval or a result of that id would cover both); the run is not "
                "restored", run_id=state.run_id, step=step)
        seen.add(call.id)
    state.approved = []
    state.call_keys = {c.id: new_call_id() for c in state.pending}
    waiting = set(state.awaiting_approval)
    tools = {c.id: kernel.find("tools", c.name) for c in state.pending if c.id in waiting}
    # the tool it was asked about (another one under the name: asked again), the call held (not edited since) in
    # this run of this store (``store``: the one restored into; a run of the same id elsewhere: asked again)
    same = {c.id for c in state.pending
            if c.id in tools and state.held_tools.get(c.id) == tool_identity(tools[c.id])
            and held_intact(kernel, state, c, state.held_tools[c.id], store)}
    state.approval_keys = {c.id: approval_key(state.call_keys[c.id], c.name,
                                              vetted_arguments(kernel, c.name, c.arguments))
                           for c in state.pending if c.id in waiting and c.id in state.approval_keys and c.id in same}
    state.held_tools = {i: state.held_tools[i] for i in state.approval_keys}
    state.held_seals = {i: state.held_seals[i] for i in state.approval_keys}
    state.awaiting_approval = [i for i in dict.fromkeys(state.awaiting_approval) if i in state.approval_keys]
    return {i: (tools[i], getattr(tools[i], "handler", None)) for i in state.approval_keys}
