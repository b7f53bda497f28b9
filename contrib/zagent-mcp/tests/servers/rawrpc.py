"""The JSON-RPC plumbing of the raw (no SDK) hostile MCP test servers: ``send``/``send_raw`` write one message line
to ``OUT`` (stdout, or a buffer an HTTP handler swaps in), and ``answer`` dispatches one client message to the
server's own ``tools/list`` and ``tools/call`` handlers."""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO, Callable

ECHO = {"name": "echo", "description": "Return the text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}
OUT: BinaryIO = sys.stdout.buffer


def send(message: dict) -> None:
    send_raw(json.dumps(message))


def send_raw(text: str) -> None:
    OUT.write(text.encode() + b"\n")
    OUT.flush()


def answer(line: bytes, server: str, tools_list: Callable[[Any, Any], None], call: Callable[[Any, dict], None]) -> None:
    """Answer one JSON-RPC message: ``initialize`` and ``ping`` here, ``tools/list`` (id, params) and ``tools/call``
    (id, params) by the server's handlers, anything else "no such method"; notifications and replies are ignored."""
    try:
        message = json.loads(line)
    except ValueError:
        return
    method, rid = message.get("method"), message.get("id")
    if rid is None or method is None:
        return  # a notification, or the client's answer to one of the server's requests
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": message["params"].get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": True}}, "serverInfo": {"name": server, "version": "1"}}})
    elif method == "tools/list":
        tools_list(rid, message.get("params"))
    elif method == "tools/call":
        call(rid, message.get("params") or {})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}})
