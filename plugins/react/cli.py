"""``zagent chat [AGENT_FILE]``: an interactive REPL on a ReAct agent.

The reply streams as it arrives and tool calls are printed on stderr; Ctrl-C pauses a run (then resume or
abort), Ctrl-C or Ctrl-D at the prompt leaves. Sensitive tools are confirmed y/n; ``--image`` (repeatable)
sends images with the first message.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from typing import TYPE_CHECKING, Any

from zagent.types import Message

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup


def add_commands(cli: "CommandGroup") -> None:
    chat = cli.command("chat", cmd_chat, help="chat with a ReAct agent (Ctrl-C pauses a run)")
    chat.add_argument("agent_file", nargs="?", help="a react agent .json/.yaml (default: all tools, ZAGENT_MODEL)")
    chat.add_argument("--model", "-m", default=None, help="'provider:model' to use")
    chat.add_argument("--tools", default=None, help="comma-separated tools: registered names, toolset:NAME or "
                      "module:function import paths (default: all registered)")
    chat.add_argument("--trajectory", default=None, help="append each run to this JSONL file")
    cli.add_model_options(chat, ticker=False)  # the reply streams as it comes
    chat.add_argument("--hide-reasoning", action="store_true",
                      help="do not show the model's reasoning (shown dimmed on stderr by default)")
    from zagent.plugins.cliimages import add_image_option

    add_image_option(chat, "send an image with your first message: a local file or an http(s):// URL "
                           "(repeatable); later turns see it in the history")
    chat.add_argument("--trust", action="store_true", help="trust every import path in the agent file "
                                                         "(default: only modules in the file's own folder)")


class _Printer:
    def zagent_event(self, event: Any) -> None:
        from zagent.plugins.cliterminal import printable  # a model-chosen tool name may hold a line break: one line

        d = event.data
        if event.type == "tool_start":
            print(f"  → {printable(d.get('tool'), layout=False)}", file=sys.stderr, flush=True)
        elif event.type == "tool_end":
            print(f"  ← {printable(d.get('tool'), layout=False)}: {d.get('state')}", file=sys.stderr, flush=True)
        elif event.type == "paused":
            print("  (paused)", file=sys.stderr, flush=True)


def _agent(args: argparse.Namespace, kernel: "Kernel") -> Any:
    from zagent.speckit import load_spec_file

    if args.agent_file and args.tools:  # never silently ignored: the user meant to narrow what the agent may call
        from zagent.errors import ConfigError

        raise ConfigError(f"--tools cannot be combined with an agent file ({args.agent_file}): the file's own "
                          "\"tools\" decide what its agent is offered. Edit the file (or a copy) to change them, or "
                          "chat without the file to use --tools")
    if args.agent_file:
        spec = load_spec_file(args.agent_file)
    else:
        names = [n.strip() for n in args.tools.split(",") if n.strip()] if args.tools else [t.name for t in kernel.tools()]
        spec = {"type": "react", "name": "chat", "tools": names}
    if args.model:
        from zagent.plugins.climodel import replace_model

        spec = replace_model(spec, args.model)
    spec.setdefault("type", "react")
    from zagent.speckit import Trust

    # --tools is the user's own flag: its import paths are trusted (the working directory searched after sys.path)
    trust = (Trust.for_file(args.agent_file, everything=bool(args.trust)) if args.agent_file
             else Trust.for_folder(os.getcwd(), everything=bool(args.trust) or bool(args.tools), last=True))
    from zagent.speckit import spec_file
    from zagent.speckit.paths import reserving

    # its relative paths lie next to it, and it is the agent's identity; it never writes into --trajectory
    with spec_file(args.agent_file), reserving({args.trajectory: "your --trajectory file"}):
        agent = kernel.agent(spec, trust=trust)
    if args.trajectory:  # the user's own flag: any path
        agent.trajectory_path = args.trajectory
    # only with the rails plugin loaded (by its entry point's name or its module's): else a rail setting is refused
    if any(map(kernel.has_plugin, ("rails", "zagent.plugins.rails"))):
        from zagent.plugins.rails import console_approver, console_approver_now

        # No "[l]ater": the REPL waits on the run and would offer no way to approve afterwards (an agent file's
        # "console" too: its "l" left the chat waiting for ever).
        if agent.rails.get("approver") in (None, "console", console_approver):
            agent.rails["approver"] = console_approver_now
    return agent


def _interrupt_hint() -> str:
    """What Ctrl-C does here: a process started with SIGINT ignored (a background job) never sees it."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        return "Ctrl-C is ignored in this process (it was started with SIGINT ignored); Ctrl-D quits."
    return "Ctrl-C pauses a run; Ctrl-D quits."


def cmd_chat(args: argparse.Namespace, kernel: "Kernel") -> int:
    import signal

    from zagent.plugins.cliimages import image_parts

    images = image_parts(getattr(args, "image", None) or ())  # an unreadable file: an error before the REPL
    agent = _agent(args, kernel)
    if images:
        agent.llm.request([Message.user("", image=images)])  # a model that takes no images: an error now
    kernel.add_plugin(_Printer(), name="zagent-chat-printer")
    from zagent.plugins.clierrors import masked  # a spec's model name may quote a secret: masked as errors are

    print(masked(f"Chatting with {agent.name} ({agent.llm.name}). {_interrupt_hint()}"), file=sys.stderr)
    interrupts = _Interrupts()
    previous = interrupts.install()
    try:
        return _repl(agent, interrupts, show_reasoning=not getattr(args, "hide_reasoning", False), images=images)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _show(name: str, streamed: list[str], delta: str) -> None:
    """Print streamed text as it arrives, the agent's name before the first piece."""
    if not streamed:
        print(f"{name}> ", end="", flush=True)
    streamed.append(delta)
    print(delta, end="", flush=True)


