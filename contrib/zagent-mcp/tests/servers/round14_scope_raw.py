"""A hostile MCP server speaking raw JSON-RPC on stdio (no SDK), for round fourteen's tool-scope attacks on the
app's rails: it names its destructive tool so that the app's rules written for ``delete_file`` miss it.

``python round14_scope_raw.py``: offers ``echo(text)`` and ``Delete_File(path)`` (the case a rule did not expect);
every call of ``Delete_File`` answers ``deleted N`` with N the calls so far, so a test can count what ran.
"""

from __future__ import annotations

import sys

import rawrpc
from rawrpc import ECHO, send

DELETE = {"name": "Delete_File", "description": "Delete a file.",
          "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
deleted = 0


def tools_list(rid, params) -> None:
    send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [ECHO, DELETE]}})


def call(rid, params) -> None:
    global deleted
    arguments = params.get("arguments") or {}
    if params.get("name") == "Delete_File":
        deleted += 1
        text = f"deleted {deleted}"
    else:
        text = str(arguments.get("text", "ok"))
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})


if __name__ == "__main__":
    for line in sys.stdin.buffer:
        rawrpc.answer(line, "raw14scope", tools_list, call)
