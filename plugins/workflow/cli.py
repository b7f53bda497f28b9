"""CLI: ``zagent workflow generate|show|run|resume`` (docs/workflows.md). ``run`` prints the outputs on stdout
(``--json``: JSON), one progress line per node on stderr; a run paused at a question prints the questions
(``--json``: ``{"status", "run_id", "interrupts"}``), how to answer on stderr, and exits with status 3."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup


def add_commands(cli: "CommandGroup") -> None:
    group = cli.group("workflow", help="generate, show and run multi-agent workflows")
    gen = group.command("generate", cmd_generate, help="generate a workflow from a goal and save it as JSON")
    gen.add_argument("goal", help="what the workflow must achieve (at least 10 characters)")
    gen.add_argument("--output", "-o", required=True, help="the workflow file to write (.json)")
    gen.add_argument("--model", "-m", default=None, help="'provider:model' (default: ZAGENT_MODEL)")
    gen.add_argument("--turns", type=int, default=1, help="review-and-refine rounds (default 1)")
    gen.add_argument("--agents", default=None, help="directory or .db of existing agents to reuse")
    gen.add_argument("--tool", action="append", default=[], metavar="NAME",
                     help="a registered tool the generated agents may use (repeatable; default: none)")
    gen.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    cli.add_model_options(gen)
    show = group.command("show", cmd_show, help="print a workflow as a text diagram (or Mermaid)")
    show.add_argument("workflow_file")
    show.add_argument("--mermaid", action="store_true", help="print a Mermaid flowchart instead")
    run = group.command("run", cmd_run, help="run a workflow file and print its outputs")
    run.add_argument("workflow_file")
    cli.add_inputs(run, help="a workflow input (repeatable)")
    run.add_argument("--checkpoints", default=None, help="SQLite file to checkpoint to (enables resuming)")
    run.add_argument("--run-id", default=None, help="resume (or name) this run")
    _run_options(cli, run)
    res = group.command("resume", cmd_resume, help="answer a run paused at a question (zagent.interrupt) and go on")
    res.add_argument("run_id", help="the paused run's id (printed when it paused)")
    res.add_argument("workflow_file", help="the workflow file the run was started from")
    res.add_argument("--checkpoints", required=True, help="the SQLite file the run was checkpointed to")
    answer = res.add_mutually_exclusive_group(required=True)
    answer.add_argument("--answer", "-a", default=None, help="the answer, as text")
    answer.add_argument("--answer-json", default=None, help="the answer, as JSON (a number, a list, an object...)")
    res.add_argument("--node", default=None, help="the node to answer, when several wait")
    _run_options(cli, res)


def _run_options(cli: "CommandGroup", run: Any) -> None:
    run.add_argument("--model", "-m", default=None, help="'provider:model' for the workflow's agents")
    run.add_argument("--agents", default=None, help="directory or .db of agents named by the workflow")
    run.add_argument("--concurrency", type=int, default=8, help="nodes running at once (default 8)")
    run.add_argument("--retries", type=int, default=0, help="extra tries of a failing node")
    run.add_argument("--executor", "-x", default=None,
                     help="where node runs go: 'local' (default) or an installed executor such as 'ray'")
    run.add_argument("--json", action="store_true", help="print the outputs as JSON")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    cli.add_model_options(run)
    run.add_argument("--trust", action="store_true", help="trust every import path in the workflow and its agents "
                                                          "(default: only modules in the file's own folder)")


def _manager(kernel: "Kernel", storage: Any, everything: bool = False) -> Any:
    """The ``--agents`` store's agents, loaded under its own folder's trust (``manager.stored.storage_trust``)."""
    from zagent.plugins.manager import AgentManager
    from zagent.plugins.manager.stored import storage_trust

    manager = AgentManager(kernel=kernel, storage=storage,
                           storage_trust=storage_trust(storage, everything=everything) if storage else None)
    if storage:
        manager.load_all()
    return manager


def cmd_generate(args: argparse.Namespace, kernel: "Kernel") -> int:
    from .generator import WorkFlowGenerator

    _progress(kernel, args.quiet)
    gen = WorkFlowGenerator(kernel=kernel, llm=args.model, manager=_manager(kernel, args.agents),
                            num_turns=args.turns, tools=_tools(kernel, args.tool))
    graph = gen.generate(args.goal)
    graph.save(args.output)
    print(f"wrote {args.output}: {len(graph.nodes)} nodes", file=sys.stderr)
    return 0


def _tools(kernel: "Kernel", names: list[str]) -> list[str]:
    """The ``--tool`` names, each a registered tool (``ConfigError`` naming the unknown ones)."""
    from zagent.errors import ConfigError

    unknown = [n for n in names if kernel.find("tools", n) is None]
    if unknown:
        raise ConfigError(f"--tool {', '.join(unknown)}: no such tool is registered; registered tools: "
                          f"{', '.join(kernel.names('tools')) or 'none'}")
    return list(dict.fromkeys(names))


def cmd_show(args: argparse.Namespace, kernel: "Kernel") -> int:
    from .graph import WorkFlowGraph
    from .render import to_mermaid, to_text

    graph = WorkFlowGraph.load(args.workflow_file)
    print(to_mermaid(graph) if args.mermaid else to_text(graph))
    problems = graph.problems()
    for p in problems:
        print(f"problem: {p.message}", file=sys.stderr)
    return 1 if problems else 0


def _trust(args: argparse.Namespace) -> Any:
    """Modules in the workflow file's folder, everything with ``--trust``; the ``--agents`` folder's modules serve
    only the agents stored there (``_manager``), never the file's own agents."""
    from zagent.plugins.manager.stored import cli_trusts

    return cli_trusts(args.workflow_file, args.agents, everything=bool(args.trust))[0]


