"""``RunCore``: the state of one workflow run (never shared between runs, never ``None`` inside it), built whole
when the run is made (from its checkpoint on a resume), and the run driver's hooks (``zagent.agentkit.lifecycle``:
checkpoints, events, endings)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Optional

from zagent.agentkit.interrupts import Interrupt
from zagent.agentkit.lifecycle import RunDriver
from zagent.agentkit.signing import signer_of
from zagent.errors import ConfigError
from zagent.types import Usage

from .graph import WorkFlowGraph, WorkFlowNode, resolve_callable
from .result import RunState, TraceEntry, WorkFlowResult, step_log
from .routing import initial_state, reducer_for
from .topology import Topology

if TYPE_CHECKING:  # pragma: no cover
    from .executor import WorkFlowExecutor


class RunCore(RunDriver[RunState, WorkFlowResult]):
    """The state of one run, from ``saved`` when it resumes; one checkpoint save at a time, bytes taken before it.

    :param agents: the agent names per node (registered with the executor's manager).
    :param units: the executor node runs go to (``kernel.executor(...)``).
    :param deps: the app's objects the agents' tools read as ``ctx.deps`` (never checkpointed).
    """

    kind = "workflow"

    def __init__(self, ex: WorkFlowExecutor, graph: WorkFlowGraph, topo: Topology, agents: dict[str, list[str]],
                 run_id: str, inputs: dict[str, Any], saved: Optional[RunState], units: Any, deps: Any = None):
        self.units = units
        self.ex, self.graph, self.topo, self.agents, self.run_id = ex, graph, topo, agents, run_id
        self.kernel, self.state = ex.kernel, None  # the run's state is this object (never None inside it)
        self._ctx = ex.kernel.context(run_id=run_id)  # its events' context
        self.share = self._ctx.shared  # the counters nodes share
        self.run_status = "running"
        self.nodes: dict[str, WorkFlowNode] = {n.name: n for n in graph.nodes}
        self.reducers = {s.name: reducer_for(s, self.kernel) for s in graph.state}
        self.routers = {c.source: (c, resolve_callable(c.router, f"router of {c.source!r}", self.kernel))
                        for c in graph.conditional_edges}
        self.values: dict[str, Any] = {**initial_state(graph.state), **inputs}
        self.done: dict[str, dict[str, Any]] = {}
        self.routes: dict[str, list[str]] = {}
        self.loops: dict[str, int] = {}
        self.trace: list[TraceEntry] = []
        self.answers: dict[str, list[Any]] = {}  # per unfinished node: the answers to its interrupts so far
        self.interrupts: dict[str, Interrupt] = {}  # per node paused at an interrupt: its question
        self.given = False  # answers came with this resume: checkpointed before any node runs
        #: per node, the positions of the answers this process gave; ``None``: every answer counts (a run never
        #: read back from a store, or one the kernel's checkpoint key verified). An unsigned store may have
        #: been edited, so a "yes" only it holds never approves a tool call (``Asking.vouches``).
        self.vouched: Optional[dict[str, dict[int, Any]]] = None  # {node: {position: the question answered}}
        self.usage = Usage()  # tokens spent by this process's run (not by runs it resumes)
        self.resumed: list[str] = []
        if saved is not None:
            self._restore(saved, inputs)
        self.node_status: dict[str, str] = {n: "pending" for n in topo.names}
        self.remaining = {n: len(topo.preds[n]) for n in topo.names}
        self.led: dict[str, set[str]] = {n: set() for n in topo.names}
        self.settled: set[tuple[str, str]] = set()
        self.errors: dict[str, str] = {}
        self.failures: dict[str, BaseException] = {}
        self.tasks: dict[asyncio.Task[None], str] = {}
        self.idle = asyncio.Event()  # set when the last node task ends
        self.sem = asyncio.Semaphore(ex.max_concurrency)
        self.events = self.kernel.has_impls("zagent_event")
        self.step = len(self.trace)
        self._log = step_log(self.kernel)
        self._init_driver()
        self._save_lock = asyncio.Lock()
        self.stopping = False
        self._halted = None  # a checkpoint write failed: the run stops
        self.deps = deps
        self.queue: list[str] = []
        self.background: list[Any] = []
        self.passes: dict[str, int] = {}  # completed passes per node (loops run nodes again)
        self.spent: dict[str, set[str]] = {}  # per node: approvals that ran their call (a retry asks anew)
        for entry in self.trace:
            if entry.status == "done":
                self.passes[entry.node] = self.passes.get(entry.node, 0) + 1

    def _restore(self, saved: RunState, inputs: dict[str, Any]) -> None:
        unknown = [n for n in saved.done if n not in self.nodes]
        if saved.workflow != self.graph.name or unknown:
            raise ConfigError(f"run {self.run_id!r} was saved for workflow {saved.workflow!r} "
                              f"(nodes {', '.join(saved.done)}); it cannot resume {self.graph.name!r}")
        self.values = {**saved.values, **{k: v for k, v in inputs.items() if k not in saved.values}}
        self.done, self.routes, self.loops = dict(saved.done), dict(saved.routes), dict(saved.loops)
        self.trace, self.resumed = list(saved.trace), list(saved.done)
        self.answers, self.interrupts = {k: list(v) for k, v in saved.answers.items()}, dict(saved.interrupts)
        self.share.restore(saved.counters)  # adopted by the counters on first use, never lowering them
        if self.ex.checkpoints is not None and signer_of(self.kernel) is None:
            self.vouched = {}

    def give(self, given: dict[str, Any]) -> None:
        """Record the answers a resume brought (``{node: answer}``, each to its node's pending interrupt);
        every pending question is cleared: the nodes ask again (or go on) when they run."""
        for node, answer in given.items():
            asked = self.interrupts[node]
            self.answers[node] = [*self.answers.get(node, [])[: asked.index], answer]
            if self.vouched is not None:
                self.vouched.setdefault(node, {})[asked.index] = asked.question  # approves only what was asked
            self._log.touch("answers", node)
            self.given = True
        for node in list(self.interrupts):
            del self.interrupts[node]
            self._log.touch("interrupts", node)

    # -- the run driver's hooks (``zagent.agentkit.lifecycle``: checkpoints, events, endings) ---------

    def _set_status(self, status: str) -> None:
        self.run_status = status

    def _checkpoint_store(self) -> Any:
        return self.ex.checkpoints

    def _checkpoint_payload(self) -> tuple[str, int, Any, dict[str, Any]]:
        from .result import sealed

        self.step += 1
        return self.run_id, self.step, sealed(self.kernel, self._state(self.run_status), self.ex.checkpoints), {
            "workflow": self.graph.name, "status": self.run_status}

    def _resume_hint(self) -> str:
        return f"WorkFlowExecutor(..., checkpoints=store).resume({self.run_id!r}, graph=graph)"

    def counts(self) -> dict[str, dict[str, int]]:
        """The run's tool-budget and usage counts now, for a trace entry (``TraceEntry.counts``)."""
        from zagent.agentkit.counters import rail_counts

        return rail_counts(self.share)

    def masked(self, exc: BaseException) -> BaseException:
        """``exc`` (a node's failure) masked in place with the secrets of the kernel's config and the run's deps as
        well as the environment's: the app's agent may quote its token. Failure paths only."""
        from zagent.agentkit.secrets import config_masker, mask_exception

        mask_exception(exc, config_masker((self.kernel.config, self.deps)))
        return exc

    def _state(self, status: str) -> RunState:
        return RunState(run_id=self.run_id, workflow=self.graph.name, values=self.values, done=self.done,
                        routes=self.routes, loops=self.loops, trace=self.trace, status=status,
                        counters=self.share.to_state(), answers=self.answers, interrupts=self.interrupts)


def short(exc: BaseException, limit: int = 300) -> str:
    """``Type: message`` of ``exc``, cut to ``limit`` characters (for traces, events and errors)."""
    from zagent.agentkit.secrets import env_masker

    text = env_masker()(f"{type(exc).__name__}: {exc}")  # a library's message may quote a key or a URL password
    return text if len(text) <= limit else text[: limit - 3] + "..."
