"""The ``zagent`` command line (``main()``) and the plugin adding ``zagent plugins``, ``models`` and ``tools``.

Plugins add sub-commands with ``zagent_register_commands(cli, kernel)`` (docs/hooks.md); one that fails is
reported and the rest works. Exit codes: 0 ok, 1 failed, 2 usage error, 130 interrupted, 141 stdout closed.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import zagent

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

Handler = Callable[[argparse.Namespace, "Kernel"], Optional[int]]


class CommandError(Exception):
    """A plugin asked for a command name that is taken or invalid."""


class _InputsAction(argparse.Action):
    """Collects ``--input NAME=VALUE`` pairs into one dict (a later NAME wins)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, value: Any,
                 option_string: Optional[str] = None) -> None:
        name, sep, text = str(value).partition("=")
        if not sep or not name.strip():
            parser.error(f"{option_string} {value!r} must look like NAME=VALUE")
        setattr(namespace, self.dest, {**(getattr(namespace, self.dest, None) or {}), name.strip(): text})


class CommandGroup:
    """The ``cli`` object handed to ``zagent_register_commands``: one level of sub-commands.

    :param parser: the argparse parser of this level.
    :param path: the words leading here (``()`` at the top).
    :param owner: the plugin adding commands through this object.
    :param table: shared ``{path: (kind, owner, object)}`` of every command and group.
    """

    def __init__(self, parser: argparse.ArgumentParser, path: tuple[str, ...], owner: str,
                 table: dict[tuple[str, ...], Any]):
        self.parser, self.path, self.owner, self._table = parser, path, owner, table
        key = ("__sub__",) + path
        if key not in table:
            table[key] = parser.add_subparsers(title="commands", metavar="COMMAND", dest="_cmd_" + "_".join(path))
        self._sub: argparse._SubParsersAction[argparse.ArgumentParser] = table[key]

    def command(self, name: str, handler: Handler, help: str = "", **kwargs: Any) -> argparse.ArgumentParser:
        """Add sub-command ``name`` run by ``handler(args, kernel)``; return its parser."""
        self._check(name, "command")
        parser = self._sub.add_parser(name, help=help, description=kwargs.pop("description", help), **kwargs)
        parser.set_defaults(_zagent_handler=handler, _zagent_owner=self.owner)
        self._table[self.path + (name,)] = ("command", self.owner, parser)
        return parser

    @staticmethod
    def add_inputs(parser: argparse.ArgumentParser, help: str = "an input value (repeatable)") -> None:
        """Add ``--input/-i NAME=VALUE`` (repeatable); the handler reads ``args.input`` as a dict.
        A malformed pair is a usage error (exit 2) naming it."""
        parser.add_argument("--input", "-i", action=_InputsAction, default={}, metavar="NAME=VALUE", help=help)

    @staticmethod
    def add_model_options(parser: argparse.ArgumentParser, ticker: bool = True) -> None:
        """Add ``--profile KEY=VALUE`` (repeatable) and ``--timeout SECONDS`` (``climodel``); they apply to
        every model the command uses. ``ticker``: show elapsed time on stderr while a model call runs
        (off for commands that stream the reply themselves; ``--quiet`` turns it off too)."""
        from .climodel import add_model_options

        add_model_options(parser)
        parser.set_defaults(_zagent_ticker=ticker)

    def group(self, name: str, help: str = "") -> "CommandGroup":
        """A nested level of commands (``zagent NAME ...``), shared with other plugins using the same name."""
        found = self._table.get(self.path + (name,))
        if found is not None and found[0] == "group":
            return CommandGroup(found[2], self.path + (name,), self.owner, self._table)
        self._check(name, "group")
        parser = self._sub.add_parser(name, help=help, description=help)
        parser.set_defaults(_zagent_group=parser)
        self._table[self.path + (name,)] = ("group", self.owner, parser)
        return CommandGroup(parser, self.path + (name,), self.owner, self._table)

    def _check(self, name: str, kind: str) -> None:
        if not isinstance(name, str) or not name or name.startswith("-") or " " in name:
            raise CommandError(f"invalid {kind} name {name!r}: use one word not starting with '-'")
        found = self._table.get(self.path + (name,))
        if found is not None:
            words = " ".join(self.path + (name,))
            raise CommandError(f"'zagent {words}' is already a {found[0]} of plugin {found[1]!r}; "
                               f"plugin {self.owner!r} cannot add it again")

    def __repr__(self) -> str:
        return f"<zagent CLI {' '.join(('zagent',) + self.path)} (plugin {self.owner!r})>"


# -- the built-in commands -----------------------------------------------------


def zagent_register_commands(cli: CommandGroup, kernel: "Kernel") -> None:
    """Add ``zagent plugins``, ``zagent models`` and ``zagent tools``."""
    from .climodels import register as register_models

    p = cli.command("plugins", cmd_plugins, help="list loaded plugins and plugins that failed to load")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    register_models(cli)
    t = cli.command("tools", cmd_tools, help="list registered tools and whether they are available")
    t.add_argument("--toolset", help="only tools of this toolset")
    t.add_argument("--json", action="store_true", help="print JSON instead of a table")


