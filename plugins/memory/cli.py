"""``zagent memory list|search|clear``: look into and tidy a long-term memory file.

The file is ``--db PATH``, else ``kernel.config["memory"]["path"]``, else
``$ZAGENT_MEMORY_DB``, else ``$XDG_DATA_HOME/zagent/memory.db``
(``~/.local/share/zagent/memory.db``). These commands never create a file:
a missing one is reported. Handlers return the exit status.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Optional


def register_commands(cli: Any, kernel: Any) -> None:
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


def _db_option(parser: Any) -> None:
    parser.add_argument("--db", default=None, help="memory file (default: $ZAGENT_MEMORY_DB or "
                                                   "~/.local/share/zagent/memory.db)")


def default_path(kernel: Any = None) -> str:
    """Where the CLI looks for the memory file when ``--db`` is not given."""
    from .paths import default_path as fallback

    configured = ((getattr(kernel, "config", None) or {}).get("memory") or {}).get("path")
    return os.fspath(configured) if configured else fallback()


def _open(args: Any, kernel: Any, name: str = "sqlite") -> Optional[Any]:
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


def list_command(args: Any, kernel: Any) -> int:
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


def _list_runs(args: Any, kernel: Any) -> None:
    store = _open(args, kernel, "checkpoints")
    if store is None:
        return
    try:
        for run in store.list():
            print(f"run {run.run_id}\t{run.kind}\tstep {run.last_step}\t({run.steps} checkpoints)")
    finally:
        store.close()


def search_command(args: Any, kernel: Any) -> int:
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


def clear_command(args: Any, kernel: Any) -> int:
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
