"""A hostile MCP server speaking raw JSON-RPC on stdio (no SDK), for round thirteen's attacks on the client.

``python round13_raw.py MODE``; every mode answers ``initialize`` and offers ``echo(text)``:

* ``progress``: a call of ``slow`` is never answered; a progress notification for it comes every 0.05 s, forever;
* ``relist``: each call first says ``notifications/tools/list_changed``; every ``tools/list`` after the first is
  never answered (the calls still are).
"""

from __future__ import annotations

import sys
import threading
import time

import rawrpc
from rawrpc import ECHO, send

MODE = sys.argv[1]
lists = 0
_unlocked, _lock = rawrpc.send_raw, threading.Lock()


def _locked(text: str) -> None:  # the progress thread and the main one write whole lines, never interleaved
    with _lock:
        _unlocked(text)


rawrpc.send_raw = _locked


def tools_list(rid, params) -> None:
    global lists
    lists += 1
    if MODE == "relist" and lists > 1:
        return  # never answered
    send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [ECHO, {"name": "slow", "inputSchema": {"type": "object"}}]}})


def _progress_forever(token) -> None:
    i = 0
    while True:
        i += 1
        send({"jsonrpc": "2.0", "method": "notifications/progress",
              "params": {"progressToken": token, "progress": i, "message": "almost there"}})
        time.sleep(0.05)


def call(rid, params) -> None:
    name = params.get("name")
    token = ((params.get("_meta") or {}).get("progressToken")) or rid
    if name == "slow" and MODE == "progress":
        threading.Thread(target=_progress_forever, args=(token,), daemon=True).start()
        return
    if MODE == "relist":
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    text = str((params.get("arguments") or {}).get("text", "ok"))
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})


def answer(line: bytes) -> None:
    rawrpc.answer(line, "raw13", tools_list, call)


if __name__ == "__main__":
    for line in sys.stdin.buffer:
        answer(line)
