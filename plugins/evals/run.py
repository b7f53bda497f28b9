"""``evaluate`` / ``aevaluate``: run an agent over eval cases through ``Kernel.abatch``, score each case, build the
``EvalReport``; with ``out``, re-running resumes from the runs this agent made of these cases' inputs (only
scoring runs again; another agent's runs are refused: docs/evals.md, "Resuming"). ``read_cases``: cases from a
JSONL file or dicts (``id``, ``inputs``, ``expected``, ``metadata``, ``scorers``), ``ConfigError`` naming a bad line
or a repeated id."""

from __future__ import annotations

import contextlib
import os
import time
from typing import TYPE_CHECKING, Any, Iterable, Optional, Union

import msgspec
from zagent.errors import ConfigError
from zagent import run_sync

from .scorers import Score, ScorerOptionError, run_scorer, scorer_of

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

__all__ = ["Case", "CaseResult", "EvalReport", "aevaluate", "evaluate", "read_cases"]

MAX_CASES = 1_000_000
#: the most scorers a cases file's case may name (each runs per case; an ``llm_judge`` is a model call)
MAX_CASE_SCORERS = 32


class Case(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """One eval case; its fields: docs/evals.md, "Cases"."""

    id: str
    inputs: dict[str, Any] = {}
    expected: Any = None
    metadata: dict[str, Any] = {}
    scorers: Optional[list[Any]] = None


class CaseResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    """How one case went: its output or error, every scorer's ``Score``, ``passed`` when all passed."""

    id: str
    passed: bool
    scores: dict[str, Score] = {}
    output: Any = None
    expected: Any = None
    error: Optional[str] = None
    duration: float = 0.0
    usage: dict[str, Any] = {}
    metadata: dict[str, Any] = {}


class EvalReport(msgspec.Struct, kw_only=True, omit_defaults=True):
    """An eval run: per-case results and totals; ``save``/``load`` as JSON, ``render`` for a terminal."""

    agent: str
    cases: list[CaseResult]
    totals: dict[str, Any] = {}
    created: float = 0.0

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        from zagent.agentkit.files import write_atomic
        from zagent.agentkit.secrets import masked_json  # an output quoting OPENAI_API_KEY (a tool returned it)

        write_atomic(os.fspath(path), msgspec.json.format(masked_json(msgspec.json.encode(self))).decode() + "\n")

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "EvalReport":
        from zagent.agentkit.files import read_bounded

        try:
            return msgspec.json.decode(read_bounded(path, "the eval report"), type=cls)
        except OSError as exc:
            raise ConfigError(f"cannot read the eval report {os.fspath(path)!r}: {exc}") from None
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
            raise ConfigError(f"{os.fspath(path)!r} is not an eval report ({exc}); give a report.json written by "
                              "'zagent eval --report' or EvalReport.save") from None

    def render(self) -> str:
        from .render import render_report

        return render_report(self)


def _case(line: int, data: Any, where: str) -> Case:
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: line {line} is a JSON {type(data).__name__}, not a case object")
    data = dict(data)
    raw_id = data.pop("id", None)
    if raw_id is None:
        raw_id = f"line-{line}"
    elif isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or raw_id == "":
        raise ConfigError(f"{where}: line {line}: 'id' must be a non-empty string or an integer, got {raw_id!r}")
    try:
        return msgspec.convert({"id": str(raw_id), **data}, Case)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{where}: line {line}: {exc}; a case holds inputs, expected, metadata, id, "
                          "scorers") from None


