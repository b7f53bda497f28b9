"""``zagent logs list|show|search|path``: read the run log (docs/observability.md). ``show RUN`` prints the run's span
tree (``latest``: the newest run), ``--json`` rows as JSON, ``--html out.html`` a self-contained timeline page. These
commands never create a log file: a missing one is reported.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import argparse

    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup


def register_commands(cli: "CommandGroup", kernel: "Kernel") -> None:
    group = cli.group("logs", help="the local run log: requests, replies, tool calls, usage, timings")
    p = group.command("list", list_command, help="the newest runs")
    _common(p)
    p.add_argument("--limit", "-n", type=int, default=20, help="how many rows (default 20; a batch is one row, with all its items)")
    p.add_argument("--status", default=None, help="only runs with this outcome (ok, error, unfinished...)")
    p.add_argument("--agent", default=None, help="only runs of this agent (its name)")
    p.add_argument("--batch", default=None, metavar="ID",
                   help="the runs of one batch (a batch's items are shown as one row otherwise)")
    p.add_argument("--since", default=None, metavar="WHEN",
                   help="only runs started since WHEN: a duration back from now (30m, 2h, 7d) or a date (2026-12-01)")
    p = group.command("show", show_command, help="one run as a tree (or --json, or --html FILE)")
    _common(p)
    p.add_argument("run", help="a run id from 'zagent logs list', or 'latest'")
    p.add_argument("--html", metavar="FILE", default=None, help="write a self-contained timeline page")
    p.add_argument("--events", action="store_true", help="also show point events (speaker_selected...)")
    p.add_argument("--step", type=int, default=None, metavar="N",
                   help="print step N in full: each model call's prompt and reply, each tool call's arguments and result")
    p = group.command("search", search_command, help="find text in prompts, replies, tool arguments and results")
    _common(p)
    p.add_argument("text", help="the text to look for")
    p.add_argument("--limit", "-n", type=int, default=20, help="most rows (default 20)")
    group.command("path", path_command, help="print where the run log is")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default=None, help="the log file (default $ZAGENT_LOG_DB or ~/.local/share/zagent/logs.db)")
    p.add_argument("--json", action="store_true", help="print JSON")


def _store(args: argparse.Namespace, kernel: "Kernel") -> Any:
    from . import enabled_path
    from .store import RunLogStore

    path = args.db or (enabled_path(kernel.config) if isinstance(kernel.config.get("log"), (dict, str)) else None)
    return RunLogStore.open(path, create=False)


def list_command(args: argparse.Namespace, kernel: "Kernel") -> int:
    store = _store(args, kernel)
    try:
        runs = store.runs(args.limit, status=args.status, agent=args.agent, since=_since(args.since),
                          batch=args.batch, batches_whole=not args.json and args.batch is None)
    finally:
        store.close()
    if args.json:
        _print_json(runs)
        return 0
    from zagent.plugins.cli import _print_table

    from .tree import _printable

    if args.batch is None:
        from .batches import grouped

        runs = grouped(runs)
    _print_table(("RUN", "STARTED", "KIND", "NAME", "TIME", "OUTCOME", "LLM", "TOOLS", "TOKENS IN/OUT"), [
        (_printable(str(r["run_id"])), _when(r["started"]), r["kind"], _printable(str(r["name"])), f"{r['duration'] or 0:.2f}s", r["outcome"] or "",
         r["llm_calls"], r["tool_calls"], f"{r['input_tokens'] or 0}/{r['output_tokens'] or 0}") for r in runs])
    return 0


def show_command(args: argparse.Namespace, kernel: "Kernel") -> int:
    from zagent import ConfigError

    store = _store(args, kernel)
    try:
        rows = store.spans(args.run)
    finally:
        store.close()
    if not rows:
        raise ConfigError(f"no run {args.run!r} in the log; 'zagent logs list' shows the runs it has")
    if args.step is not None:
        from .stepview import render_step, step_rows

        found = step_rows(rows, args.step)
        if not found:
            raise ConfigError(f"run {args.run!r} has no step {args.step}; 'zagent logs show {args.run}' shows its steps")
        print(render_step(found, args.step))
        return 0
    if args.html:
        import os

        from zagent.agentkit.privatefiles import open_private

        from .html import render_html

        _refuse_database(args.html)
        page = render_html(rows)  # before the file is emptied: a failing page leaves an earlier one whole
        fd = open_private(args.html, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)  # it holds prompts: 0600
        with open(fd, "w", encoding="utf-8") as f:
            f.write(page)
        print(f"wrote {args.html}")
        return 0
    if args.json:
        _print_json(rows)
        return 0
    from .tree import render_tree

    print(render_tree(rows, events=args.events))
    return 0


def search_command(args: argparse.Namespace, kernel: "Kernel") -> int:
    store = _store(args, kernel)
    try:
        rows = store.search(args.text, args.limit)
    finally:
        store.close()
    if args.json:
        _print_json(rows)
        return 0
    from .tree import _printable, describe

    for r in rows:
        print(f"{_printable(str(r['run_id']))}  {_when(r['started'])}  {describe(r)}")
    return 0


def path_command(args: argparse.Namespace, kernel: "Kernel") -> int:
    from . import default_path, enabled_path

    print(enabled_path(kernel.config) or default_path())
    return 0


def _since(text: Any) -> Any:
    """``--since``: ``30m``/``2h``/``7d``/``90s`` back from now, or an ISO date or time; ``None`` when not given."""
    import time

    from zagent import ConfigError

    if text is None:
        return None
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    if text[:-1].isdigit() and text[-1:] in units:
        return time.time() - int(text[:-1]) * units[text[-1]]
    try:
        return datetime.datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise ConfigError(f"--since {text!r} is neither a duration (30m, 2h, 7d) nor a date (2026-12-01)") from None


def _when(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def _print_json(data: Any) -> None:
    from zagent.plugins.cli import _print_json as emit

    emit(data)


def _refuse_database(path: str) -> None:
    """A ``ConfigError`` if ``path`` is an SQLite file (the run log or a memory file named by a slip): ``--html``
    replaces what it names, and a page written there would destroy the database."""
    import os

    from zagent import ConfigError
    from zagent.agentkit.files import SQLITE_HEADS, open_regular

    if not os.path.isfile(path):
        return
    with open_regular(path, "--html file") as f:
        head = f.read(16)
    if head.startswith(SQLITE_HEADS):  # a database, or a log or journal of one
        raise ConfigError(f"--html {path!r} is an SQLite database (the run log itself?); the page would replace it. "
                          "Give a new .html file")
