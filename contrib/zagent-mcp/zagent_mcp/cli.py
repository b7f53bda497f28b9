"""``zagent mcp list``: configured MCP servers, their state and their tools.

Shows the servers of the CLI's kernel (configured with ``ZAGENT_MCP_CONFIG``),
or, with ``--config FILE``, connects to the servers of that file just for the
listing. Exit code 1 when a server is not ready, so scripts can check health.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def add_commands(cli: Any) -> None:
    group = cli.group("mcp", help="MCP servers and their tools")
    p = group.command("list", cmd_list, help="list configured MCP servers, their state and tools")
    p.add_argument("--config", metavar="FILE", help="an mcpServers JSON/TOML file (default: ZAGENT_MCP_CONFIG)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def cmd_list(args: argparse.Namespace, kernel: Any) -> int:
    """Print each server with state, target and tools; errors of failed servers below them."""
    from .plugin import runtime_of

    if args.config:
        from .config import load_settings
        from .runtime import McpRuntime

        runtime = McpRuntime(load_settings({"config_file": args.config}, env_file=False))
        try:
            runtime.start()
            rows = runtime.status()
        finally:
            runtime.close()
    else:
        runtime = runtime_of(kernel)
        rows = runtime.status() if runtime is not None else []
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not rows:
        print("no MCP servers configured (set ZAGENT_MCP_CONFIG or pass --config FILE)")
    else:
        _print(rows)
    return 0 if all(r["state"] in ("ready", "disabled") for r in rows) else 1


def _print(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        info = f" ({row['server']})" if row["server"] else ""
        print(f"{row['name']}  {row['state']}  {row['transport']} {row['target']}{info}")
        if row["error"]:
            print("  error: " + row["error"].replace("\n", "\n  "))
        for name in row["tools"]:
            print(f"  - {name}")
