"""``zagent eval CASES.jsonl --agent FILE``: run an agent file over eval cases, print and save the report
(docs/evals.md). The agent file is trusted as ``zagent run`` trusts it; ``--scorer`` values are the user's own flags.
Exit codes: 0 done, 1 when no case was measured (no cases, or each one's run or all its scorers failed) or, with
``--compare``, when a case that passed before fails now or the baseline shares no case with the run."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup

FAILED_SCORER = "the scorer failed: "  # how ``scorers.run_scorer`` reports a scorer that raised


def add_commands(cli: "CommandGroup") -> None:
    p = cli.command("eval", cmd_eval, help="run an agent over eval cases (JSONL) and score its outputs")
    p.add_argument("cases", help="JSONL file: one case per line ({'id', 'inputs', 'expected', 'metadata'})")
    p.add_argument("--agent", "-a", required=True, help="the agent file (.json/.yaml) to evaluate")
    p.add_argument("--scorer", "-s", action="append", default=[], metavar="NAME[:key=value,...]",
                   help="a scorer (repeatable; default exact): exact, contains, json_subset, numeric:tolerance=0.01, "
                        "function:fn=module:attr, llm_judge:model=provider:model, or one a plugin registered")
    p.add_argument("--out", "-o", default=None,
                   help="JSONL file of the agent runs; re-running resumes from it (runs this agent did not make are "
                        "refused: give each agent its own file)")
    p.add_argument("--report", "-r", default=None, help="write the report as JSON to this file")
    p.add_argument("--compare", default=None, metavar="REPORT.json", help="compare with an earlier report")
    p.add_argument("--json", action="store_true", help="print the report as JSON instead of the table")
    p.add_argument("--concurrency", "-c", type=int, default=None, help="cases in flight at once")
    p.add_argument("--executor", "-x", default=None, help="where cases run: 'local' (default) or e.g. 'ray'")
    p.add_argument("--model", "-m", default=None, help="'provider:model' instead of the file's")
    p.add_argument("--trust", action="store_true",
                   help="trust every import path in the agent file (default: only modules in its own folder)")


def cmd_eval(args: argparse.Namespace, kernel: "Kernel") -> int:
    import msgspec
    from zagent.speckit import load_spec_file, spec_file, Trust, trusting

    from .comparing import compare
    from .run import evaluate
    from .scorers import parse_scorer, scorer_of

    if args.concurrency is not None and args.concurrency < 1:
        raise SystemExit(f"zagent: --concurrency must be at least 1, got {args.concurrency}")
    _refuse_overwrite(args)
    with trusting(Trust.for_folder(os.getcwd(), everything=True, last=True)):  # the user's own flags
        scorers = [scorer_of(kernel, parse_scorer(s)) for s in args.scorer] or None
    spec = load_spec_file(args.agent)
    if args.model:
        from zagent.speckit.paths import users_model

        spec = {**spec, "llm": users_model(args.model)}  # the user's own choice
        spec.pop("llm_config", None)
    from zagent.speckit.paths import reserving

    with trusting(Trust.for_file(args.agent, everything=args.trust)), spec_file(args.agent), \
            reserving({args.cases: "this eval's cases file", args.out: "this eval's runs file"}):  # its identity
        report = evaluate(kernel, spec, args.cases, scorers=scorers, out=args.out, concurrency=args.concurrency,
                          executor=args.executor, name=os.path.basename(args.agent))
    comparison = compare(args.compare, report) if args.compare else None  # read before a --report replaces it
    if args.report:
        report.save(args.report)
    if args.json:
        data = msgspec.to_builtins(report)
        if comparison is not None:
            data["comparison"] = {k: getattr(comparison, k) for k in
                                  ("baseline", "regressed", "fixed", "added", "removed", "lost", "pass_rate",
                                   "scores")}
        sys.stdout.write(msgspec.json.encode(data).decode() + "\n")
    else:
        print(report.render())
        if comparison is not None:
            print(comparison.render())
    if not report.cases:  # an empty or wrong cases file: nothing was measured, not a success
        print(f"zagent: {args.cases!r} holds no cases, so nothing was measured; check the cases file",
              file=sys.stderr)
        return 1
    if not any(map(_measured, report.cases)):  # no key, a wrong model: not a success
        print(f"zagent: every case failed to run or to be scored ({len(report.cases)}), so nothing was measured; "
              "each case's error is in the report", file=sys.stderr)
        return 1
    if comparison is not None and len(comparison.added) == len(report.cases):  # nothing could regress
        print(f"zagent: the baseline {args.compare!r} shares no case id with this run, so nothing was compared; "
              "compare with a report of the same cases", file=sys.stderr)
        return 1
    if comparison is not None and comparison.lost:  # dropped from the cases file: not measured, not a pass
        print(f"zagent: {len(comparison.lost)} case(s) that passed in {args.compare!r} were not run now "
              f"({', '.join(map(repr, comparison.lost[:5]))}); run the same cases, or make a new baseline with --report",
              file=sys.stderr)
    return 1 if comparison is not None and comparison.worse else 0


def _measured(case: Any) -> bool:
    """Did ``case`` (a ``CaseResult``) run and get a verdict from at least one scorer that did not fail?"""
    return case.error is None and any(not s.reason.startswith(FAILED_SCORER) for s in case.scores.values())


def _refuse_overwrite(args: argparse.Namespace) -> None:
    """Refuse, before any case runs, a ``--report`` naming the agent file, the cases or ``--out`` (a slip on the
    command line would replace it with the report; the ``--compare`` baseline is read before the report is saved)."""
    if not args.report:
        return
    for flag, other in (("the agent file", args.agent), ("the cases file", args.cases), ("--out", args.out)):
        if other and os.path.exists(args.report) and os.path.exists(other) and os.path.samefile(args.report, other):
            raise SystemExit(f"zagent: --report {args.report!r} is {flag}; writing the report there would replace "
                             "it. Give the report another file")
