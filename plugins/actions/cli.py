"""CLI commands of the actions plugin: ``zagent run AGENT_FILE`` and ``zagent agent show AGENT_FILE``.

``run`` prints the typed output (``--json`` for JSON) and a progress line per
step on stderr; ``agent show`` prints the prompt the model would get.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import msgspec


def add_commands(cli: Any) -> None:
    run = cli.command("run", cmd_run, help="run an agent file (JSON/YAML) once and print its output")
    run.add_argument("agent_file", help="path to the agent's .json/.yaml file")
    _common(cli, run)
    run.add_argument("--json", action="store_true", help="print the output as JSON")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    cli.add_model_options(run)
    add_trust_flag(run)
    show = cli.group("agent", help="inspect agent files").command(
        "show", cmd_show, help="print the prompt an agent file renders")
    show.add_argument("agent_file")
    _common(cli, show)


def add_trust_flag(parser: argparse.ArgumentParser) -> None:
    """``--trust``: import any ``module:attr`` the spec names (default: only modules in the spec's folder)."""
    parser.add_argument("--trust", action="store_true",
                        help="trust every import path in the file (default: only modules in the file's own folder)")


def cli_trust(args: argparse.Namespace, path: str, *, dry: bool = False) -> Any:
    """The trust a command gives a spec file: its folder, everything with ``--trust``, nothing with ``dry``."""
    from zagent.imports import Trust

    return Trust.for_file(path, everything=bool(getattr(args, "trust", False)), dry=dry)


def _common(cli: Any, parser: argparse.ArgumentParser) -> None:
    cli.add_inputs(parser)
    parser.add_argument("--model", "-m", default=None,
                        help="'provider:model' to use instead of the file's (default: ZAGENT_MODEL)")


def _load(args: argparse.Namespace, kernel: Any, *, dry: bool = False) -> Any:
    """The agent of ``args.agent_file``; ``dry`` (``agent show``) imports nothing the file names."""
    import os

    from zagent.imports import trusting
    from zagent.kernel import load_spec_file

    from .customize import CustomizeAgent

    spec = load_spec_file(args.agent_file)
    if spec.get("type", "customize") == "human":  # a person answers: no model, no file-relative imports
        return kernel.agent(spec)
    from zagent.plugins.climodel import replace_model

    spec = replace_model(spec, args.model)
    with trusting(cli_trust(args, args.agent_file, dry=dry)):
        return CustomizeAgent.from_dict(spec, kernel, base_dir=os.path.dirname(os.path.abspath(args.agent_file)))


def _typed(agent: Any, raw: dict[str, str]) -> dict[str, Any]:
    from zagent import fields as zfields

    spec = agent.action().input_spec
    unknown = [n for n in raw if n not in spec.by_name]
    if unknown:
        raise SystemExit(f"zagent: unknown input(s) {', '.join(unknown)}; "
                         f"{agent.name} takes: {', '.join(spec.names) or 'none'}")
    relaxed = zfields.compile_fields([msgspec.structs.replace(spec.by_name[n], required=False) for n in raw])
    return zfields.to_dict(zfields.convert(raw, relaxed)) if raw else {}


class _Progress:
    """Event observer printing one line per step and tool call on stderr."""

    def zagent_event(self, event: Any) -> None:
        d = event.data
        if event.type == "step_end":
            tools = d.get("tools")
            what = f"tools: {', '.join(tools)}" if tools else ("answered" if d.get("answered") else "no answer yet")
            print(f"[{event.agent}] step {d.get('step')}: {what}", file=sys.stderr)
        elif event.type == "tool_end":
            print(f"[{event.agent}]   {d.get('tool')} -> {d.get('state')}", file=sys.stderr)


def _require_all(agent: Any, inputs: dict[str, Any]) -> None:
    """A one-shot run has no conversation to extract a missing input from: say which ones to pass."""
    missing = agent.action().missing_inputs(inputs)
    if missing:
        flags = " ".join(f"--input {n}=..." for n in missing)
        raise SystemExit(f"zagent: {agent.name} needs input(s) {', '.join(missing)}; pass {flags}")


def cmd_run(args: argparse.Namespace, kernel: Any) -> int:
    agent = _load(args, kernel)
    inputs = _typed(agent, args.input)
    _require_all(agent, inputs)
    if not args.quiet:
        kernel.add_plugin(_Progress(), name="zagent-run-progress")
    result = agent(**inputs)
    data = result.to_dict()
    if args.json:
        print(msgspec.json.format(msgspec.json.encode(data)).decode())
    else:
        for name, value in data.items():
            text = value if isinstance(value, str) else msgspec.json.encode(value).decode()
            print(f"{name}: {text}" if len(data) > 1 else text)
    return 0


def cmd_show(args: argparse.Namespace, kernel: Any) -> int:
    agent = _load(args, kernel, dry=True)
    inputs = _typed(agent, args.input)
    system = agent.system_preview(inputs) if hasattr(agent, "system_preview") else agent.system_prompt
    if system:
        print(f"--- system ---\n{system}\n--- user ---")
    print(agent.prompt_preview(inputs))
    return 0
