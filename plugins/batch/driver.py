"""The batch driver behind ``Kernel.batch`` / ``Kernel.abatch``: ``abatch`` runs a target (an agent spec or file, an
agent, anything with ``batch_job(kernel)``) once per input, at most ``concurrency`` at once, on any executor. A
failing item is a result with ``ok: false`` and the batch goes on; with ``out`` it resumes from the records it made
(each names its maker and inputs: ``identity.py``; docs/batch.md)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Union, cast

import attrs
import msgspec

from .files import Item, ResultsFile, iter_items, read_items
from .identity import inputs_digest, job_identity
from zagent.errors import ConfigError
from zagent.agentkit.units import BatchJob as BatchJob  # the job builders' API (workflow graphs make them)
from zagent.agentkit.units import UnitFailed, UnitLost, shipped_trust, worker_agent
from zagent.agentkit.secrets import mask_env, public_data

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel
    import os

__all__ = ["AGENT_RUNNER", "BatchReport", "BatchJob", "Summary", "abatch", "agent_item", "make_job",
           "run_agent_item"]

AGENT_RUNNER = "zagent.plugins.batch.driver:run_agent_item"


class Summary(msgspec.Struct, kw_only=True):
    """Counts of one ``abatch`` call (``skipped``: already in ``out``; ``seconds``: wall time)."""

    total: int = 0
    done: int = 0
    failed: int = 0
    skipped: int = 0
    retried: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    executor: str = "local"
    interrupted: bool = False
    failures: dict[str, int] = {}
    """Failed items of this call by error type (``{"ProviderError": 3, "ConfigError": 1}``)."""
    batch_id: str = ""
    """This call's id: its items' runs carry it (``metadata["batch"]``; ``zagent logs list --batch ID``)."""
    made_by: str = ""
    """The identity of what each item ran (``identity.job_identity``): every result's ``made_by``."""

    @property
    def items_per_second(self) -> float:
        ran = self.done + self.failed
        return ran / self.seconds if self.seconds > 0 else 0.0

    def line(self) -> str:
        """One human line: ``done 998, failed 2, skipped 0; tokens 1234 in / 567 out; 3.2 s, 311.9 items/s``."""
        head = "interrupted" if self.interrupted else "finished"
        return (f"{head}: done {self.done}, failed {self.failed}, skipped {self.skipped} (already in the output)"
                f"{f', retried {self.retried}' if self.retried else ''}; tokens {self.input_tokens} in / "
                f"{self.output_tokens} out; {self.seconds:.1f} s, {self.items_per_second:.1f} items/s "
                f"(executor {self.executor}){self._by_type()}")

    def _by_type(self) -> str:
        if not self.failures:
            return ""
        kinds = sorted(self.failures.items(), key=lambda kv: (-kv[1], kv[0]))
        return "; failures: " + ", ".join(f"{name} {count}" for name, count in kinds)


@attrs.define(repr=False)
class BatchReport:
    """What ``abatch`` returns: the ``summary`` and, without ``out``, the ``results`` in input order."""

    summary: Summary
    results: list[dict[str, Any]]


async def abatch(kernel: "Kernel", target: Any, inputs: Union[Iterable[Any], str, Any], *,
                 out: Any = None, executor: Any = None, executor_options: Optional[dict[str, Any]] = None,
                 concurrency: Optional[int] = None, retries: int = 2, retry_failed: bool = False,
                 on_result: Optional[Callable[[dict[str, Any], Summary], None]] = None) -> BatchReport:
    """Run ``target`` once per input; see the module docstring and ``Kernel.abatch``."""
    from zagent.speckit.paths import reserving

    if retries < 0:
        raise ConfigError(f"retries must be 0 or more, got {retries}")
    from_file = isinstance(inputs, (str, bytes)) or hasattr(inputs, "__fspath__")
    with reserving({inputs if from_file else None: "this batch's inputs file", out: "this batch's results file"}):
        job = make_job(kernel, target)  # the spec's agent never writes into them
    if hasattr(executor, "submit") and executor_options:
        raise ConfigError("executor_options apply to an executor named by 'executor'; this one is already built")
    if concurrency is not None and concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
    items = read_items(cast("Union[str, os.PathLike[str]]", inputs)) if from_file else iter_items(inputs)
    made_by = job_identity(kernel, target, job)
    sink = ResultsFile(out, retry_failed=retry_failed, made_by=made_by) if out is not None else None
    try:
        ex = executor if hasattr(executor, "submit") else kernel.executor(executor, **dict(executor_options or {}))
        width = concurrency or getattr(ex, "concurrency", None) or 16  # may connect (ray): before the clock
    except BaseException:
        if sink is not None:
            sink.close()
        raise
    from zagent.agentkit.runs import new_run_id

    summary = Summary(executor=getattr(ex, "name", type(ex).__name__), batch_id="batch-" + new_run_id()[4:],
                      made_by=made_by)
    run = _Batch(job, ex, sink, retries, on_result, summary)
    run.config = kernel.config  # its secrets are masked in a failed item's message (the app's agent may quote them)
    try:
        await run.go(items, width)
    except BaseException:
        run.summary.interrupted = True
        raise
    finally:
        run.summary.seconds = time.perf_counter() - run.started
        if sink is not None:
            sink.close()
        if ex is not executor:
            await ex.aclose()
    results = [] if sink is not None else [r for _, r in sorted(run.kept, key=lambda p: p[0])]
    return BatchReport(run.summary, results)