def _show_reasoning(delta: str) -> None:
    """Reasoning goes to stderr, dimmed on a terminal, so it never mixes with the answer on stdout."""
    if sys.stderr.isatty():  # the dim sequence goes to the real stream, the model's text made printable
        from zagent.plugins.cliterminal import printable, raw_stream

        print(f"\x1b[2m{printable(delta)}\x1b[0m", end="", file=raw_stream(sys.stderr), flush=True)
        return
    print(delta, end="", file=sys.stderr, flush=True)


def _repl(agent: Any, interrupts: _Interrupts, show_reasoning: bool = True, images: Any = ()) -> int:
    """Chat until end of input; exit 1 when stdin is not a terminal (a script) and a message's run failed."""
    from zagent.errors import ZagentError

    history: list[Any] = []
    images = list(images)  # sent with the first message, then in the history
    failed = False
    while True:
        try:
            text = input("you> " if sys.stdin.isatty() else "").strip()  # piped: the answers only
        except (EOFError, KeyboardInterrupt) as exc:
            if type(exc).__name__ == "Terminated":  # SIGTERM is no end of input: exit 143 (clisignals)
                raise
            print(file=sys.stderr)
            return 1 if failed and not sys.stdin.isatty() else 0
        if not text:
            continue
        turn = Message.user(text, image=images) if images else Message.user(text)
        loop = agent.loop()
        streamed: list[str] = []
        loop.on_text = functools.partial(_show, agent.name, streamed)
        if show_reasoning:
            loop.on_reasoning = _show_reasoning
        result = _run(loop, loop.arun(turn, history=history), interrupts)
        if streamed:
            print(flush=True)
        failed = failed or isinstance(result, ZagentError)
        if result is None or isinstance(result, ZagentError):  # the images wait for the next message
            continue
        images = []
        answer = result.content or "\n".join(result.questions)
        if not streamed or answer not in "".join(streamed):
            print(f"{agent.name}> {answer}", flush=True)
        history += [turn, Message.assistant(answer)]


class _Interrupts:
    """The chat's SIGINT handler: Ctrl-C raises ``KeyboardInterrupt`` as usual, except while a
    run is being scheduled, when it is held back and raised once the run's future is known
    (so a Ctrl-C right after the run starts pauses it instead of escaping the REPL)."""

    def __init__(self) -> None:
        self.defer = False
        self.pending = False

    def __call__(self, signum: int, frame: Any) -> None:
        if self.defer:
            self.pending = True
            return
        raise KeyboardInterrupt

    def install(self) -> Any:
        """Install unless SIGINT is ignored or this is not the main thread; returns what to restore."""
        import signal

        try:
            if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
                return None
            return signal.signal(signal.SIGINT, self)
        except ValueError:  # not the main thread: signals are not ours to handle
            return None


def _result(future: Any) -> Any:
    """Wait for the run in short slices: the kernel may hand SIGINT to another thread (the event
    loop's, a tool's), and a main thread blocked in one long wait would notice it only at the end."""
    from concurrent.futures import TimeoutError as NotYet  # the builtin TimeoutError only from 3.11

    while True:
        try:
            return future.result(timeout=0.1)
        except NotYet:
            continue


def _run(loop: Any, run: Any, interrupts: _Interrupts) -> Any:
    """Start ``run`` (the loop's coroutine) on the background event loop and wait for it;
    Ctrl-C while it runs pauses it and asks resume or abort. Returns its result, ``None`` when cancelled or
    aborted, or the ``ZagentError`` it failed with (printed as every command prints one: masked, indented)."""

    from zagent.errors import RunAborted, ZagentError
    from zagent.agentkit.runs import in_background

    future = None
    while True:
        try:
            if future is None:
                interrupts.defer = True
                try:
                    future = in_background(run)
                finally:
                    interrupts.defer = False
            if interrupts.pending:
                interrupts.pending = False
                raise KeyboardInterrupt
            return _result(future)
        except KeyboardInterrupt as exc:
            if type(exc).__name__ == "Terminated":  # SIGTERM (clisignals): stop the run, never ask on stdin
                loop.abort() if future is not None else run.close()
                raise
            if future is None:  # interrupted before anything was scheduled
                run.close()
                print("(cancelled)", file=sys.stderr)
                return None
            loop.pause()
            try:
                choice = input("\npaused: [r]esume or [a]bort? ").strip().lower()
            except (EOFError, KeyboardInterrupt):
                choice = "a"
            if choice.startswith("a"):
                loop.abort()
            else:
                loop.resume()
        except RunAborted:
            print("(aborted)", file=sys.stderr)
            return None
        except ZagentError as exc:
            from zagent.plugins.clierrors import error_text

            print(f"error: {error_text(exc)}", file=sys.stderr)
            return exc
