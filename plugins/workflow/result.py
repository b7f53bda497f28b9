"""What a workflow run returns and checkpoints: ``WorkFlowResult``, ``TraceEntry``, ``RunState``. ``step_log()`` is a
run's checkpoint log (a patch per node, the whole state now and then: docs/workflows.md, "Checkpoints");
``checked`` refuses a damaged or edited checkpoint (``CheckpointError``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import attrs
import msgspec
from zagent.agentkit.interrupts import Interrupt
from zagent.agentkit.signing import aread_latest, signer_of
from zagent.agentkit.steplog import StepLog
from zagent.types import Usage

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


class TraceEntry(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One settled node: ``done``, ``failed`` or ``skipped`` (with why), and what it produced.

    ``attempts`` counts tries (retries included); ``route`` is what its router chose;
    ``iteration`` counts passes through a loop (0 for the first). A node that asked a person
    (``zagent.interrupt``) has an entry ``paused`` with its ``question``, and once done the
    ``answers`` it was given, in order.
    """

    node: str
    status: str
    agents: list[str] = []
    attempts: int = 0
    outputs: dict[str, Any] = {}
    error: Optional[str] = None
    route: Optional[list[str]] = None
    iteration: int = 0
    started: float = 0.0
    duration: float = 0.0
    question: Any = None
    answers: list[Any] = []
    counts: dict[str, dict[str, int]] = {}
    """The run's tool-budget and usage counts when the node settled (``zagent.agentkit.runkeys``): a restore raises
    the counters to the highest the trace shows, so counters dropped from a store reset no limit."""


class RunState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A run's checkpoint: enough to resume without re-running finished nodes."""

    run_id: str
    workflow: str
    values: dict[str, Any] = {}
    done: dict[str, dict[str, Any]] = {}
    routes: dict[str, list[str]] = {}
    loops: dict[str, int] = {}
    trace: list[TraceEntry] = []
    status: str = "running"
    counters: dict[str, Any] = {}
    """The run's shared per-run counters (tool budgets: ``zagent.agentkit.counters``), so a resumed run keeps them."""
    answers: dict[str, list[Any]] = {}
    """Per unfinished node, the answers given to its interrupts so far (in order; data only)."""
    interrupts: dict[str, Interrupt] = {}
    """Per node paused at an interrupt, the question it waits on (the run is ``paused``)."""
    counted: dict[str, Any] = {}
    """The loop counts and rails' counts when saved, sealed (``zagent.agentkit.countseal``): a resume from an
    unsigned store needs them intact and never lowers a count below them."""


_encode = msgspec.json.Encoder(enc_hook=repr).encode  # values JSON cannot hold are saved as their repr


def step_log(kernel: Optional["Kernel"] = None) -> StepLog:
    """A new checkpoint log for one run (its first checkpoint is a full save), signed with ``kernel``'s key."""
    return StepLog(lists=("trace",), tracked=("values", "done", "routes", "loops", "answers", "interrupts"),
                   small=("status", "counters", "counted"), encode=_encode, signer=signer_of(kernel) if kernel is not None else None)


async def load_checked(store: Any, kernel: "Kernel", run_id: str) -> Optional[tuple[int, RunState]]:
    """The latest checkpoint of ``run_id`` (its signatures checked with ``kernel``'s key), decoded and checked."""
    found = await aread_latest(store, run_id, signer_of(kernel))
    if not found:
        return None
    try:
        state = msgspec.json.decode(found[1], type=RunState)
    except (msgspec.DecodeError, RecursionError) as exc:  # a wrong shape, or nested past msgspec's limit
        from zagent.errors import CheckpointError

        raise CheckpointError(f"checkpoint {found[0]} of workflow run {run_id!r} is not a workflow run state "
                              f"({str(exc)[:200]}); it is damaged or was edited, so the run is not resumed. Start "
                              "a new run", run_id=run_id, step=found[0]) from None
    if state.run_id != run_id:  # another run's state under this id: its counts and seals are its own
        from zagent.errors import CheckpointError

        raise CheckpointError(
            f"checkpoint {found[0]} of workflow run {run_id!r} holds the state of run {state.run_id!r} (copied from "
            "another run: its counts and approvals are not this run's); the run is not resumed. Start a new run, or "
            "sign checkpoints (Kernel(config={'checkpoint_key': ...}))", run_id=run_id, step=found[0])
    state = checked(state, found[0])
    _raise_to_sealed(kernel, state, found[0], signer_of(kernel) is None, store)
    if signer_of(kernel) is None:  # and to the counts the store's other steps sealed (an earlier state moved up)
        from zagent.agentkit.countseal import akept_seals

        for saved in await akept_seals(kernel, store, run_id, "workflow", found[0]):
            _raise_to(state, saved, found[0])
    return found[0], state


def sealed(kernel: "Kernel", state: RunState, store: Any) -> RunState:
    """``state`` with its counts now sealed (``counted``) for its run in ``store``, as it is checkpointed."""
    from zagent.agentkit.countseal import seal_counts
    from zagent.agentkit.counters import rail_counts_of

    state.counted = seal_counts(kernel, state.run_id, "workflow",
                                {"loops": state.loops, "counters": rail_counts_of(state.counters)}, store=store)
    return state