class _Batch:
    """The state of one batch (never shared)."""

    def __init__(self, job: BatchJob, ex: Any, sink: Optional[ResultsFile], retries: int,
                 on_result: Optional[Callable[[dict[str, Any], Summary], None]], summary: Summary):
        self.job, self.ex, self.sink, self.retries, self.on_result = job, ex, sink, retries, on_result
        self.summary = summary
        self.config: Any = None  # the kernel's (``batch_driver``)
        self.seen: dict[str, int] = {}
        self.kept: list[tuple[int, dict[str, Any]]] = []
        self.started = time.perf_counter()

    async def go(self, items: Iterable[Item], width: int) -> None:
        import asyncio

        it = iter(items)
        workers = [asyncio.ensure_future(self._worker(it)) for _ in range(width)]
        try:
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    async def _worker(self, it: Any) -> None:
        for item in it:  # workers share one iterator: each item is taken once
            self.summary.total += 1
            problem = item.problem
            duplicate = self._duplicate(item)  # before the skip: a resumed batch sees every id's first line too
            if duplicate:  # keyed by its line, so it never shadows the first item with that id
                problem, item = duplicate, item._replace(id=None)
            digest = inputs_digest(item.inputs)
            if self.sink is not None and self.sink.done.has(item, digest):
                self.summary.skipped += 1
                continue
            record = _failed(item, ConfigError(problem), 0, 0.0) if problem else await self._run(item)
            record.update(made_by=self.summary.made_by, inputs_digest=digest)  # what made it, from what
            self._record(item, record)

    def _duplicate(self, item: Item) -> Optional[str]:
        if item.id is None:
            return None
        first = self.seen.setdefault(item.id, item.line)
        if first == item.line:
            return None
        return f"line {item.line}: id {item.id!r} was already used on line {first}; ids must be unique"

    async def _run(self, item: Item) -> dict[str, Any]:
        from zagent.agentkit.runs import RUN_TAGS

        key = item.id if item.id is not None else f"line {item.line}"
        started = time.perf_counter()
        RUN_TAGS.set({"batch": self.summary.batch_id, "item": key})  # this worker task's runs: the run log groups them
        for attempt in range(1, self.retries + 2):
            try:
                result = await self.ex.submit(self.job.unit(key, item.inputs))
            except UnitLost as exc:
                if attempt > self.retries:
                    return _failed(item, exc, attempt, time.perf_counter() - started)
                self.summary.retried += 1
                continue
            except Exception as exc:
                from zagent.agentkit.secrets import config_masker, mask_exception

                mask_exception(exc, config_masker(self.config))  # the token of Kernel(config=...) the agent quoted
                return _failed(item, exc, attempt, time.perf_counter() - started)
            return _ok(item, result, attempt, time.perf_counter() - started)
        raise AssertionError("unreachable")  # pragma: no cover

    def _record(self, item: Item, record: dict[str, Any]) -> None:
        s = self.summary
        if record["ok"]:
            s.done += 1
        else:
            s.failed += 1
            kind = str((record.get("error") or {}).get("type") or "error")
            s.failures[kind] = s.failures.get(kind, 0) + 1
        usage = record.get("usage") or {}
        s.input_tokens += int(usage.get("input_tokens", 0) or 0)
        s.output_tokens += int(usage.get("output_tokens", 0) or 0)
        if self.sink is not None:
            self.sink.write(record)
        else:
            self.kept.append((item.line, record))
        if self.on_result is not None:
            self.on_result(record, s)


