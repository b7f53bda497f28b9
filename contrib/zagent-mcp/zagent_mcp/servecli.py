"""``zagent mcp serve``: chosen tools and agent files as an MCP server (stdio or streamable HTTP).

``--tool`` takes an agent file's ``tools`` values; ``--agent FILE`` is trusted as ``zagent run`` trusts it;
``--rails FILE`` tightens every call's rails; ``--max-calls N`` bounds the calls run at once. With ``stdio``,
nothing is printed on stdout. With ``http``, a host that is not loopback needs a bearer token
(``ZAGENT_MCP_TOKEN`` or ``--token-file``; ``serveauth``).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


def add_serve(group: Any) -> None:
    p = group.command("serve", cmd_serve, help="offer chosen tools and agent files to MCP clients")
    p.add_argument("--tool", "-t", action="append", default=[], metavar="REF",
                   help="a tool to serve: a registered name, toolset:NAME or module:function (repeatable)")
    p.add_argument("--agent", "-a", action="append", default=[], metavar="FILE",
                   help="an agent file (.json/.yaml) to serve as a tool (repeatable)")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="stdio (default: one client on stdin/stdout) or http (streamable HTTP at /mcp)")
    p.add_argument("--host", default="127.0.0.1", help="HTTP host (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    p.add_argument("--token-file", metavar="FILE", default=None,
                   help="HTTP: a file whose first line is the bearer token clients must send (default: the "
                        "ZAGENT_MCP_TOKEN environment variable); a host that is not loopback needs a token")
    p.add_argument("--rails", metavar="FILE", default=None,
                   help="a JSON/YAML file of rails settings applied to every call (deny_tools, tool_budget, ...)")
    p.add_argument("--name", default="zagent", help="the server name clients see")
    p.add_argument("--max-calls", type=int, default=None, metavar="N",
                   help="calls run at once (default 8); more wait, and past 4 waiting per place are refused as busy")
    p.add_argument("--trust", action="store_true",
                   help="trust every import path in the agent files (default: only modules in each file's folder)")


def cmd_serve(args: argparse.Namespace, kernel: "Kernel") -> int:
    from zagent.errors import ConfigError
    from zagent.speckit import Trust, load_spec_file, trusting

    from .serve import McpServe
    from .serveauth import require_token, token_from

    token = None
    if args.transport == "http":  # refused before anything is loaded or bound
        token = token_from(args.token_file)
        require_token(args.host, token)
    elif args.token_file:
        raise ConfigError("--token-file applies to --transport http only (stdio serves the one client that "
                          "started it)")
    rails = load_spec_file(args.rails) if args.rails else None
    if rails is not None and not isinstance(rails, dict):
        raise ConfigError(f"--rails {args.rails!r} must hold a mapping of rails settings")
    if rails is not None:  # now, not when the first client's call needs approval
        _check_rails(rails, args.rails)
    agents = []
    for path in args.agent:
        with trusting(Trust.for_file(path, everything=args.trust)):
            agents.append(_agent(kernel, path, load_spec_file))
    with trusting(Trust.for_folder(os.getcwd(), everything=True, last=True)):  # --tool: the user's own flag
        serve = McpServe(kernel, tools=args.tool, agents=agents, rails=rails, name=args.name,
                         **({} if getattr(args, "max_calls", None) is None else {"max_calls": args.max_calls}))
    print(f"zagent mcp serve: {len(serve.tool_names)} tool(s): {', '.join(serve.tool_names)}", file=sys.stderr)
    if args.transport == "http":
        print(f"zagent mcp serve: http://{args.host}:{args.port}/mcp"
              f"{' (clients must send the bearer token)' if token else ''}", file=sys.stderr)
        serve.run_http(args.host, args.port, token)
        return 0
    import anyio

    anyio.run(serve.run_stdio)
    return 0


def _check_rails(rails: dict[str, Any], path: str) -> None:
    """``ConfigError`` for a ``--rails`` file whose settings have the wrong type, or whose ``approver`` does not
    import (a user's own module, found as ``--tool``'s are: installed modules first, then the working folder)."""
    from zagent.errors import ConfigError
    from zagent.speckit import Trust, trusting
    from zagent.speckit.rails import check_rails
    from zagent.speckit.trust import import_path

    check_rails(rails, f"--rails {path}")
    approver = rails.get("approver")
    if isinstance(approver, str) and approver != "console":
        if ":" not in approver:
            raise ConfigError(f"--rails {path}: approver {approver!r} must be 'console' or 'module:function'")
        with trusting(Trust.for_folder(os.getcwd(), everything=True, last=True)):
            import_path(approver, f"--rails {path}: approver")


def _agent(kernel: "Kernel", path: str, load: Any) -> Any:
    from zagent.speckit import spec_file

    spec = load(path)
    with spec_file(path):  # its identity: relative paths lie next to the file (not the cwd), its memory namespace
        if spec.get("type", "customize") == "customize":  # its tool modules may sit next to the file
            from zagent.plugins.actions.customize import CustomizeAgent

            return CustomizeAgent.from_dict(spec, kernel, base_dir=os.path.dirname(os.path.abspath(path)))
        return kernel.agent(spec)