def read_cases(cases: Union[str, "os.PathLike[str]", Iterable[Any]]) -> list[Case]:
    """Cases from a JSONL file or an iterable of dicts/``Case``s; ``ConfigError`` naming a bad line or a
    repeated id."""
    from zagent.agentkit.inputs import check_inputs

    found: list[Case] = []
    if isinstance(cases, (str, os.PathLike)):
        where = os.fspath(cases)
        from zagent.agentkit.files import bounded_lines, open_regular

        try:
            f = open_regular(where)
        except OSError as exc:
            raise ConfigError(f"cannot read the cases file {where!r}: {exc}") from None

        with f:
            for n, raw in bounded_lines(f, where):
                if raw.strip():
                    try:
                        data = msgspec.json.decode(raw)
                    except (msgspec.DecodeError, RecursionError) as exc:  # nested past msgspec's limit too
                        raise ConfigError(f"{where}: line {n} is not JSON ({exc})") from None
                    if isinstance(data, dict):
                        try:
                            check_inputs(data)  # depth, size, valid Unicode
                        except ConfigError as exc:
                            raise ConfigError(f"{where}: line {n}: {exc}") from None
                    found.append(_case(n, data, where))
                    if len(found[-1].scorers or ()) > MAX_CASE_SCORERS:  # each may be a model call (llm_judge)
                        raise ConfigError(f"{where}: line {n}: case {found[-1].id!r} names "
                                          f"{len(found[-1].scorers or ())} scorers (at most {MAX_CASE_SCORERS} a "
                                          "case); keep the scorers that measure something different")
                if len(found) > MAX_CASES:
                    raise ConfigError(f"{where}: more than {MAX_CASES} cases; split the file")
    else:
        for n, data in enumerate(cases, 1):
            found.append(data if isinstance(data, Case) else _case(n, data, "cases"))
    seen: set[str] = set()
    for case in found:
        if case.id in seen:
            raise ConfigError(f"case id {case.id!r} appears twice; give every case its own id")
        seen.add(case.id)
    return found