def cmd_plugins(args: argparse.Namespace, kernel: "Kernel") -> int:
    """Print name, distribution, version and hooks of each plugin, then the problems."""
    infos = kernel.plugins()
    if args.json:
        _print_json({"plugins": [i._asdict() for i in infos], "problems": [p._asdict() for p in kernel.problems]})
        return 0
    rows = [(i.name, i.distribution or "-", i.version or "-", ", ".join(_short(h) for h in i.hooks) or "-")
            for i in infos]
    _print_table(("NAME", "DISTRIBUTION", "VERSION", "HOOKS"), rows)
    if kernel.problems:
        print(f"\n{len(kernel.problems)} plugin problem(s):")
        for p in kernel.problems:
            print(f"  {p.plugin} ({p.distribution or 'no distribution'}): {p.error}")
    return 0


def cmd_tools(args: argparse.Namespace, kernel: "Kernel") -> int:
    """Print name, toolset, availability and description of each tool."""
    tools = kernel.tools(toolset=args.toolset, available_only=False)
    if args.json:
        _print_json([{"name": t.name, "toolset": t.toolset, "available": t.is_available(),
                      "description": t.description, "parameters": t.parameters} for t in tools])
        return 0
    if not tools:
        print("no tools registered" + (f" in toolset {args.toolset!r}" if args.toolset else ""))
        return 0
    rows = [(t.name, t.toolset, "yes" if t.is_available() else "no", _first_line(t.description))
            for t in tools]
    _print_table(("NAME", "TOOLSET", "AVAILABLE", "DESCRIPTION"), rows)
    return 0


# -- main ----------------------------------------------------------------------


def build_parser(kernel: "Kernel") -> tuple[argparse.ArgumentParser, list[str]]:
    """The full parser: built-in commands, then every plugin's; return it and the warnings."""
    parser = argparse.ArgumentParser(
        prog="zagent", description="zagent: an embeddable micro-kernel for LLM agents.",
        epilog="Commands come from plugins; 'zagent plugins' lists what is loaded.")
    parser.add_argument("--version", action="version", version=f"zagent {zagent.__version__}")
    table: dict[tuple[str, ...], Any] = {}  # path -> (kind, owner, object); ("__sub__", *path) -> subparsers
    warnings: list[str] = []
    if not kernel.has_plugin(sys.modules[__name__]):
        zagent_register_commands(CommandGroup(parser, (), "cli", table), kernel)
    calls = kernel.call_each("zagent_register_commands",
                             lambda plugin: {"cli": CommandGroup(parser, (), plugin, table), "kernel": kernel})
    for plugin, _result, exc in calls:
        if exc is not None:  # one broken plugin must not break the CLI
            warnings.append(f"plugin {plugin!r} failed to add its commands: {type(exc).__name__}: {exc}")
    return parser, warnings


def start_kernel(argv: Sequence[str]) -> Any:
    """``Kernel()`` with installed plugins; if strict mode fails, fall back for ``--help``."""
    # The CLI keeps a run log (zagent logs) unless ZAGENT_LOG says otherwise, as ``llm`` logs every prompt.
    config = {} if os.environ.get("ZAGENT_LOG") is not None else {"log": True}
    try:
        return _kernel(config)
    except zagent.PluginError as exc:
        if any(a in ("-h", "--help") for a in argv) or not argv:
            print(f"zagent: warning: {exc}", file=sys.stderr)
            return _kernel(config, strict=False)
        raise


def _kernel(config: dict[str, Any], strict: Optional[bool] = None) -> Any:
    """``Kernel(config=config)``; without the CLI's own ``log`` default when no loaded plugin keeps a run log."""
    try:
        return zagent.Kernel(strict=strict, config=config)
    except zagent.ConfigError as exc:
        if exc.key != "log" or "log" not in config:
            raise
        return zagent.Kernel(strict=strict, config={k: v for k, v in config.items() if k != "log"})


def main(argv: Optional[Sequence[str]] = None, kernel: Optional["Kernel"] = None) -> int:
    """Run the ``zagent`` command line; return its exit code (``kernel`` is for tests and embedding)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    own = kernel is None
    from .cliterminal import safe_terminal

    from .clisignals import Terminated, stop_on_sigterm

    terminal = safe_terminal()  # untrusted text never drives the terminal: controls shown escaped (cliterminal)
    undo = _log_to_stderr()
    unterm = stop_on_sigterm() if own else (lambda: None)  # SIGTERM stops a command as Ctrl-C does (exit 143)
    try:
        if kernel is None:
            kernel = start_kernel(argv)
        return _run(argv, kernel)
    except BrokenPipeError:  # `zagent logs list | head`: the reader left; say nothing more
        _silence_stdout()
        return 141
    except Terminated:  # before or after the command ran (starting the kernel)
        print("zagent: terminated", file=sys.stderr)
        return 143
    except zagent.ZagentError as exc:
        from .clierrors import error_text

        print(f"zagent: error: {error_text(exc)}", file=sys.stderr)
        return 1
    except SystemExit as exc:  # a command's "zagent: ..." message may quote a spec (an agent's name): printed
        if not isinstance(exc.code, str):  # here through the safe stderr, not by the interpreter after the
            raise  # finally has put the raw stream back
        print(exc.code, file=sys.stderr)
        return 1
    except Exception:  # a bug, or a library's error quoting spec or model text: printed here, while stderr is
        if not own:     # still the safe one (the interpreter would print it after the finally, raw)
            raise
        import traceback

        from .clierrors import masked

        print(masked(traceback.format_exc()), end="", file=sys.stderr)  # a chain may quote a key or a URL
        return 1
    finally:
        if own and kernel is not None:
            kernel.close()
        unterm()
        undo()
        terminal()


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush does not fail on the closed pipe again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (embedded, captured): nothing to silence
        pass


def _log_to_stderr() -> Callable[[], None]:
    """Show the kernel's warnings (plugin problems) as ``zagent: warning: ...`` unless logging is configured."""
    logger = logging.getLogger("zagent")
    if logger.handlers or logging.getLogger().handlers:
        return lambda: None
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneRecord("zagent: warning: %(message)s"))
    handler.setLevel(logging.WARNING)
    logger.addHandler(handler)
    return lambda: logger.removeHandler(handler)