def _head(item: Item, ok: bool, attempts: int, duration: float) -> dict[str, Any]:
    head: dict[str, Any] = {} if item.id is None else {"id": item.id}
    head.update(line=item.line, ok=ok, attempts=attempts, duration=round(duration, 6))
    return head


def _ok(item: Item, result: Any, attempts: int, duration: float) -> dict[str, Any]:
    if not isinstance(result, dict) or "output" not in result:
        return _failed(item, ConfigError(f"the unit returned {type(result).__name__}, not {{'output': ...}}"),
                       attempts, duration)
    return {**_head(item, True, attempts, duration), "output": result["output"], "usage": result.get("usage") or {}}


def _failed(item: Item, exc: BaseException, attempts: int, duration: float) -> dict[str, Any]:
    type_name = exc.type_name if isinstance(exc, UnitFailed) else type(exc).__name__
    message = mask_env(str(exc)[:6000])  # a library's message may quote a key or a URL password; masked, then cut
    if len(message) > 2000:
        message = message[:1997] + "..."
    return {**_head(item, False, attempts, duration), "error": {"type": type_name, "message": message}}


# -- jobs -----------------------------------------------------------------------------


def make_job(kernel: "Kernel", target: Any) -> BatchJob:
    """The ``BatchJob`` for ``target`` (see the module docstring); a bad target is a ``ConfigError`` now."""
    builder = getattr(target, "batch_job", None)
    if builder is not None and not isinstance(target, type):
        job: BatchJob = builder(kernel)
        return job
    if isinstance(target, (dict, str)) or hasattr(target, "__fspath__"):
        return _spec_job(kernel, target)
    if hasattr(target, "aexecute"):
        return BatchJob(name=getattr(target, "name", "agent"), local=lambda inputs: agent_item(kernel, target, inputs))
    raise ConfigError(f"cannot batch a {type(target).__name__}: give an agent spec (dict or file), an agent, "
                      "or a workflow graph")


def _spec_job(kernel: "Kernel", target: Any) -> BatchJob:
    from zagent.speckit import load_spec_file, spec_file

    source = None if isinstance(target, dict) else target
    spec = target if source is None else load_spec_file(source)
    if "nodes" in spec:
        raise ConfigError("this spec is a workflow: load it with zagent.plugins.workflow.WorkFlowGraph.load(path) "
                          "and batch the graph (or use 'zagent batch', which does)")
    with spec_file(source):  # a file's identity (memory namespace, paths next to it), as kernel.agent(path) gives
        agent = kernel.agent(spec)
        # Workers get the spec without secrets (API keys come from their own environment), the driver's trust
        # and the spec file's identity.
        payload = {"spec": public_data(spec), "trust": shipped_trust()}
    return BatchJob(name=str(spec.get("name", "agent")), local=lambda inputs: agent_item(kernel, agent, inputs),
                    runner=AGENT_RUNNER, payload=payload)


async def agent_item(kernel: "Kernel", agent: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """Run one item on ``agent``: every required input must be in the item (never taken from another item)."""
    action = getattr(agent, "action", None)
    if callable(action):
        missing = action().missing_inputs(inputs)
        if missing:
            raise ConfigError(f"the item lacks input(s) {', '.join(missing)} that {agent.name!r} needs")
    result = await agent.aexecute(inputs=inputs)
    usage = getattr(result, "usage", None)
    output = result.to_dict() if hasattr(result, "to_dict") else result
    return {"output": output, "usage": msgspec.to_builtins(usage) if usage is not None else {}}


async def run_agent_item(kernel: "Kernel", payload: dict[str, Any]) -> dict[str, Any]:
    """The unit runner on a worker: the agent of ``payload['spec']`` built under the driver's trust (once per
    kernel: ``worker_agent``), run on one item."""
    agent = worker_agent(kernel, payload["spec"], payload)
    return await agent_item(kernel, agent, dict(payload.get("inputs") or {}))