def cmd_run(args: argparse.Namespace, kernel: "Kernel") -> int:
    from zagent.speckit import spec_file, trusting

    from .graph import WorkFlowGraph

    graph = WorkFlowGraph.load(args.workflow_file)
    executor = _executor(args, kernel)
    with trusting(_trust(args)), spec_file(args.workflow_file):  # its inline agents come from this file
        result = executor.run(graph, args.input, run_id=args.run_id)
    return _print_result(args, result)


def _executor(args: argparse.Namespace, kernel: "Kernel") -> Any:
    """The executor ``run`` and ``resume`` drive: the command's agents, model, bounds and checkpoints."""
    from .executor import WorkFlowExecutor

    _progress(kernel, args.quiet)
    return WorkFlowExecutor(kernel=kernel, manager=_manager(kernel, args.agents, bool(args.trust)), llm=args.model,
                            max_concurrency=args.concurrency, retries=args.retries,
                            checkpoints=args.checkpoints, executor=args.executor)


def cmd_resume(args: argparse.Namespace, kernel: "Kernel") -> int:
    import os

    from zagent.errors import ConfigError
    from zagent.speckit import spec_file, trusting

    from .graph import WorkFlowGraph

    if not os.path.exists(args.checkpoints):  # never create an empty store for a resume
        raise ConfigError(f"checkpoint file {args.checkpoints!r} does not exist; give the --checkpoints file the run "
                          "was started with")
    answer: Any = args.answer
    if args.answer_json is not None:
        try:
            answer = msgspec.json.decode(args.answer_json)
        except msgspec.DecodeError as exc:
            raise ConfigError(f"--answer-json is not JSON ({exc}); for text use --answer") from None
    graph = WorkFlowGraph.load(args.workflow_file)
    executor = _executor(args, kernel)
    with trusting(_trust(args)), spec_file(args.workflow_file):
        if args.node is None:
            result = executor.resume(args.run_id, graph=graph, answer=answer)
        else:
            result = executor.resume(args.run_id, graph=graph, answers={args.node: answer})
    return _print_result(args, result)


def _print_result(args: argparse.Namespace, result: Any) -> int:
    if result.paused:
        return _print_paused(args, result)
    if args.json:
        print(msgspec.json.format(msgspec.json.encode(result.outputs, enc_hook=repr)).decode())
    else:
        for name, value in result.outputs.items():
            text = value if isinstance(value, str) else msgspec.json.encode(value, enc_hook=repr).decode()
            print(f"## {name}\n{text}\n")
    print(f"run {result.run_id}: {result.status}", file=sys.stderr)
    return 0


