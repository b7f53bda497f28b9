"""``WorkFlowExecutor``: runs a ``WorkFlowGraph`` -- each node as soon as it can, in parallel (bounded).

Scheduling rules (decided here, also in the README):

* A node runs once every forward predecessor has settled (done, failed or
  skipped), if at least one of them ran and *led* to it -- a plain edge always
  leads, a conditional edge only where its router pointed -- and its required
  inputs exist. Nodes without predecessors start at once. A node that cannot run
  is *skipped* (and says why); its successors settle in turn.
* Values flow by name: a node's agents get the values named by its inputs (and
  by their own input fields); its outputs are written back by name. Writes to a
  ``state`` field go through that field's reducer.
* At most ``max_concurrency`` nodes run at once; an agent shared by nodes runs
  one node at a time (``AgentManager`` states).
* Each node is tried ``1 + retries`` times, except after a provider's error
  (``ProviderError``): that fails the node at once (the provider has already
  retried what was worth retrying; a 401 or a bad request fails the same way
  on every try), and after a ``RunStopped`` (a usage limit, a guardrail): that
  ends the whole run, whatever ``on_error`` says. ``on_error="fail_fast"`` cancels
  the other running nodes at the first failure; ``"continue"`` lets independent
  nodes finish (dependents of the failed node are skipped). Either way a run
  with a failed node raises ``WorkFlowFailed`` carrying the ``WorkFlowResult``.
* With ``checkpoints`` (a ``kernel.memory("checkpoints", ...)`` store or a path)
  the run state is saved after each node, one save at a time: as a patch (the
  trace entries, values, outputs and routes the node added, only the items it
  added to an ``append`` state field; ``result.step_log``)
  when the store takes patches, the whole state on a run's first checkpoint, at
  its end and now and then (a store without ``asave_patch`` gets every save
  whole). ``arun(..., run_id=ID)`` with the id of an earlier run resumes it
  without re-running finished nodes. A checkpoint write that fails stops the
  run (it fails closed): no node starts, the running ones are cancelled,
  nothing more is written and ``arun`` raises ``zagent.errors.CheckpointError``
  (the store's error as its cause); the store keeps the run as of its last
  checkpoint that landed, and resumes from it once the store works again.
  A node whose own inner run (a checkpointed agent) raises ``CheckpointError``
  stops the workflow the same way, without retrying the node or marking it
  failed: the node stays unfinished in the workflow's checkpoint, so a resume
  runs it again (as after a crash: its agent starts over, unless it restores
  its own run).
* Loops: when a router picks a loop target, the nodes on the loop are reset and
  run again (at most ``max_loops`` times). Nodes *outside* a loop that read
  values of nodes inside it run after its first pass.
* Where nodes run: each node run is a ``zagent.agentkit.units.Unit`` handed to
  ``executor`` (a name or an executor; default ``local``: this loop, as
  always). A remote executor (e.g. ``ray``) gets the node, its agents' specs
  and the values it reads, while the node's agents stay locked here; values,
  routing, retries and checkpoints stay with this driver, so a lost worker
  costs a retried node (up to ``LOST_RETRIES`` times), never the run.
  Agents given as Python objects (functions, instances without a spec) can
  only run on ``local``.
* Interrupts: a node's agent or tool calling ``zagent.interrupt(question)``
  (or a node of kind ``interrupt``) with no answer yet pauses that node: it is
  not retried, its successors wait, independent nodes run on, and the run ends
  ``paused`` with ``result.interrupts`` (checkpointed; without a store the
  executor keeps the paused run in memory). ``aresume(graph, run_id,
  answer=...)`` (``answers={node: ...}`` when several nodes wait) records the
  answer in the checkpoint, then runs the paused node again from its start:
  its interrupts get the answers in order (``zagent.agentkit.interrupts``).
  Finished nodes are not run again.
* Events (``kernel.aemit``, tagged with the run id): ``workflow_start``,
  ``node_start``, ``node_retry``, ``node_end`` (status done/failed/skipped/paused,
  with the ``question`` of a paused one), ``workflow_loop``, ``workflow_end``.

Built on the manager plugin (agents are looked up and locked through an
``AgentManager``); it is imported when a run starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any, Optional

import attrs
import msgspec
from zagent.agentkit.interrupts import Asking, Interrupt, as_data, asking
from zagent.agentkit.streaming import Streaming
from zagent._runs.context import interrupt, new_run_id
from zagent.errors import CheckpointError, ConfigError, Interrupted, ProviderError, RunStopped
from zagent.agentkit.units import Unit, UnitLost
from zagent._trust.limits import check_inputs
from zagent._runs.sync import run_sync
from zagent.types import Usage

from .calls import call_step, node_outputs, node_payload
from .errors import WorkFlowError, WorkFlowFailed
from .graph import WorkFlowGraph, resolve_callable
from .result import RunState, TraceEntry, WorkFlowResult, load_checked, step_log
from .routing import append as append_reducer, choose, initial_state, reduce_outputs, reducer_for
from .topology import Topology

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

POLICIES = ("fail_fast", "continue")
NODE_RUNNER = "zagent.plugins.workflow.units:run_node"
LOST_RETRIES = 2  # extra runs of a node whose remote worker was lost (on top of the node's own retries)
_NO_ANSWER: Any = object()


@attrs.define(repr=False, eq=False, kw_only=True)
class WorkFlowExecutor(Streaming):
    """Runs workflow graphs on one kernel (see the module docstring).

    :param manager: the ``AgentManager`` to find agents in (a new one when ``None``).
    :param llm: an LLM (instance or ``"provider:model"``) given to agents built from specs in the graph.
    :param max_concurrency: nodes running at once.
    :param retries: extra tries of a failing node (a node's own ``retries`` wins).
    :param on_error: ``"fail_fast"`` or ``"continue"``.
    :param checkpoints: a checkpoint store or a path for ``kernel.memory("checkpoints", path=...)``.
    :param agent_timeout: seconds to wait for a busy agent (``None``: no limit).
    :param validate: check the graph before running it.
    :param executor: where node runs go: an executor name (``kernel.executor(name)``) or an executor object.
    :param deps: the app's typed dependencies every node's agents and tools see as ``ctx.deps``
        (``RunContext[Deps]``) unless an agent has its own; ``arun(..., deps=)`` gives a run its own.
    """

    kernel: "Kernel"
    manager: Any = None
    llm: Any = None
    max_concurrency: int = 8
    retries: int = 0
    on_error: str = "fail_fast"
    checkpoints: Any = None
    agent_timeout: Optional[float] = None
    validate: bool = True
    executor: Any = None
    deps: Any = None
    _paused: dict[str, tuple[int, RunState]] = attrs.field(factory=dict, init=False)  # paused, no store: kept here

    def __attrs_post_init__(self) -> None:
        if self.on_error not in POLICIES:
            raise ConfigError(f"on_error must be one of {', '.join(POLICIES)}, got {self.on_error!r}")
        if self.max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be at least 1, got {self.max_concurrency}")
        if self.manager is None:
            from zagent.plugins.manager import AgentManager

            self.manager = AgentManager(kernel=self.kernel)
        if self.checkpoints is not None and not hasattr(self.checkpoints, "asave"):
            self.checkpoints = self.kernel.memory("checkpoints", path=self.checkpoints)
        if isinstance(self.llm, str):
            self.llm = self.kernel.llm(self.llm)

    async def arun(self, graph: WorkFlowGraph, inputs: Optional[dict[str, Any]] = None, *,
                   run_id: Optional[str] = None, deps: Any = None) -> WorkFlowResult:
        """Run ``graph`` with ``inputs`` (resuming ``run_id`` if it was checkpointed); see the module docstring.
        ``deps`` (else the executor's) reach the nodes' agents and tools as ``ctx.deps``."""
        found = await self._load(run_id) if run_id else None
        return await self._start(graph, inputs, run_id, found, {}, deps)

    async def aresume(self, graph: WorkFlowGraph, run_id: str, *, answer: Any = _NO_ANSWER,
                      answers: Optional[dict[str, Any]] = None, deps: Any = None) -> WorkFlowResult:
        """Continue run ``run_id`` of ``graph``, paused at an interrupt, with the person's ``answer`` (or
        ``answers={node: answer}`` when several nodes wait): recorded in the checkpoint first, then the paused
        nodes run again and their ``zagent.interrupt`` calls get the answers in order. A run that is not
        checkpointed (an unknown id) or not paused at an interrupt is a ``ConfigError`` saying so. Deps are never
        checkpointed: a resumed run gets ``deps`` (else the executor's) again."""
        found = await self._load(run_id, warn=False)
        if found is None:
            where = f"the store {self.checkpoints!r}" if self.checkpoints is not None else \
                "this executor (it has no checkpoints store: pass checkpoints=... to resume in another process)"
            raise ConfigError(f"no run {run_id!r} in {where}; check the run id (zagent memory list --checkpoints "
                              "lists the checkpointed runs)")
        given = pick_answers(found[1], answer, answers)
        return await self._start(graph, None, run_id, found, given, deps)

    def resume(self, graph: WorkFlowGraph, run_id: str, *, answer: Any = _NO_ANSWER,
               answers: Optional[dict[str, Any]] = None, deps: Any = None) -> WorkFlowResult:
        """Sync twin of ``aresume``."""
        return run_sync(self.aresume(graph, run_id, answer=answer, answers=answers, deps=deps))

    async def _start(self, graph: WorkFlowGraph, inputs: Optional[dict[str, Any]], run_id: Optional[str],
                     found: Optional[tuple[int, RunState]], given: dict[str, Any], deps: Any = None) -> WorkFlowResult:
        check_inputs(inputs or {}, "workflow input")
        topo = Topology(graph)
        if self.validate:
            graph.validate()
        missing = [f.name for f in graph.inputs if f.required and f.default is None and (inputs or {}).get(f.name) is None]
        saved = found[1] if found else None
        if missing and saved is None:
            raise ConfigError(f"workflow {graph.name!r} needs input(s) {', '.join(missing)}; pass them as inputs")
        agents = self._agents(graph)
        own = not hasattr(self.executor, "submit")
        units = self.kernel.executor(self.executor) if own else self.executor
        run = _Run(self, graph, topo, agents, run_id or new_run_id(), dict(inputs or {}), saved, units)
        run.step = max(run.step, found[0] if found else 0)  # new checkpoints go after the latest one
        run.give(given)
        run.deps = deps if deps is not None else self.deps
        if run.deps is not None and not units.in_process:
            if own:
                await units.aclose()
            raise ConfigError(f"workflow {graph.name!r}: deps are this process's objects and cannot reach nodes on "
                              f"the {getattr(units, 'name', type(units).__name__)!r} executor; run it on 'local', "
                              "or let the workers' tools build what they need")
        try:
            return await run.go()
        finally:
            if own:
                await units.aclose()

    def run(self, graph: WorkFlowGraph, inputs: Optional[dict[str, Any]] = None, *,
            run_id: Optional[str] = None, deps: Any = None) -> WorkFlowResult:
        """Sync twin of ``arun``."""
        return run_sync(self.arun(graph, inputs, run_id=run_id, deps=deps))

    async def _load(self, run_id: str, warn: bool = True) -> Optional[tuple[int, RunState]]:
        if self.checkpoints is None:
            kept = self._paused.get(run_id)
            if kept is not None or not warn:
                return kept
            import logging

            logging.getLogger("zagent.workflow").warning(
                "run_id %r given but this executor has no checkpoints store, so there is nothing to resume: "
                "starting a new run with that id (pass checkpoints=... to resume runs)", run_id)
            return None
        return await load_checked(self.checkpoints, self.kernel, run_id)

    def _agents(self, graph: WorkFlowGraph) -> dict[str, list[str]]:
        """Agent names per node, registering inline specs and objects with the manager."""
        out: dict[str, list[str]] = {}
        problems: list[str] = []
        for node in graph.nodes:
            names = []
            if node.kind == "interrupt":
                out[node.name] = names  # it asks its question: no agents
                continue
            for ref in node.agents:
                try:
                    names.append(self.manager.name_of(self.manager.add_agent(ref, llm=self.llm)))
                except ConfigError as exc:
                    problems.append(f"node {node.name!r}: {exc}")
            if not node.agents:
                problems.append(f"node {node.name!r} has no agents; generate them (WorkFlowGenerator) or list some")
            out[node.name] = names
        if problems:
            raise WorkFlowError("cannot run the workflow:\n- " + "\n- ".join(problems))
        return out


class _Run:
    """The state of one run (never shared between runs)."""

    def __init__(self, ex: WorkFlowExecutor, graph: WorkFlowGraph, topo: Topology, agents: dict[str, list[str]],
                 run_id: str, inputs: dict[str, Any], saved: Optional[RunState], units: Any):
        self.units = units
        self.ex, self.graph, self.topo, self.agents, self.run_id = ex, graph, topo, agents, run_id
        self.kernel, self.share = ex.kernel, ex.kernel.context(run_id=run_id).shared  # the counters nodes share
        self.nodes = {n.name: n for n in graph.nodes}
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
        self.usage = Usage()  # tokens spent by this process's run (not by runs it resumes)
        self.resumed: list[str] = []
        if saved is not None:
            self._restore(saved, inputs)
        self.status = {n: "pending" for n in topo.names}
        self.remaining = {n: len(topo.preds[n]) for n in topo.names}
        self.led: dict[str, set[str]] = {n: set() for n in topo.names}
        self.settled: set[tuple[str, str]] = set()
        self.errors: dict[str, str] = {}
        self.failures: dict[str, BaseException] = {}
        self.tasks: dict[asyncio.Task, str] = {}
        self.sem = asyncio.Semaphore(ex.max_concurrency)
        self.events = self.kernel.has_impls("zagent_event")
        self.step = len(self.trace)
        self.log = step_log(self.kernel)
        self.save_lock = asyncio.Lock()
        self.stopping = False
        self.halted: Optional[CheckpointError] = None  # a checkpoint write failed: the run stops
        self.deps: Any = None  # the app's objects the agents' tools read as ctx.deps (never checkpointed)
        self.queue: list[str] = []
        self.background: list[Any] = []
        self.passes: dict[str, int] = {}  # completed passes per node (loops run nodes again)
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

    def give(self, given: dict[str, Any]) -> None:
        """Record the answers a resume brought (``{node: answer}``, each to its node's pending interrupt);
        every pending question is cleared: the nodes ask again (or go on) when they run."""
        for node, answer in given.items():
            asked = self.interrupts[node]
            self.answers[node] = [*self.answers.get(node, [])[: asked.index], answer]
            self.log.touch("answers", node)
            self.given = True
        for node in list(self.interrupts):
            del self.interrupts[node]
            self.log.touch("interrupts", node)

    # -- driving ------------------------------------------------------------------

    async def go(self) -> WorkFlowResult:
        self.idle = asyncio.Event()
        await self._emit("workflow_start", workflow=self.graph.name, nodes=len(self.nodes), resumed=self.resumed)
        if self.given:  # the answers are in the store before anything else happens
            await self._checkpoint("running")
        for name in self.topo.order:
            if name in self.done:
                self.status[name] = "done"
                self._settle(name, True)
            elif not self.topo.preds[name]:
                self.led[name].add("")
                self.queue.append(name)
        self._pump()
        if self.tasks:
            await self.idle.wait()
        if self.halted is not None:  # every node task has ended (the others were cancelled)
            await self._halted_end(self.halted)
            raise self.halted
        return await self._finish()

    async def _finish(self) -> WorkFlowResult:
        status = "failed" if self.errors else "paused" if self.interrupts else "finished"
        outputs = {k: v for n in self.topo.names if n in self.done and not self._leads_on(n)
                   for k, v in self.done[n].items()}
        asked = [self.interrupts[n] for n in self.topo.order if n in self.interrupts]
        result = WorkFlowResult(run_id=self.run_id, status=status, outputs=outputs, values=dict(self.values),
                                trace=list(self.trace), errors=dict(self.errors), resumed=self.resumed,
                                usage=self.usage, interrupts=asked)
        if self.background:
            await asyncio.gather(*self.background)
        try:
            await self._checkpoint(status)
        except CheckpointError as exc:
            await self._halted_end(exc)
            raise
        if self.ex.checkpoints is None:  # resumable from this executor only
            if asked:
                self.ex._paused[self.run_id] = (0, self._state(status))
            else:
                self.ex._paused.pop(self.run_id, None)
        extra = {"outcome": "paused", "questions": [a.describe() for a in asked]} if status == "paused" else {}
        await self._emit("workflow_end", status=status, errors=sorted(self.errors), **extra)
        if self.errors:
            lines = "; ".join(f"{n}: {e}" for n, e in self.errors.items())
            cause = next(iter(self.failures.values()), None)  # e.g. the provider's AuthenticationError
            raise WorkFlowFailed(f"workflow {self.graph.name!r} run {self.run_id} failed: {lines}", result=result,
                                 causes=self.failures) from cause
        return result

    def _leads_on(self, name: str) -> bool:
        return any(self.status.get(s) == "done" for s in self.topo.succs[name])

    def _pump(self) -> None:
        """Start or skip every node whose predecessors have all settled (a loop, not recursion)."""
        while self.queue:
            self._ready(self.queue.pop())

    def _ready(self, name: str) -> None:
        """All predecessors settled: start the node, or skip it (and settle its successors)."""
        if self.status[name] != "pending" or self.stopping:
            return
        if not self.led[name]:
            return self._skip(name, "no predecessor led to it (a branch not taken or a failed node)")
        node = self.nodes[name]
        missing = [i for i in node.required_inputs if self.values.get(i) is None]
        if missing:
            return self._skip(name, f"missing input(s) {', '.join(missing)}")
        self.status[name] = "running"
        task = asyncio.ensure_future(self._node_task(name))
        self.tasks[task] = name
        task.add_done_callback(self._task_done)  # also runs for a task cancelled before it started

    def _task_done(self, task: "asyncio.Task") -> None:
        self.tasks.pop(task, None)
        if not self.tasks:
            self.idle.set()

    def _skip(self, name: str, why: str) -> None:
        self.status[name] = "skipped"
        self.trace.append(TraceEntry(node=name, status="skipped", error=why))
        if self.events:
            self.background.append(asyncio.ensure_future(
                self._emit("node_end", node=name, status="skipped", reason=why)))
        self._settle(name, False)

    def _settle(self, name: str, ran: bool) -> None:
        chosen = self.routes.get(name)
        for succ in self.topo.succs[name]:
            edge = (name, succ)
            if edge in self.settled:
                continue
            self.settled.add(edge)
            if ran and (not self.topo.preds[succ][name] or (chosen is not None and succ in chosen)):
                self.led[succ].add(name)
            self.remaining[succ] -= 1
            if self.remaining[succ] == 0:
                self.queue.append(succ)

    # -- one node -------------------------------------------------------------------

    async def _node_task(self, name: str) -> None:
        started = time.time()
        try:
            try:
                outputs, attempts = await self._attempts(name)
                route, loop = self._route(name, outputs)
                merged = reduce_outputs(self.reducers, self.values, outputs, name)  # no await until it is applied
            except Interrupted as exc:  # it asks a person: paused, not failed (its successors wait)
                await self._paused_at(name, exc.interrupt, started)
                return
            except CheckpointError as exc:  # an inner run's checkpoint failed and it stopped: so does the run
                self._halt(exc)  # (the node stays unfinished in our checkpoint: a resume runs it again)
                return
            except Exception as exc:
                await self._failed(name, exc, started)
            else:
                await self._finished(name, outputs, merged, attempts, route, loop, started)
        except CheckpointError as exc:  # the node's own errors were handled above: this is its checkpoint's
            self._halt(exc)

    def _halt(self, exc: CheckpointError) -> None:
        """A checkpoint write failed: stop the run (it fails closed). No node starts, the running ones are
        cancelled (``go`` waits for them, then raises ``exc``) and nothing more is written, so the store keeps
        the run as of its last checkpoint that landed, to resume from."""
        if self.halted is None:
            self.halted = exc
        self.stopping = True
        for task, other in list(self.tasks.items()):
            if task is not asyncio.current_task() and not task.done():
                task.cancel()
                self.status[other] = "cancelled"

    async def _halted_end(self, exc: CheckpointError) -> None:
        if self.background:
            await asyncio.gather(*self.background)
        await self._emit("workflow_end", status="failed", errors=sorted(self.errors), error=_short(exc, 500))

    async def _attempts(self, name: str) -> tuple[dict[str, Any], int]:
        node = self.nodes[name]
        tries = 1 + (node.retries if node.retries is not None else self.ex.retries)
        async with self.sem:
            for attempt in range(1, tries + 1):
                await self._emit("node_start", node=name, attempt=attempt)
                try:
                    return await self._run_node(name), attempt
                except Exception as exc:
                    if attempt == tries or isinstance(exc, (ProviderError, CheckpointError, RunStopped, Interrupted)):
                        raise  # a provider's error was already retried by its own policy; a checkpoint's or
                        # a usage limit's (any RunStopped: it ends the whole run) is not the node's to retry, and
                        # an interrupt pauses the node
                    await self._emit("node_retry", node=name, attempt=attempt, error=_short(exc))
        raise AssertionError("unreachable")  # pragma: no cover

    async def _run_node(self, name: str) -> dict[str, Any]:
        """Hand one node run to the executor: in process as is, elsewhere with the node's agents locked here."""
        key = f"{self.run_id}/{name}"
        if self.units.in_process or self.nodes[name].kind == "interrupt":
            return await self.units.submit(Unit(key=key, local=lambda: self._call_agents(name)))
        async with contextlib.AsyncExitStack() as held:
            agents = {n: await held.enter_async_context(self.ex.manager.ausing(n, timeout=self.ex.agent_timeout))
                      for n in sorted(set(self.agents[name]))}  # one order everywhere: no lock cycles
            unit = Unit(key=key, local=lambda: _unreachable(key), runner=NODE_RUNNER,
                        payload=lambda: node_payload(self.nodes[name], self.agents[name], agents, self.values,
                                                     self.run_id, self.answers.get(name, [])))
            for lost in range(LOST_RETRIES + 1):  # a lost worker is not the node's failure: run it again
                try:
                    result = await self.units.submit(unit)
                    break
                except UnitLost as exc:
                    if lost == LOST_RETRIES:
                        raise
                    await self._emit("node_retry", node=name, attempt=lost + 1, error=_short(exc))
        if not isinstance(result, dict) or not isinstance(result.get("outputs"), dict):
            raise WorkFlowError(f"node {name!r}: the executor returned {type(result).__name__}, not "
                                "{'outputs': {...}, 'usage': {...}}")
        self.usage = self.usage + msgspec.convert(result.get("usage") or {}, Usage)
        if result.get("interrupt") is not None:  # the worker's node asked a person (data from another process)
            asked = msgspec.convert(result["interrupt"], Interrupt)
            asked = msgspec.structs.replace(asked, question=as_data(asked.question, "a worker's question"),
                                            node=name, speaker=None, round=None)
            raise Interrupted(asked.describe(), interrupt=asked)
        return result["outputs"]

    async def _call_agents(self, name: str) -> dict[str, Any]:
        node = self.nodes[name]
        produced: dict[str, Any] = {}
        with asking(Asking(self.answers.get(name, ()), node=name)) as scope:
            try:
                if node.kind == "interrupt":
                    return {node.output_names[0]: interrupt(ask_text(node, self.values))}
                for agent_name in self.agents[name]:
                    async with self.ex.manager.ausing(agent_name, timeout=self.ex.agent_timeout) as agent:
                        self.usage = self.usage + await call_step(agent, agent_name, node, self.values, produced,
                                                                  self.kernel, self.run_id, self.share, self.deps)
            finally:
                if scope.asked is not None:  # asked, even if an agent caught the exception: the node pauses
                    raise Interrupted(scope.asked.describe(), interrupt=scope.asked)
        return node_outputs(node, produced)

    def _route(self, name: str, outputs: dict[str, Any]) -> tuple[Optional[list[str]], Optional[str]]:
        """The router's choice after ``name`` ran: ``(forward targets, loop target or None)``."""
        found = self.routers.get(name)
        if found is None:
            return None, None
        edge, router = found
        picked = choose(edge, router, {**self.values, **outputs})
        loops = [t for t in picked if (name, t) in self.topo.loops]
        if not loops:
            return picked, None
        if len(picked) > 1:
            raise WorkFlowError(f"router of {name!r} chose {picked}: a loop target cannot be combined with others")
        key = f"{name}->{loops[0]}"
        if self.loops.get(key, 0) >= edge.max_loops:
            if edge.on_max_loops is None:
                raise WorkFlowError(f"loop {key} reached max_loops={edge.max_loops}; raise it or set on_max_loops")
            return [edge.on_max_loops], None
        return None, loops[0]

    async def _finished(self, name: str, outputs: dict[str, Any], merged: dict[str, Any], attempts: int,
                        route: Optional[list[str]], loop: Optional[str], started: float) -> None:
        for key, new in merged.items():
            old = self.values.get(key)
            self.values[key] = new
            if self.reducers.get(key) is append_reducer:  # a new list holding old's items first: the patch carries the items added
                self.log.grew("values", key, old, new)
            else:
                self.log.touch("values", key)
        iteration = self.passes.get(name, 0)
        self.passes[name] = iteration + 1
        answers = self.answers.pop(name, [])
        if answers:
            self.log.touch("answers", name)  # used: a later pass (a loop) asks afresh
        self.trace.append(TraceEntry(node=name, status="done", agents=self.agents[name], attempts=attempts,
                                     outputs=outputs, route=route if loop is None else [loop], iteration=iteration,
                                     started=started, duration=time.time() - started, answers=answers))
        if loop is not None:
            self._restart_loop(name, loop)
            await self._checkpoint("running")
            await self._emit("workflow_loop", node=name, target=loop, iteration=self.loops[f"{name}->{loop}"])
            self.queue.append(loop)
            self._pump()
            return
        self.status[name] = "done"
        self.done[name] = outputs
        self.log.touch("done", name)
        if route is not None:
            self.routes[name] = route
            self.log.touch("routes", name)
        await self._checkpoint("running")
        await self._emit("node_end", node=name, status="done", attempts=attempts, outputs=sorted(outputs))
        self._settle(name, True)
        self._pump()

    def _restart_loop(self, source: str, target: str) -> None:
        key = f"{source}->{target}"
        self.loops[key] = self.loops.get(key, 0) + 1
        self.log.touch("loops", key)
        body = self.topo.loop_body(source, target)
        inside = set(body)
        for n in body:
            self.status[n] = "pending"
            for field, saved in (("done", self.done), ("routes", self.routes)):
                if n in saved:
                    del saved[n]
                    self.log.touch(field, n)
            self.led[n] = {p for p in self.led[n] if p not in inside}
            self.remaining[n] = sum(1 for p in self.topo.preds[n] if p in inside)
            self.settled -= {(n, s) for s in self.topo.succs[n] if s in inside}
        self.led[target].add(source)

    async def _paused_at(self, name: str, asked: Interrupt, started: float) -> None:
        """``name`` asked a person: it waits (not settled: its successors wait too), the run goes on."""
        self.status[name] = "paused"
        self.interrupts[name] = asked
        self.log.touch("interrupts", name)
        self.trace.append(TraceEntry(node=name, status="paused", agents=self.agents[name], question=asked.question,
                                     started=started, duration=time.time() - started))
        await self._checkpoint("running")
        await self._emit("node_end", node=name, status="paused", outcome="paused", question=asked.question,
                         index=asked.index)

    async def _failed(self, name: str, exc: BaseException, started: float) -> None:
        self.status[name] = "failed"
        self.errors[name] = _short(exc, 500)
        self.failures[name] = exc
        self.trace.append(TraceEntry(node=name, status="failed", agents=self.agents[name], error=self.errors[name],
                                     started=started, duration=time.time() - started))
        stopped = isinstance(exc, RunStopped)  # a usage limit or guardrail ends the run whatever on_error says
        if self.ex.on_error == "fail_fast" or stopped:
            self.stopping = True
            for task, other in list(self.tasks.items()):
                if task is not asyncio.current_task() and not task.done():
                    task.cancel()
                    self.status[other] = "cancelled"
                    self.trace.append(TraceEntry(node=other, status="cancelled",
                                                 error=f"cancelled: {name!r} " + (
                                                     f"stopped the run ({type(exc).__name__})" if stopped
                                                     else "failed (fail_fast)")))
        await self._checkpoint("running")
        await self._emit("node_end", node=name, status="failed", error=self.errors[name])
        if not self.stopping:
            self._settle(name, False)
            self._pump()

    # -- side effects -----------------------------------------------------------------

    async def _checkpoint(self, status: str) -> None:
        """Save the run: the change since the last checkpoint when the store takes patches, else all of it.

        One save at a time (nodes finish concurrently), so each patch lands on the step before it; the
        bytes are taken before the write (which runs in a thread), so later changes go in the next one."""
        store = self.ex.checkpoints
        if store is None:
            return
        async with self.save_lock:
            if self.halted is not None:
                return  # a checkpoint failed: nothing is written after it (this node is being cancelled)
            self.step += 1
            state = self._state(status)
            await self.log.asave(store, self.run_id, self.step, state, kind="workflow",
                                 metadata={"workflow": self.graph.name, "status": status},
                                 resume=f"WorkFlowExecutor(..., checkpoints=store).arun(graph, inputs, "
                                        f"run_id={self.run_id!r})")

    def _state(self, status: str) -> RunState:
        return RunState(run_id=self.run_id, workflow=self.graph.name, values=self.values, done=self.done,
                        routes=self.routes, loops=self.loops, trace=self.trace, status=status,
                        counters=self.share.to_state(), answers=self.answers, interrupts=self.interrupts)

    async def _emit(self, type: str, **data: Any) -> None:
        if self.events:
            await self.kernel.aemit(type, run_id=self.run_id, agent=None, **data)


def _unreachable(key: str) -> Any:
    raise WorkFlowError(f"node run {key!r} was sent back to this process by a remote executor; "
                        "its agents are locked here for the remote run")


def pick_answers(state: RunState, answer: Any, answers: Optional[dict[str, Any]]) -> dict[str, Any]:
    """``{node: answer}`` for a resume of ``state``: ``answer`` for its one waiting node, or ``answers`` naming
    waiting nodes; each answer checked to be JSON data. ``ConfigError`` when the run waits on nothing or the
    answers do not fit the questions."""
    waiting = state.interrupts
    if not waiting:
        raise ConfigError(f"run {state.run_id!r} is {state.status}, not paused at an interrupt: there is no question "
                          "to answer (resume an unfinished run with arun(graph, inputs, run_id=...))")
    asked = "; ".join(a.describe() for a in waiting.values())
    if (answer is _NO_ANSWER) == (answers is None):
        raise ConfigError(f"give either answer=... or answers={{node: ...}} to resume run {state.run_id!r} ({asked})")
    if answers is None:
        if len(waiting) > 1:
            raise ConfigError(f"run {state.run_id!r} waits on {len(waiting)} nodes ({asked}); answer them by node: "
                              "answers={node: answer, ...}")
        answers = {next(iter(waiting)): answer}
    unknown = [n for n in answers if n not in waiting]
    if unknown:
        raise ConfigError(f"run {state.run_id!r} has no question waiting at node(s) {', '.join(map(repr, unknown))}; "
                          f"it waits on: {asked}")
    return {n: as_data(a, f"the answer for node {n!r}") for n, a in answers.items()}


def ask_text(node: Any, values: dict[str, Any]) -> str:
    """The fixed question of an ``interrupt`` node, ``{name}`` replaced by its input ``name``'s value."""
    import re

    names = set(node.input_names)

    def value(m: "re.Match[str]") -> str:
        found = values.get(m.group(1))
        if m.group(1) not in names or found is None:
            return m.group(0)
        return found if isinstance(found, str) else msgspec.json.encode(found, enc_hook=repr).decode()

    return re.sub(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", value, node.question)


def _short(exc: BaseException, limit: int = 300) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= limit else text[: limit - 3] + "..."
