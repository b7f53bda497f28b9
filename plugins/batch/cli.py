"""``zagent batch FILE INPUTS.jsonl --out RESULTS.jsonl``: run an agent or a workflow file once per input line
(docs/batch.md). Import paths are trusted as ``zagent run`` trusts them, on remote workers too. Exit codes: 0 the
batch ran (some failed items included), 1 an error before it ran, no items, or every item it ran failed, 130
interrupted."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, Optional

from .progress import Progress

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup


def add_commands(cli: "CommandGroup") -> None:
    p = cli.command("batch", cmd_batch, help="run an agent or workflow file once per line of a JSONL file")
    p.add_argument("file", help="agent (.json/.yaml) or workflow (.json with 'nodes') file")
    p.add_argument("inputs", help="JSONL file: one JSON object of inputs per line ('id' names an item)")
    p.add_argument("--out", "-o", required=True,
                   help="JSONL results file; items already in it are skipped, so re-running resumes (a "
                        "file holding results another agent, workflow or model made is refused)")
    p.add_argument("--executor", "-x", default=None,
                   help="where items run: 'local' (default) or an installed executor such as 'ray' "
                        "(chosen by default when RAY_ADDRESS is set and zagent-ray is installed)")
    p.add_argument("--executor-option", action="append", default=[], metavar="KEY=VALUE",
                   help="an option for the executor (repeatable; values are JSON when they parse as JSON)")
    p.add_argument("--concurrency", "-c", type=int, default=None,
                   help="items in flight at once (default: the executor's suggestion, else 16)")
    p.add_argument("--retries", type=int, default=2, help="extra tries of an item whose worker was lost (default 2)")
    p.add_argument("--retry-failed", action="store_true", help="run the items recorded as failed in --out again")
    p.add_argument("--model", "-m", default=None, help="'provider:model' instead of the file's")
    p.add_argument("--trust", action="store_true",
                   help="trust every import path in the file (default: only modules in the file's own folder)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")


def choose_executor(kernel: "Kernel", asked: Optional[str]) -> Optional[str]:
    """``--executor``, else ``ray`` when ``RAY_ADDRESS`` is set and installed, else the kernel's default."""
    if asked:
        return asked
    if os.environ.get("RAY_ADDRESS") and kernel.find("executors", "ray") is not None:
        return "ray"
    return None


def _options(pairs: list[str]) -> dict[str, Any]:
    import msgspec

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"zagent: --executor-option {pair!r} must look like KEY=VALUE")
        try:
            out[key.strip()] = msgspec.json.decode(text)
        except (msgspec.DecodeError, RecursionError):
            out[key.strip()] = text
    return out


def _target(kernel: "Kernel", path: str, model: Optional[str]) -> Any:
    from zagent.speckit import load_spec_file

    spec = load_spec_file(path)
    if "nodes" in spec:  # a workflow file: built on the workflow plugin
        from zagent.plugins.workflow import WorkFlowGraph

        graph = WorkFlowGraph.from_dict(spec)
        return _GraphTarget(graph, model)
    if model:
        from zagent.speckit.paths import users_model

        spec = {**spec, "llm": users_model(model)}  # the user's own choice
        spec.pop("llm_config", None)
    return spec


class _GraphTarget:
    """A workflow graph with the ``--model`` its agents get."""

    def __init__(self, graph: Any, model: Optional[str]):
        self.graph, self.model = graph, model

    def batch_job(self, kernel: "Kernel") -> Any:
        return self.graph.batch_job(kernel, self.model)


def _count_lines(path: str) -> Optional[int]:
    from zagent.agentkit.files import bounded_lines, open_regular
    from zagent.errors import ConfigError

    try:
        with open_regular(path) as f:
            return sum(1 for _, line in bounded_lines(f, path) if line.strip())
    except (OSError, ConfigError):  # reading the items says what is wrong
        return None


def cmd_batch(args: argparse.Namespace, kernel: "Kernel") -> int:
    from zagent.speckit import spec_file, Trust, trusting
    from zagent.speckit.paths import reserving

    if args.concurrency is not None and args.concurrency < 1:
        raise SystemExit(f"zagent: --concurrency must be at least 1, got {args.concurrency}")
    target = _target(kernel, args.file, args.model)
    executor = choose_executor(kernel, args.executor)
    progress = Progress(_count_lines(args.inputs), every=5.0)
    seen: list[Any] = []

    def on_result(record: dict[str, Any], summary: Any) -> None:
        if not seen:
            seen.append(summary)
        if not args.quiet:
            progress(record, summary)

    try:
        with trusting(Trust.for_file(args.file, everything=args.trust)), spec_file(args.file), \
                reserving({args.inputs: "this batch's inputs file", args.out: "this batch's results file"}):
            # trust is also shipped to remote workers; the spec file is its agents' identity (memory namespaces)
            report = kernel.batch(target, args.inputs, out=args.out, executor=executor,
                                  executor_options=_options(args.executor_option), concurrency=args.concurrency,
                                  retries=args.retries, retry_failed=args.retry_failed, on_result=on_result)
    except KeyboardInterrupt as exc:
        if seen:
            seen[0].interrupted = True
            if not args.quiet:
                progress.finish(seen[0])
        term = type(exc).__name__ == "Terminated"  # SIGTERM (zagent.plugins.clisignals): exit 143
        print(f"zagent: {'terminated' if term else 'interrupted'}; finished items are in {args.out}: run the same "
              "command again to resume", file=sys.stderr)
        return 143 if term else 130
    if not args.quiet:
        progress.finish(report.summary)
    print(report.summary.line())
    if not args.quiet and args.executor in (None, "local"):
        print(f"its runs: zagent logs list --batch {report.summary.batch_id}", file=sys.stderr)
    s = report.summary
    if not (s.done or s.failed or s.skipped):  # an empty or wrong inputs file: nothing ran, not a success
        print(f"zagent: {args.inputs!r} holds no items (no JSON object lines), so nothing ran; check the inputs file",
              file=sys.stderr)
        return 1
    if report.summary.failed and not report.summary.done:  # nothing worked (no key, a wrong model): not a success
        print(f"zagent: every item failed ({report.summary.failed}); each one's error is in {args.out}",
              file=sys.stderr)
        return 1
    return 0