PAUSED = 3  # the exit status of a run that waits on a person


def _print_paused(args: argparse.Namespace, result: Any) -> int:
    """The questions on stdout, how to answer them on stderr; exit status ``PAUSED``."""
    import shlex

    from zagent.plugins.cliterminal import printable

    if args.json:
        print(msgspec.json.format(msgspec.json.encode(
            {"status": "paused", "run_id": result.run_id, "interrupts": result.interrupts})).decode())
    else:
        for asked in result.interrupts:
            print(f"## {asked.node} asks\n{printable(asked.text)}\n")
    store = getattr(args, "checkpoints", None)
    if store is None:
        print(f"run {result.run_id}: paused, but nothing was checkpointed (no --checkpoints), so it cannot be "
              "answered later; run it with --checkpoints FILE", file=sys.stderr)
        return PAUSED
    node = " --node NODE" if len(result.interrupts) > 1 else ""
    print(f"run {result.run_id}: paused; answer with: zagent workflow resume {shlex.quote(result.run_id)} "
          f"{shlex.quote(args.workflow_file)} --checkpoints {shlex.quote(store)}{node} --answer TEXT", file=sys.stderr)
    return PAUSED


def _progress(kernel: "Kernel", quiet: bool) -> None:
    if not quiet and not kernel.has_plugin("workflow-progress"):
        kernel.add_plugin(ProgressPrinter(), name="workflow-progress")


class ProgressPrinter:
    """Event observer printing one line per workflow event on stderr."""

    def zagent_event(self, event: Any) -> None:
        d = event.data
        line = None
        if event.type == "workflow_start":
            line = f"workflow {d.get('workflow')}: {d.get('nodes')} nodes" + (
                f", resuming ({len(d['resumed'])} done)" if d.get("resumed") else "")
        elif event.type == "node_start":
            line = f"  > {d.get('node')}" + (f" (attempt {d['attempt']})" if d.get("attempt", 1) > 1 else "")
        elif event.type == "node_end" and d.get("status") == "paused":
            line = f"  ? {d.get('node')}: paused, asks: {_question(d.get('question'))}"
        elif event.type == "node_end":
            extra = d.get("error") or d.get("reason") or ", ".join(d.get("outputs") or [])
            line = f"  {_MARK.get(d.get('status'), '?')} {d.get('node')}: {d.get('status')}" + (f" ({extra})" if extra else "")
        elif event.type == "node_retry":
            line = f"  ~ {d.get('node')}: retrying after {d.get('error')}"
        elif event.type == "workflow_loop":
            line = f"  @ {d.get('node')} -> {d.get('target')} (loop {d.get('iteration')})"
        elif event.type == "workflow_end":
            line = f"workflow {d.get('status')}"
        elif event.type == "generation_step":
            line = _STEPS.get(d.get("step"), "  {step}").format(**d)
        elif event.type == "generation_retry":
            line = f"  ~ {d.get('step')}: attempt {d.get('attempt')} failed, retrying in {d.get('delay')} s: {d.get('error')}"
        if line:  # one line: a node's error may quote a model's reply, whose line breaks could fake progress lines
            from zagent.plugins.cliterminal import printable

            print(printable(line, layout=False), file=sys.stderr, flush=True)


def _question(question: Any) -> str:
    from zagent.plugins.cliterminal import printable

    text = question if isinstance(question, str) else msgspec.json.encode(question, enc_hook=repr).decode()
    text = " ".join(text.split())  # one progress line
    return printable(text if len(text) <= 200 else text[:199] + "…", layout=False)


_STEPS = {"plan": "  plan: {nodes} sub-tasks", "review": "  review round {turn}: {suggestions} suggestion(s)",
          "agents": "  agents: chosen for {nodes} nodes"}
_MARK = {"done": "+", "failed": "x", "skipped": "-"}