def _records(report: Any, out: Optional[str], wanted: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The batch's records by item id (the results file's when ``out``: earlier runs' records too), only those of
    the ``wanted`` cases (id -> inputs digest; a results file shared with other runs may hold millions of records)
    that this batch's agent made from those very inputs (an edited case's older run is not its run)."""
    if out is None:
        return {str(r.get("id")): r for r in report.results}
    from zagent.agentkit.files import bounded_lines, open_regular

    records: dict[str, dict[str, Any]] = {}
    with open_regular(out) as f:  # a FIFO is refused, not waited on; a line is bounded, the file is not
        for _, raw in bounded_lines(f, f"the results file {out!r}"):
            if not raw.strip():
                continue
            try:
                record = msgspec.json.decode(raw)
            except (msgspec.DecodeError, RecursionError):
                continue  # a torn last line; the batch file cuts it on its next open
            if not isinstance(record, dict) or record.get("id") is None:
                continue
            key = str(record["id"])
            if key in wanted and wanted[key] == record.get("inputs_digest") and \
                    record.get("made_by") == report.summary.made_by:  # a record of another case is never kept
                records[key] = record
    return records


async def aevaluate(kernel: "Kernel", agent: Any, cases: Any, *, scorers: Optional[list[Any]] = None,
                    out: Optional[Union[str, "os.PathLike[str]"]] = None, concurrency: Optional[int] = None,
                    executor: Any = None, name: Optional[str] = None) -> EvalReport:
    """Run ``agent`` (a spec dict, file or agent, as ``Kernel.abatch`` takes) over ``cases`` and score them.

    ``scorers`` (default ``exact``): names, ``{"name": ..., options}``, callables ``score(output, expected, case)``
    or ``(label, callable)`` pairs; each case's own ``scorers`` replace them for that case (a cases file's may set
    no ``label``)."""
    loaded = read_cases(cases)
    default = [s if isinstance(s, tuple) else scorer_of(kernel, s) for s in (scorers or ["exact"])]
    from zagent.speckit import Trust, trusting

    # A cases file is data, whoever trusts the agent: its scorers' import paths (function's fn) get only the
    # kernel's trusted_imports, never the agent spec's trust (--trust).
    from_file = isinstance(cases, (str, os.PathLike))
    per_case: dict[str, list[tuple[str, Any]]] = {}
    from zagent.providerkit.credentials import spec_options

    with trusting(Trust() if from_file else None), \
            (spec_options(f"cases file {os.fspath(cases)!r}", kernel) if from_file else contextlib.nullcontext()):
        for c in loaded:  # a case's judge model is checked as a spec's (no default recording, bounded options)
            if from_file and c.scorers:
                _unlabelled(c, os.fspath(cases))
            try:
                if c.scorers:
                    per_case[c.id] = [scorer_of(kernel, s) for s in c.scorers]
            except ConfigError as exc:
                if not from_file:
                    raise
                if isinstance(exc, ScorerOptionError):  # not a matter of trust
                    raise ConfigError(f"cases file {os.fspath(cases)!r}, case {c.id!r}: {exc}") from None
                raise ConfigError(f"cases file {os.fspath(cases)!r}, case {c.id!r}: {exc}. A cases file is data "
                                  "(--trust covers the agent file only): its scorers may name only functions the "
                                  "app trusts (Kernel(config={'trusted_imports': [...]})); or give the scorer "
                                  "yourself (--scorer, scorers=...)") from None
    items = [{**c.inputs, "id": c.id} for c in loaded]
    path = os.fspath(out) if out is not None else None
    report = await kernel.abatch(agent, items, out=path, concurrency=concurrency, executor=executor)
    from zagent.plugins.batch.identity import inputs_digest

    records = _records(report, path, {c.id: inputs_digest({k: v for k, v in c.inputs.items() if k != "id"})
                                      for c in loaded})
    results = []
    for case in loaded:
        record = records.get(case.id)
        if record is None or not record.get("ok"):
            error = (record or {}).get("error") or {"message": "the case did not run"}
            text = f"{error.get('type', 'Error')}: {error.get('message', '')}" if isinstance(error, dict) else str(error)
            results.append(CaseResult(id=case.id, passed=False, expected=case.expected, error=text[:2000],
                                      metadata=case.metadata))
            continue
        output = record.get("output")
        scores = {label: await run_scorer(fn, output, case.expected, case, kernel.config)
                  for label, fn in per_case.get(case.id, default)}
        results.append(CaseResult(id=case.id, passed=all(s.passed for s in scores.values()), scores=scores,
                                  output=output, expected=case.expected, duration=record.get("duration", 0.0),
                                  usage=record.get("usage") or {}, metadata=case.metadata))
    return EvalReport(agent=_label(agent, name), cases=results, totals=totals(results), created=time.time())


def _unlabelled(case: Case, where: str) -> None:
    """A cases file's scorer may not name its label: the report names it by its name and options, so a lenient
    scorer cannot be read as the user's (``{"name": "contains", "label": "exact"}``)."""
    for spec in case.scorers or ():
        if isinstance(spec, dict) and "label" in spec:
            raise ConfigError(f"cases file {where!r}, case {case.id!r}: a scorer in a cases file may not set 'label' "
                              f"({spec['label']!r}); drop it (the report names a scorer by its name and options)")


def _label(agent: Any, name: Optional[str]) -> str:
    if name:
        return name
    if isinstance(agent, dict):
        return str(agent.get("name", "agent"))
    if isinstance(agent, (str, os.PathLike)):
        return os.path.basename(os.fspath(agent))
    return str(getattr(agent, "name", "agent"))


def evaluate(kernel: "Kernel", agent: Any, cases: Any, **options: Any) -> EvalReport:
    """Sync twin of ``aevaluate``."""
    return run_sync(aevaluate(kernel, agent, cases, **options))


def totals(results: list[CaseResult]) -> dict[str, Any]:
    """Counts, pass rate, mean score per scorer and tokens of ``results``."""
    passed = sum(r.passed for r in results)
    errors = sum(r.error is not None for r in results)
    means: dict[str, list[float]] = {}
    for r in results:
        for label, score in r.scores.items():
            means.setdefault(label, []).append(score.value)
    return {"cases": len(results), "passed": passed, "failed": len(results) - passed - errors, "errors": errors,
            "pass_rate": round(passed / len(results), 4) if results else 0.0,
            "scores": {k: round(sum(v) / len(v), 4) for k, v in sorted(means.items())},
            "input_tokens": sum(int(r.usage.get("input_tokens", 0)) for r in results),
            "output_tokens": sum(int(r.usage.get("output_tokens", 0)) for r in results)}
