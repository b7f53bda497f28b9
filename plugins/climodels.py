"""``zagent models``: the providers installed, the default model, and whether each server answers.

Per provider: its server's base URL, whether a key is set (never the key) and, for one that can list its models,
what it serves. ``--no-check`` sends nothing; ``--json`` prints rows.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import argparse

    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup

OFFLINE = {"test", "scripted", "record", "replay"}


def register(cli: "CommandGroup") -> None:
    p = cli.command("models", cmd_models, help="installed providers, the default model, and whether servers answer")
    p.add_argument("--no-check", action="store_true", help="do not contact any server")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for each server (default 5)")


def cmd_models(args: argparse.Namespace, kernel: "Kernel") -> int:
    from .cli import _print_json, _print_table
    from .cliterminal import printable

    default = os.environ.get("ZAGENT_MODEL") or "test:offline (no ZAGENT_MODEL set)"
    rows = asyncio.run(_rows(kernel, not args.no_check, args.timeout))
    if args.json:
        _print_json({"default": default, "providers": rows})
        return 0
    print(f"default model: {printable(default)}")
    _print_table(("PROVIDER", "SERVER", "KEY", "STATUS", "MODELS"), [
        (r["provider"], printable(r["server"] or "-"), r["key"], printable(r["status"]),
         printable(", ".join(r["models"][:8]) + (f" (+{len(r['models']) - 8})" if len(r["models"]) > 8 else "")))
        for r in rows])
    return 0


async def _rows(kernel: "Kernel", check: bool, timeout: float) -> list[dict[str, Any]]:
    names = kernel.names("providers")
    return list(await asyncio.gather(*(_row(kernel, name, check, timeout) for name in names)))


async def _row(kernel: "Kernel", name: str, check: bool, timeout: float) -> dict[str, Any]:
    row: dict[str, Any] = {"provider": name, "server": None, "key": "-", "status": "", "models": []}
    if name in OFFLINE:
        row["status"] = "offline (no server)"
        return row
    try:
        llm = kernel.llm(f"{name}:probe")
    except Exception as exc:  # not configured here (a key or a URL missing): say what
        row["status"] = f"not configured: {exc}"[:200]
        return row
    http = getattr(llm, "http", None)
    row["server"] = getattr(http, "base_url", None)
    row["key"] = "set" if getattr(http, "api_key", None) else "none"
    lister = getattr(llm, "alist_models", None)
    if not check:
        row["status"] = "not checked"
    elif lister is None:
        row["status"] = "cannot list its models"
    else:
        try:
            row["models"] = await asyncio.wait_for(lister(), timeout)
            row["status"] = f"reachable, {len(row['models'])} models"
        except asyncio.TimeoutError:
            row["status"] = f"no answer within {timeout:g} s"
        except Exception as exc:
            row["status"] = f"unreachable: {exc}"[:200]
    await llm.aclose()
    return row
