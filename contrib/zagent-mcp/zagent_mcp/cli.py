"""``zagent mcp list``: the CLI kernel's MCP servers, or with ``--config FILE`` that file's, with state and tools.

An invalid entry is listed as ``invalid``, an unreadable file as an error (on stderr with ``--json``). Exit code 1
when a server is not ready or the configuration has a problem.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


def add_commands(cli: Any) -> None:
    group = cli.group("mcp", help="MCP servers and their tools")
    p = group.command("list", cmd_list, help="list configured MCP servers, their state and tools")
    p.add_argument("--config", metavar="FILE", help="an mcpServers JSON/TOML file (default: ZAGENT_MCP_CONFIG)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    from .servecli import add_serve

    add_serve(group)


def cmd_list(args: argparse.Namespace, kernel: "Kernel") -> int:
    """Print configuration problems, then each server with state, target and tools; errors below them."""
    from .plugin import runtime_of

    if args.config:
        from .config import load_settings
        from .runtime import McpRuntime

        runtime = McpRuntime(load_settings({"config_file": args.config}, env_file=False))
        try:
            runtime.start()
            rows, problems = runtime.status(), list(runtime.settings.problems)
        finally:
            runtime.close()
    else:
        running = runtime_of(kernel)
        if running is not None:
            running.wait(None)  # servers connect in the background: list them once they are settled
        rows = running.status() if running is not None else []
        problems = list(running.settings.problems) if running is not None else []
    if args.json:
        for problem in problems:
            print(f"zagent: error: {problem}", file=sys.stderr)
        print(json.dumps(rows, indent=2))
    else:
        for problem in problems:
            print(f"error: {problem}")
        if not rows and not problems:
            print("no MCP servers configured (set ZAGENT_MCP_CONFIG or pass --config FILE)")
        _print(rows)
    healthy = all(r["state"] in ("ready", "disabled") for r in rows)
    return 0 if healthy and not problems else 1


def _print(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        info = f" ({row['server']})" if row["server"] else ""
        print(f"{row['name']}  {row['state']}  {row['transport']} {row['target']}{info}")
        if row["error"]:
            print("  error: " + row["error"].replace("\n", "\n  "))
        for name in row["tools"]:
            print(f"  - {name}")
