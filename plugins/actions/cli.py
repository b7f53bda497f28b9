"""CLI commands of the actions plugin: ``zagent run AGENT_FILE`` and ``zagent agent show AGENT_FILE``.

``run`` builds the file's agent (any ``type``): a declared agent takes typed ``--input`` values (one that does not fit
is a ``ConfigError``), a chat agent ``--input task=...`` and ``--image``. ``agent show`` prints the prompt.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup


def add_commands(cli: "CommandGroup") -> None:
    run = cli.command("run", cmd_run, help="run an agent file (JSON/YAML) once and print its output")
    run.add_argument("agent_file", help="path to the agent's .json/.yaml file")
    _common(cli, run)
    run.add_argument("--json", action="store_true", help="print the output as JSON")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    from zagent.plugins.cliimages import add_image_option

    add_image_option(run, "send an image with a chat agent's message: a local file or an http(s):// URL "
                          "(repeatable)")
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
    from zagent.speckit import Trust

    return Trust.for_file(path, everything=bool(getattr(args, "trust", False)), dry=dry)


def _common(cli: "CommandGroup", parser: argparse.ArgumentParser) -> None:
    cli.add_inputs(parser)
    parser.add_argument("--model", "-m", default=None,
                        help="'provider:model' to use instead of the file's (default: ZAGENT_MODEL)")


def _load(args: argparse.Namespace, kernel: "Kernel", *, dry: bool = False) -> Any:
    """The agent of ``args.agent_file``; ``dry`` (``agent show``) imports nothing the file names."""

    from zagent.speckit import load_spec_file, trusting

    from .customize import CustomizeAgent

    spec = load_spec_file(args.agent_file)
    if spec.get("type", "customize") == "human":  # a person answers: no model, no file-relative imports
        return kernel.agent(spec)
    from zagent.plugins.climodel import replace_model

    spec = replace_model(spec, args.model)
    from zagent.speckit import spec_file

    with trusting(cli_trust(args, args.agent_file, dry=dry)), spec_file(args.agent_file):
        if spec.get("type", "customize") == "customize":  # its tool modules may sit next to the file
            return CustomizeAgent.from_dict(spec, kernel,
                                            base_dir=os.path.dirname(os.path.abspath(args.agent_file)))
        return kernel.agent(spec)  # any other registered type (react, groupchat, a plugin's own...)


def _typed(agent: Any, raw: dict[str, str]) -> dict[str, Any]:
    """``--input`` text converted to the declared input types; a value that does not fit is a
    ``ConfigError`` about that input (the user's to fix), not a ``ParseError`` about a reply."""
    from zagent.agentkit import fields as zfields
    from zagent.errors import ConfigError, ParseError

    spec = agent.action().input_spec
    unknown = [n for n in raw if n not in spec.by_name]
    if unknown:
        raise SystemExit(f"zagent: unknown input(s) {', '.join(unknown)}; "
                         f"{agent.name} takes: {', '.join(spec.names) or 'none'}")
    relaxed = zfields.compile_fields([msgspec.structs.replace(spec.by_name[n], required=False) for n in raw])
    try:
        return zfields.to_dict(zfields.convert(raw, relaxed)) if raw else {}
    except ParseError as exc:
        problems = "; ".join(f"{name}: {why}" for name, why in exc.invalid.items()) or str(exc)
        raise ConfigError(f"bad --input value for agent {agent.name!r} ({problems}); pass a value of the type "
                          "its file declares for that input") from None


class _Progress:
    """Event observer printing one line per step and tool call on stderr."""

    def __init__(self) -> None:
        self.steps: dict[Any, int] = {}  # step_end events per agent: numbers a failed step's end event lacks

    def zagent_event(self, event: Any) -> None:
        from zagent.plugins.cliterminal import printable  # a model-chosen tool name may hold a line break: one line

        d = event.data
        if event.type == "step_end":
            self.steps[event.agent] = seen = self.steps.get(event.agent, 0) + 1
            tools = d.get("tools")
            what = f"tools: {', '.join(map(str, tools))}" if tools else (
                "answered" if d.get("answered") else "no answer yet")
            step = f"step {d['step'] if d.get('step') is not None else seen}"
            if d.get("outcome") == "error" and not tools:
                what = "failed"
            print(printable(f"[{event.agent}] {step}: {what}", layout=False), file=sys.stderr)
        elif event.type == "tool_end":
            print(printable(f"[{event.agent}]   {d.get('tool')} -> {d.get('state')}", layout=False), file=sys.stderr)


def _require_all(agent: Any, inputs: dict[str, Any]) -> None:
    """A one-shot run has no conversation to extract a missing input from: say which ones to pass."""
    missing = agent.action().missing_inputs(inputs)
    if missing:
        flags = " ".join(f"--input {n}=..." for n in missing)
        raise SystemExit(f"zagent: {agent.name} needs input(s) {', '.join(missing)}; pass {flags}")


def cmd_run(args: argparse.Namespace, kernel: "Kernel") -> int:
    agent = _load(args, kernel)
    if not _is_declared(agent):
        return _run_chat(args, kernel, agent)
    if getattr(args, "image", None):
        from zagent.errors import ConfigError

        raise ConfigError(f"--image is for chat agents (react...); {agent.name} is a declared agent with inputs "
                          f"({', '.join(agent.action().input_spec.names) or 'none'}), which take text values only")
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


def _is_declared(agent: Any) -> bool:
    """Does ``agent`` take declared inputs (an ``Agent`` with a default action)?"""
    try:
        return callable(getattr(agent, "action", None)) and agent.action() is not None
    except Exception:  # e.g. a ReAct agent has no actions
        return False


def _run_chat(args: argparse.Namespace, kernel: "Kernel", agent: Any) -> int:
    """A chat agent (``react``...): its message is ``--input task=...``; print the answer."""
    from zagent.errors import ConfigError

    kind = type(agent).__name__
    if not callable(getattr(agent, "chat", None)):
        raise ConfigError(f"{args.agent_file} declares a {kind}, which `zagent run` cannot run (it has neither "
                          "declared inputs nor chat()); use the command of its plugin (see `zagent --help`, "
                          "e.g. `zagent groupchat run FILE`)")
    extra = sorted(set(args.input) - {"task"})
    if extra or not args.input.get("task"):
        raise ConfigError(f"{agent.name} is a chat agent ({kind}): give its message as --input task=\"...\""
                          + (f"; it takes no other inputs (got {', '.join(extra)})" if extra else ""))
    from zagent.plugins.cliimages import user_message

    message = user_message(args.input["task"], getattr(args, "image", None) or ())  # unreadable: an error now
    if not args.quiet:
        kernel.add_plugin(_Progress(), name="zagent-run-progress")
    response = agent.chat(message)
    if args.json:
        shown = {"content": response.content, "mode": response.mode, "questions": response.questions}
        if response.metadata.get("answered_by"):  # a handoff: who answered
            shown["answered_by"] = response.metadata["answered_by"]
        print(msgspec.json.format(msgspec.json.encode(shown)).decode())
    else:
        print(response.content)
        for question in response.questions:
            print(f"? {question}")
    return 0


def cmd_show(args: argparse.Namespace, kernel: "Kernel") -> int:
    agent = _load(args, kernel, dry=True)
    if not _is_declared(agent):
        from zagent.errors import ConfigError

        raise ConfigError(f"{args.agent_file} declares a {type(agent).__name__}, which has no prompt template "
                          "to show; `agent show` is for declared (customize) agents")
    inputs = _typed(agent, args.input)
    system = agent.system_preview(inputs) if hasattr(agent, "system_preview") else agent.system_prompt
    if system:
        print(f"--- system ---\n{system}\n--- user ---")
    print(agent.prompt_preview(inputs))
    return 0