def _raise_to_sealed(kernel: "Kernel", state: RunState, step: int, required: bool, store: Any) -> None:
    """The resumed run's loop counts and counters raised to the sealed ones; ``required`` (an unsigned store): a
    seal missing or not this user's for this run of ``store`` is a ``CheckpointError`` (``countseal``)."""
    from zagent.agentkit.countseal import sealed_counts

    saved = sealed_counts(kernel, state.run_id, "workflow", state.counted, step, required=required, store=store)
    if saved is not None:
        _raise_to(state, saved, step)


def _raise_to(state: RunState, saved: dict[str, Any], step: int) -> None:
    """``state``'s loop counts and counters raised to ``saved`` (counts this user sealed for the run)."""
    from zagent.errors import CheckpointError
    from zagent.agentkit.counters import check_counts, raise_counters

    try:
        for key, n in check_counts(saved["loops"], "the sealed loop counts").items():
            state.loops[key] = max(state.loops.get(key, 0), n)
        raise_counters(state.counters, saved["counters"], "the sealed counts")
    except (KeyError, TypeError, ValueError) as exc:  # sealed by this user, in another shape: a bug, not an edit
        raise CheckpointError(f"checkpoint {step} of workflow run {state.run_id!r}: its sealed counts are not "
                              f"readable ({exc}); the run is not resumed", run_id=state.run_id, step=step) from None


@attrs.frozen(repr=False)
class WorkFlowResult:
    """The end of a run.

    :ivar status: ``finished``, ``paused`` (nodes wait on a person: ``interrupts``) or ``failed``.
    :ivar outputs: values produced by the last nodes (those with no successor that ran).
    :ivar values: every value by name: workflow inputs, node outputs, state fields.
    :ivar trace: one ``TraceEntry`` per settled node (and per loop pass), in settling order.
    :ivar errors: ``{node: message}`` of failed nodes.
    :ivar resumed: nodes restored from a checkpoint instead of being run.
    :ivar usage: tokens the run's agents spent (in this process's run; a resumed run counts only its own).
    :ivar interrupts: the questions the run is paused on, one per waiting node (answer them with
        ``WorkFlowExecutor.aresume(run_id, graph=graph, answer=...)``).
    """

    run_id: str
    status: str
    outputs: dict[str, Any]
    values: dict[str, Any]
    trace: list[TraceEntry]
    errors: dict[str, str] = attrs.field(factory=dict)
    resumed: list[str] = attrs.field(factory=list)
    usage: Usage = attrs.field(factory=Usage)
    interrupts: list[Interrupt] = attrs.field(factory=list)

    @property
    def paused(self) -> bool:
        return self.status == "paused"

    @property
    def ok(self) -> bool:
        return self.status == "finished"

    def node_status(self, node: str) -> Optional[str]:
        """The last recorded status of ``node`` (``None`` if it never settled)."""
        for entry in reversed(self.trace):
            if entry.node == node:
                return entry.status
        return None

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def __repr__(self) -> str:
        return f"<WorkFlowResult {self.run_id} {self.status} outputs={sorted(self.outputs)}>"


def checked(state: RunState, step: int) -> RunState:
    """A saved run checked before it resumes (a checkpoint carries no policy): loop counts and counters are
    whole numbers >= 0 (``CheckpointError`` naming the step otherwise), and each loop count is at least the
    passes the trace shows (an entry whose route is one loop target), so ``max_loops`` cannot be reset."""
    from zagent.errors import CheckpointError
    from zagent.agentkit.counters import check_counters, check_counts

    try:
        state.loops = check_counts(state.loops, "loop counts")
        state.counters = check_counters(state.counters)
        for node, asked in state.interrupts.items():
            if type(asked.index) is not int or asked.index < 0:
                raise ValueError(f"the interrupt of node {node!r} has index {asked.index!r}")
            state.interrupts[node] = msgspec.structs.replace(asked, node=node, speaker=None, round=None)
    except ValueError as exc:
        raise CheckpointError(f"checkpoint {step} of workflow run {state.run_id!r} is damaged or was edited: {exc}; "
                              "the run is not resumed", run_id=state.run_id, step=step) from None
    shown: dict[str, int] = {}
    for entry in state.trace:  # a forward route of one target counts too: a key no loop reads, harmless
        if entry.status == "done" and entry.route and len(entry.route) == 1:
            key = f"{entry.node}->{entry.route[0]}"
            shown[key] = shown.get(key, 0) + 1
    for key, n in shown.items():
        state.loops[key] = max(state.loops.get(key, 0), n)
    _raise_counters(state, step)
    return state


def _raise_counters(state: RunState, step: int) -> None:
    """The run's counters raised to the highest counts its trace entries show (``TraceEntry.counts``); a node in
    ``done`` needs its trace entry (dropping both would reset what that node spent): ``CheckpointError`` otherwise."""
    from zagent.errors import CheckpointError
    from zagent.agentkit.counters import raise_counters

    settled = {e.node for e in state.trace if e.status == "done"}
    missing = sorted(n for n in state.done if n not in settled)
    try:
        if missing:
            raise ValueError(f"node(s) {', '.join(map(repr, missing))} are done but the trace has no entry for them")
        for i, entry in enumerate(state.trace):
            raise_counters(state.counters, entry.counts, f"the counts of trace entry #{i}")
    except ValueError as exc:
        raise CheckpointError(f"checkpoint {step} of workflow run {state.run_id!r} is damaged or was edited: {exc}; "
                              "the run is not resumed (sign checkpoints: checkpoint_key)", run_id=state.run_id,
                              step=step) from None