class _OneRecord(logging.Formatter):
    """A log record's lines after the first are indented (``clierrors.indented``): text in a warning (a model
    name from a spec, a server's error) cannot start a line of its own that reads like another ``zagent:`` one."""

    def format(self, record: logging.LogRecord) -> str:
        from .clierrors import indented, masked

        return indented(masked(super().format(record)))


def _run(argv: list[str], kernel: "Kernel") -> int:
    parser, warnings = build_parser(kernel)
    from .clierrors import masked

    for w in warnings:
        print(f"zagent: warning: {masked(w)}", file=sys.stderr)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    handler = getattr(args, "_zagent_handler", None)
    if handler is None:
        (getattr(args, "_zagent_group", None) or parser).print_help(sys.stderr)
        return 2
    from . import climodel
    from .clierrors import error_text

    undo = climodel.apply(args, kernel)
    ticker = _start_ticker(args, kernel)
    try:
        code = handler(args, kernel)
    except KeyboardInterrupt as exc:
        from .clisignals import Terminated

        term = isinstance(exc, Terminated)
        print(f"zagent: {'terminated' if term else 'interrupted'}", file=sys.stderr)
        _json_failure(args, "interrupted", type(exc).__name__, f"{'terminated (SIGTERM)' if term else 'interrupted (Ctrl-C)'}"
                      " before the command finished")
        return 143 if term else 130
    except zagent.ZagentError as exc:
        if ticker is not None:
            ticker.stop()  # erase a ticker line before the error
        print(f"zagent: error: {error_text(exc)}", file=sys.stderr)
        from .clierrors import describe

        _json_failure(args, "failed", type(exc).__name__, masked(describe(exc)))
        return 1
    except SystemExit as exc:  # a command's "zagent: ..." message: main() prints it on stderr
        if isinstance(exc.code, str):
            _json_failure(args, "failed", "UsageError", masked(exc.code.removeprefix("zagent: ")))
        raise
    except BrokenPipeError:  # stdout's reader left: main() says nothing more
        raise
    except Exception as exc:  # a bug or a library's error (main prints it): with --json, still JSON on stdout
        _json_failure(args, "failed", type(exc).__name__, masked(f"{exc}"))
        raise
    finally:
        if ticker is not None:
            ticker.stop()
            kernel.remove_plugin("zagent-cli-ticker")
        undo()
    return int(code or 0)


def _json_failure(args: argparse.Namespace, status: str, kind: str, message: str) -> None:
    """With ``--json``, the failure on stdout too, as ``{"status", "error": {"type", "message"}}``: a script
    reading stdout gets JSON saying what failed (the exit code and stderr say it as well), never nothing."""
    if getattr(args, "json", None) is True:
        _print_json({"status": status, "error": {"type": kind, "message": message}})


def _start_ticker(args: argparse.Namespace, kernel: "Kernel") -> Any:
    """The waiting-for-the-model ticker (``cliticker``) for commands that asked for it, unless ``--quiet``."""
    if not getattr(args, "_zagent_ticker", False) or getattr(args, "quiet", False):
        return None
    from .cliticker import WaitTicker

    ticker = WaitTicker()
    kernel.add_plugin(ticker, name="zagent-cli-ticker")
    return ticker.start()


# -- output helpers ----------------------------------------------------------------


def _short(hook: str) -> str:
    return hook[len("zagent_"):] if hook.startswith("zagent_") else hook


def _first_line(text: str, width: int = 70) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def _print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())


def _print_json(data: Any) -> None:
    import msgspec

    print(msgspec.json.format(msgspec.json.encode(data, enc_hook=repr)).decode())


if __name__ == "__main__":  # pragma: no cover
    # `python -m zagent.plugins.cli`: run the imported module's main, so the plugin the
    # entry point loads and this script are one module (no duplicate commands). The working folder `-m` put
    # first on sys.path is gone already: `import zagent` drops it before importing anything (zagent._trust).
    from zagent.plugins.cli import main as _main

    sys.exit(_main())
