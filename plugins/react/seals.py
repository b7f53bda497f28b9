"""Seals on what an unsigned ReAct checkpoint must not change (docs/security.md, 11): each call held for a person
(its id, tool, arguments as the rail sees them, the tool's identity) and the run's counts, bound to the run and its
store by ``signing.seal``. A restored call keeps waiting only with its seal; an unsigned store's run whose counts
seal is gone or wrong is refused (``agentkit.countseal``), else its counts never drop below the sealed ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from zagent.agentkit.approvals import vetted_arguments
from zagent.agentkit.counters import check_counts
from zagent.agentkit.runkeys import BUDGET_COUNTS, USAGE_COUNTS
from zagent.agentkit import countseal
from zagent.agentkit.signing import canonical, seal, sealed
from zagent.errors import CheckpointError
from zagent.types import Usage

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel, ToolCall

    from .state import ReActState

__all__ = ["claim_approval", "held_intact", "newest_sealed", "raise_to_sealed", "seal_counts", "seal_held"]

HELD, COUNTS = "react-held", "react"


def _held_data(kernel: "Kernel", step: int, call: "ToolCall", identity: str, nonce: str = "") -> bytes:
    # the step too: a held call (its seal) copied into a later batch of the run is not the call the person was asked
    # about there, so an ``approve=[id]`` sent again (a retried request) does not run it a second time
    held = [step, call.id, call.name, vetted_arguments(kernel, call.name, call.arguments), identity]
    return canonical([*held, nonce] if nonce else held)  # (without: a seal made before seals had names)


def seal_held(kernel: "Kernel", state: "ReActState", call: "ToolCall", identity: str, store: Any) -> None:
    """Seal ``call``, held for a person about the tool ``identity`` at the run's step, in ``state.held_seals``
    (``store``: the run's checkpoint store, or ``None``), under a random name of its own (``<name>.<mac>``): the
    record that its approval ran (``claim_approval``) is this hold's, not a later run's of the same id."""
    from zagent.providerkit import new_call_id

    nonce = new_call_id()[len("call_"):]
    state.held_seals[call.id] = nonce + "." + seal(
        kernel, state.run_id, HELD, _held_data(kernel, state.step, call, identity, nonce), store=store)


def held_intact(kernel: "Kernel", state: "ReActState", call: "ToolCall", identity: str, store: Any) -> bool:
    """Whether ``call`` (as restored) is the call sealed when it was held at this step of the run in ``store``,
    about the tool ``identity``: held in another store (a run of the same id there), it is asked about again."""
    found = state.held_seals.get(call.id)
    nonce, _, mac = found.rpartition(".") if isinstance(found, str) else ("", "", None)
    return sealed(kernel, state.run_id, HELD, _held_data(kernel, state.step, call, identity, nonce), mac, store=store)


def claim_approval(state: "ReActState", call: "ToolCall") -> bool:
    """Whether ``call`` may run now: not when it is a held call whose ``approve=`` ran it before (a rollback, another
    resume of that approval). An approved held call is recorded as spent (``agentkit.spent``, under its seal) as it
    starts, not when approved: an approval whose call did not start (the batch waits on another held call) is
    dropped with the run, never spent unrun."""
    from zagent.agentkit.spent import claim

    held = state.held_seals.get(call.id)
    key = state.approval_keys.get(call.id)
    if held is None or key is None or key not in state.approved:
        return True  # not a held call run on an approval (no seal: no approval key either)
    # looked up and recorded at once (two resumes sending one approve= together run the call once)
    return claim(f"react-approved#{held}")


def _counts(state: "ReActState") -> dict[str, Any]:
    usage = state.usage
    # the agent too: the run's name for the rails (its ``tool_rpm`` window), its events and the questions it asks
    return {"agent": state.agent, "checkpoint": state.checkpoint, "step": state.step,
            "usage": [usage.input_tokens, usage.output_tokens, usage.calls],
            "budget": state.stash.get(BUDGET_COUNTS) or {}, "limits": state.stash.get(USAGE_COUNTS) or {}}


def seal_counts(kernel: "Kernel", state: "ReActState", store: Any) -> None:
    """Keep the run's counts now, sealed for ``store``, in ``state.counted`` (before each checkpoint)."""
    state.counted = countseal.seal_counts(kernel, state.run_id, COUNTS, _counts(state), store=store)


def raise_to_sealed(kernel: "Kernel", state: "ReActState", step: int, required: bool, store: Any) -> None:
    """Raise the restored counts to the sealed ones (``step``: the checkpoint restored). ``required`` (a run read
    from an unsigned store): a seal missing, or not this user's for this run, is a ``CheckpointError``
    (``countseal.sealed_counts``); else (a state the restoring code gave) such a seal is ignored."""
    saved = countseal.sealed_counts(kernel, state.run_id, COUNTS, state.counted, step, required=required,
                                    store=store, trusted=(
        ", or restore its state yourself: ReActLoop.restore(kernel, store.latest(run_id)[1], checkpoints=store, "
        "agent_config=...)"))
    if saved is None:
        return
    if "agent" in saved and saved["agent"] != state.agent:  # (a seal made before the agent was sealed has none)
        raise CheckpointError(
            f"checkpoint {step} of run {state.run_id!r} names agent {state.agent!r}, but the run was saved as agent "
            f"{saved['agent']!r}: the unsigned store was edited (another agent's name puts the run in that agent's "
            "rate-limit window and its questions); the run is not restored. Restore an intact copy of the store, or "
            "sign checkpoints (Kernel(config={'checkpoint_key': ...}))", run_id=state.run_id, step=step)
    try:
        state.step = max(state.step, _whole(saved["step"]))
        i, o, c = (_whole(n) for n in saved["usage"])
        floors = {name: check_counts(saved[name], f"the sealed {name} counts") for name in ("budget", "limits")}
    except (KeyError, TypeError, ValueError) as exc:  # sealed by this user, in another shape: a bug, not an edit
        raise CheckpointError(f"checkpoint {step} of run {state.run_id!r}: its sealed counts are not readable "
                              f"({exc}); the run is not restored", run_id=state.run_id, step=step) from None
    usage = state.usage
    state.usage = Usage(input_tokens=max(usage.input_tokens, i), output_tokens=max(usage.output_tokens, o),
                        calls=max(usage.calls, c))
    for name, key in (("budget", BUDGET_COUNTS), ("limits", USAGE_COUNTS)):
        if floors[name]:
            have = check_counts(state.stash.get(key) or {}, f"the {name} counts")
            state.stash[key] = {**have, **{n: max(have.get(n, 0), v) for n, v in floors[name].items()}}


class _SealedOnly(msgspec.Struct):
    """The part of a saved ReAct state ``newest_sealed`` reads from the run's other steps."""

    counted: Any = None


def newest_sealed(kernel: "Kernel", store: Any, state: "ReActState", step: int) -> None:
    """Refuse ``state`` (the latest checkpoint ``step`` of an unsigned store) when another step the store keeps
    holds counts this user sealed for a later checkpoint: an earlier step's state (its seal valid) was written
    over the latest one, so that budgets and usage restart from then (``CheckpointError``)."""
    mine = countseal.sealed_counts(kernel, state.run_id, COUNTS, state.counted, step, required=False, store=store)
    at = mine.get("checkpoint") if mine else None
    if not isinstance(at, int) or not callable(getattr(store, "steps", None)) or not callable(getattr(store, "load", None)):
        return  # no sealed checkpoint to compare, or a store that gives only its latest step
    for other in store.steps(state.run_id):
        raw = store.load(state.run_id, other) if other != step else None
        try:
            counted = msgspec.json.decode(raw, type=_SealedOnly).counted if raw else None
        except (msgspec.DecodeError, RecursionError):
            continue  # a damaged older step sets no floor (the latest one is what resumes)
        theirs = countseal.sealed_counts(kernel, state.run_id, COUNTS, counted, other, required=False, store=store)
        later = theirs.get("checkpoint") if theirs else None
        if isinstance(later, int) and not isinstance(later, bool) and later > at:
            raise CheckpointError(
                f"checkpoint {step} of run {state.run_id!r} holds the counts sealed at checkpoint {at}, but "
                f"checkpoint {other} of the store holds the counts sealed later, at checkpoint {later}: an earlier "
                "state was written over the latest step (a rollback of the unsigned store, which would reset the "
                "run's budgets and usage). The run is not resumed; restore an intact copy of the store, or sign "
                "checkpoints (Kernel(config={'checkpoint_key': ...}))", run_id=state.run_id, step=step)


def _whole(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"{n!r} is not a whole number >= 0")
    return n
