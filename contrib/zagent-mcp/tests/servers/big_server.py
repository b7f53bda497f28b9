"""A hostile stdio MCP server in raw JSON-RPC: ``flood`` writes a 64 MiB line with no newline after initialize;
otherwise its tool ``blob`` answers with a message of exactly ``size`` bytes."""

import json
import sys
import time

FLOOD = sys.argv[1:] == ["flood"]


def send(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    mid, method = msg.get("id"), msg.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": msg["params"]["protocolVersion"],
              "capabilities": {"tools": {}}, "serverInfo": {"name": "big", "version": "1"}}})
        if FLOOD:
            for _ in range(1024):
                sys.stdout.write("x" * 65536)
            sys.stdout.flush()
            time.sleep(600)
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{"name": "blob", "inputSchema": {
              "type": "object", "properties": {"size": {"type": "integer"}}}}]}})
    elif method == "tools/call":
        size = msg["params"]["arguments"]["size"]
        reply = {"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": ""}]}}
        pad = size - len(json.dumps(reply, separators=(",", ":")))
        reply["result"]["content"][0]["text"] = "y" * pad
        send(reply)
    elif mid is not None:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
