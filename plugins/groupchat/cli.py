"""CLI: ``zagent groupchat run FILE --input task="..."``.

Prints each turn to stdout as it is recorded (``[round] Speaker: text``) and how the chat ended to stderr;
``--checkpoints runs.db --run-id ID`` checkpoints every turn, and the same ``--run-id`` without a task continues.
A chat paused on a person's answer exits 3 (as ``zagent workflow run`` does), not 0.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup


def add_commands(cli: "CommandGroup") -> None:
    group = cli.group("groupchat", help="run multi-agent group chats")
    run = group.command("run", cmd_run, help="run a group chat file, printing each turn as it happens")
    run.add_argument("chat_file", help="a group chat .json/.yaml")
    cli.add_inputs(run, help="an input of the chat (repeatable); 'task' is the task the chat works on")
    run.add_argument("--model", "-m", default=None, help="'provider:model' for every agent built from the file")
    run.add_argument("--agents", default=None, help="directory or .db of agents the file names")
    run.add_argument("--max-rounds", type=int, default=None, help="override the file's round limit")
    run.add_argument("--checkpoints", default=None, help="SQLite file to checkpoint to (enables resuming)")
    run.add_argument("--run-id", default=None, help="name this run, or continue it (give no task then)")
    run.add_argument("--json", action="store_true", help="print the result as JSON at the end instead of turns")
    run.add_argument("--quiet", "-q", action="store_true", help="no waiting-for-the-model ticker on stderr")
    cli.add_model_options(run)
    run.add_argument("--trust", action="store_true", help="trust every import path in the file and its agents "
                                                          "(default: only modules in the file's own folder)")


def cmd_run(args: argparse.Namespace, kernel: "Kernel") -> int:
    import msgspec

    from zagent.errors import ConfigError
    from zagent.speckit import load_spec_file
    from zagent.plugins.manager import AgentManager

    from .spec import from_dict

    data = load_spec_file(args.chat_file)
    if args.max_rounds is not None:
        data = {**data, "max_rounds": args.max_rounds,
                "termination": {**(data.get("termination") or {}), "max_rounds": args.max_rounds}}
    from zagent.plugins.manager.stored import cli_trusts
    from zagent.speckit import spec_file, trusting

    # the file's folder for its own agents; the --agents folder's modules for the agents stored there only
    trust, stored = cli_trusts(args.chat_file, args.agents, everything=bool(args.trust))
    with trusting(trust), spec_file(args.chat_file):  # its inline agents come from this file
        manager = AgentManager(kernel=kernel, storage=args.agents, storage_trust=stored)
        chat = from_dict(data, kernel, manager=manager, llm=args.model, checkpoints=args.checkpoints,
                         on_turn=None if args.json else _print_turn)
        inputs = dict(args.input)
        task = inputs.pop("task", None)
        if task is None and not args.run_id:
            raise ConfigError("give the task: --input task=\"...\" (or --run-id of a checkpointed chat)")
        result = chat.run(task, run_id=args.run_id, **inputs)
    paused = result.stopped_by == "interrupt"  # a turn asked a person: no answer, not a success
    if args.json:
        print(msgspec.json.format(msgspec.json.encode({
            "run_id": result.run_id, "stopped_by": result.stopped_by, "detail": result.detail,
            "rounds": result.rounds, "messages": result.messages, "usage": result.usage,
            **({"status": "paused"} if paused else {})})).decode())
    print(f"stopped by {result.stopped_by} after {result.rounds} round(s): {result.detail} (run {result.run_id})",
          file=sys.stderr)
    if paused:  # exit 3 as `zagent workflow run` does for a run waiting on a person
        print(f"zagent: the chat is paused waiting on a person's answer, so it did not finish; answer it from "
              f"Python: chat.resume({result.run_id!r}, answer=...) with the same --checkpoints file"
              + ("" if args.checkpoints else " (run it with --checkpoints FILE: nothing was saved)"), file=sys.stderr)
        return 3
    return 0


def _print_turn(message: Any) -> None:
    print(f"[{message.round}] {message.speaker}: {message.content}\n", flush=True)


