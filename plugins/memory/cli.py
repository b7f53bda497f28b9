"""``zagent memory list|search|clear|prune``: look into and tidy a memory (and checkpoint) file.

The file is ``--db PATH``, else ``kernel.config["memory"]["path"]``, else ``paths.default_path()``. These commands never
create a file: a missing one is reported. Handlers return the exit status; ``prune`` is ``CheckpointStore.prune``.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:  # pragma: no cover
    import argparse

    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup


def register_commands(cli: "CommandGroup", kernel: "Kernel") -> None:
    """Add the ``memory`` group to the command line (``cli`` API: see ``zagent_register_commands``)."""
    group = cli.group("memory", help="inspect and clear long-term memory (SQLite)")
    p = group.command("list", list_command, help="list namespaces with message counts (and checkpointed runs)")
    _db_option(p)
    p.add_argument("--checkpoints", action="store_true", help="also list checkpointed runs in the file")
    p = group.command("search", search_command, help="full-text recall over stored messages")
    _db_option(p)
    p.add_argument("text", help="words to look for")
    p.add_argument("--namespace", "-n", default=None, help="only this namespace (default: all)")
    p.add_argument("--limit", type=int, default=10, help="most messages to show (default 10)")
    for name in ("agent", "session", "role"):
        p.add_argument(f"--{name}", default=None, help=f"only messages of this {name}")
    p.add_argument("--json", action="store_true", help="print one JSON message per line")
    p = group.command("clear", clear_command, help="delete every message of the given namespace(s)")
    _db_option(p)
    p.add_argument("namespaces", nargs="+", metavar="NAMESPACE", help="namespace(s) to clear, e.g. agent/session")
    p = group.command("prune", prune_command, help="delete old checkpoints (keep the newest steps of each run)")
    _db_option(p)
    p.add_argument("--keep-last", type=int, default=None, metavar="N", help="steps kept per run (at least 1)")
    p.add_argument("--older-than", type=duration, default=None, metavar="AGE",
                   help="delete runs not updated for AGE (e.g. 3600, 90m, 12h, 7d)")
    p.add_argument("--kind", default=None, help="only runs of this kind (react, workflow, groupchat...)")


def _db_option(parser: Any) -> None:
    parser.add_argument("--db", default=None, help="memory file (default: the kernel config's memory.path, else "
                                                   "$ZAGENT_MEMORY_DB, else ~/.local/share/zagent/memory.db)")


def default_path(kernel: Optional["Kernel"] = None) -> str:
    """Where the CLI looks for the memory file when ``--db`` is not given."""
    from .paths import default_path as fallback

    configured = ((getattr(kernel, "config", None) or {}).get("memory") or {}).get("path")
    return os.fspath(configured) if configured else fallback()


def _open(args: argparse.Namespace, kernel: "Kernel", name: str = "sqlite") -> Optional[Any]:
    path = args.db or default_path(kernel)
    if not os.path.exists(path):
        print(f"zagent memory: no memory file at {path}; pass --db PATH or set ZAGENT_MEMORY_DB",
              file=sys.stderr)
        return None
    from .errors import StoreError

    try:
        return kernel.memory(name, path=path)
    except StoreError as exc:
        print(f"zagent memory: {exc}", file=sys.stderr)
        return None


def list_command(args: argparse.Namespace, kernel: "Kernel") -> int:
    """Print ``namespace  count`` lines, then runs if ``--checkpoints``."""
    mem = _open(args, kernel)
    if mem is None:
        return 1
    try:
        names = mem.namespaces()
        for ns in names:
            print(f"{ns}\t{mem.count(ns)}")
        if not names:
            print(f"(no messages in {mem.db.path})")
        if getattr(args, "checkpoints", False):
            _list_runs(args, kernel)
    finally:
        mem.close()
    return 0


def _list_runs(args: argparse.Namespace, kernel: "Kernel") -> None:
    store = _open(args, kernel, "checkpoints")
    if store is None:
        return
    try:
        for run in store.list():
            print(f"run {run.run_id}\t{run.kind}\tstep {run.last_step}\t({run.steps} checkpoints)")
    finally:
        store.close()


def search_command(args: argparse.Namespace, kernel: "Kernel") -> int:
    """Print the best matches, one per line: ``namespace? role: content``."""
    import msgspec

    mem = _open(args, kernel)
    if mem is None:
        return 1
    filters = {k: getattr(args, k, None) for k in ("agent", "session", "role")}
    try:
        found = mem.search(args.namespace, args.text, limit=args.limit,
                           **{k: v for k, v in filters.items() if v is not None})
    finally:
        mem.close()
    for m in found:
        if getattr(args, "json", False):
            print(msgspec.json.encode(m).decode())
        else:
            print(f"{m.role}: {(m.content or '').replace(chr(10), ' ')}")
    if not found:
        print("(nothing found)", file=sys.stderr)
    return 0


def clear_command(args: argparse.Namespace, kernel: "Kernel") -> int:
    """Delete the namespaces' messages and say how many went."""
    mem = _open(args, kernel)
    if mem is None:
        return 1
    try:
        for ns in args.namespaces:
            print(f"{ns}: {mem.clear(ns)} message(s) deleted")
    finally:
        mem.close()
    return 0


def prune_command(args: argparse.Namespace, kernel: "Kernel") -> int:
    """Apply ``--keep-last``/``--older-than`` to the file's checkpoints and say how many went."""
    from zagent import ConfigError

    keep_last, older_than = getattr(args, "keep_last", None), getattr(args, "older_than", None)
    if keep_last is None and older_than is None:
        print("zagent memory prune: give --keep-last N and/or --older-than AGE", file=sys.stderr)
        return 2
    store = _open(args, kernel, "checkpoints")
    if store is None:
        return 1
    try:
        removed = store.prune(keep_last=keep_last, older_than=older_than, kind=getattr(args, "kind", None))
    except ConfigError as exc:
        print(f"zagent memory prune: {exc}", file=sys.stderr)
        return 2
    finally:
        store.close()
    print(f"{removed} checkpoint(s) deleted from {store.db.path}")
    return 0


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration(text: str) -> float:
    """Seconds from ``"90"``, ``"90s"``, ``"15m"``, ``"12h"`` or ``"7d"`` (an argparse ``type``)."""
    import argparse

    number, unit = (text[:-1], text[-1]) if text[-1:].lower() in _UNITS else (text, "s")
    try:
        seconds = float(number) * _UNITS[unit.lower()]
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):  # also refuses nan
        raise argparse.ArgumentTypeError(f"expected an age such as 3600, 90m, 12h or 7d, got {text!r}")
    return seconds
