"""``WorkFlowExecutor``: runs a ``WorkFlowGraph``, each node as soon as it can, at most ``max_concurrency`` at once,
and resumes a checkpointed run (``arun(..., run_id=)``, ``resume(run_id, graph=, answer=)``). A run with a failed node
raises ``WorkFlowFailed`` carrying its ``WorkFlowResult``; a checkpoint that cannot be written, ``CheckpointError``.
The rules: docs/workflows.md."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import attrs
from zagent.agentkit.interrupts import as_data
from zagent.agentkit.lifecycle import NO_ANSWER, Resumable, no_approvals
from zagent.agentkit.streaming import Streaming
from zagent.agentkit.runs import new_run_id
from zagent.errors import ConfigError
from zagent.agentkit.inputs import check_inputs
from zagent import run_sync

from .errors import WorkFlowError
from .graph import WorkFlowGraph, loaded_from
from .naming import check_inline
from .result import RunState, WorkFlowResult, load_checked
from .run import WorkFlowRun
from .topology import Topology

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

POLICIES = ("fail_fast", "continue")


@attrs.define(repr=False, eq=False, kw_only=True)
class WorkFlowExecutor(Streaming, Resumable[WorkFlowResult]):
    """Runs workflow graphs on one kernel (the rules: docs/workflows.md).

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
        """Run ``graph`` with ``inputs`` (resuming ``run_id`` if it was checkpointed); see docs/workflows.md.
        ``deps`` (else the executor's) reach the nodes' agents and tools as ``ctx.deps``."""
        found = await self._load(run_id) if run_id else None
        return await self._start(graph, inputs, run_id, found, {}, deps)

    async def _aresume_run(self, run_id: str, answer: Any, approve: list[str], deny: list[str], deps: Any,
                           options: dict[str, Any]) -> WorkFlowResult:
        """``resume(run_id, graph=graph, answer=...)``: continue run ``run_id`` of ``graph``; given the person's
        ``answer`` (or ``answers={node: answer}`` when several nodes wait), it is recorded in the checkpoint
        first, then the paused nodes run again and their ``zagent.interrupt`` calls get the answers in order.
        Without one, an unfinished run that waits on no question goes on. A run that is not checkpointed (an
        unknown id), or not paused at an interrupt when an answer is given, is a ``ConfigError`` saying so. Deps
        are never checkpointed: a resumed run gets ``deps`` (else the executor's) again."""
        no_approvals("WorkFlowExecutor", approve, deny)
        graph, answers = options.pop("graph", None), options.pop("answers", None)
        if not isinstance(graph, WorkFlowGraph) or options:
            raise ConfigError("resume a workflow run as executor.resume(run_id, graph=graph, answer=...)"
                              + (f"; unknown option(s) {', '.join(map(repr, options))}" if options else ""))
        found = await self._load(run_id, warn=False)
        if found is None:
            where = f"the store {self.checkpoints!r}" if self.checkpoints is not None else \
                "this executor (it has no checkpoints store: pass checkpoints=... to resume in another process)"
            raise ConfigError(f"no run {run_id!r} in {where}; check the run id (zagent memory list --checkpoints "
                              "lists the checkpointed runs)")
        asking = answer is not NO_ANSWER or answers is not None or bool(found[1].interrupts)
        given = pick_answers(found[1], answer, answers) if asking else {}
        return await self._start(graph, None, run_id, found, given, deps)

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
        from zagent.speckit import current_spec_file, spec_file

        source = loaded_from(graph)  # WorkFlowGraph.load: inline agents take the file's identity, as in the CLI,
        with spec_file(source if source is not None and current_spec_file() is None else None):  # on workers too
            return await self._go(graph, topo, run_id, inputs, saved, found, given, deps)

    async def _go(self, graph: WorkFlowGraph, topo: Topology, run_id: Optional[str], inputs: Optional[dict[str, Any]],
                  saved: Optional[RunState], found: Optional[tuple[int, RunState]], given: dict[str, Any],
                  deps: Any) -> WorkFlowResult:
        agents = self._agents(graph)
        own = not hasattr(self.executor, "submit")
        units = self.kernel.executor(self.executor) if own else self.executor
        run = WorkFlowRun(self, graph, topo, agents, run_id or new_run_id(), dict(inputs or {}), saved, units,
                          deps if deps is not None else self.deps)
        run.step = max(run.step, found[0] if found else 0)  # new checkpoints go after the latest one
        run.give(given)
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
        from zagent.speckit.paths import reserving

        out: dict[str, list[str]] = {}
        problems: list[str] = []
        for node in graph.nodes:
            names: list[str] = []
            if node.kind == "interrupt":
                out[node.name] = names  # it asks its question: no agents
                continue
            for ref in node.agents:
                try:
                    check_inline(self.manager, ref, llm=self.llm)  # a spec named like a held agent must not gain its tools
                    with reserving({getattr(getattr(self.checkpoints, "db", None), "path", None):  # never its store
                                    "the checkpoint file of this workflow run"}):
                        names.append(self.manager.name_of(self.manager.add_agent(ref, llm=self.llm)))
                except ConfigError as exc:
                    problems.append(f"node {node.name!r}: {exc}")
            if not node.agents:
                problems.append(f"node {node.name!r} has no agents; generate them (WorkFlowGenerator) or list some")
            out[node.name] = names
        if problems:
            raise WorkFlowError("cannot run the workflow:\n- " + "\n- ".join(problems))
        return out


def pick_answers(state: RunState, answer: Any, answers: Optional[dict[str, Any]]) -> dict[str, Any]:
    """``{node: answer}`` for a resume of ``state``: ``answer`` for its one waiting node, or ``answers`` naming
    waiting nodes; each answer checked to be JSON data. ``ConfigError`` when the run waits on nothing or the
    answers do not fit the questions."""
    waiting = state.interrupts
    if not waiting:
        raise ConfigError(f"run {state.run_id!r} is {state.status}, not paused at an interrupt: there is no question "
                          "to answer (resume an unfinished run with arun(graph, inputs, run_id=...))")
    asked = "; ".join(a.describe() for a in waiting.values())
    if (answer is NO_ANSWER) == (answers is None):
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
