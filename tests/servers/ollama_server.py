"""An Ollama server for tests: ``POST /api/chat`` with JSON or NDJSON replies, plus builders.

Answers ``echo: <last user text>`` (or calls the first offered tool when the
last message is not a tool result); a 404 ``{"error": "model ... not found"}``
for the model named ``missing``.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from .loopback import LoopbackServer, Reply, Request
from .media import BadPart, describe
from .openai_server import tool_arguments


def final(text: str = "", tool_calls: Optional[list[dict]] = None, model: str = "llama3.2") -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [{"function": c} for c in tool_calls]
    return {"model": model, "created_at": "2024-01-01T00:00:00Z", "message": message, "done": True,
            "done_reason": "stop", "total_duration": 1000, "prompt_eval_count": 26, "eval_count": 4}


def reply(text: str = "", tool_calls: Optional[list[dict]] = None) -> Reply:
    return Reply.json(final(text, tool_calls))


def stream_lines(text: str = "", tool_calls: Optional[list[dict]] = None) -> list[bytes]:
    lines = []
    for i in range(0, len(text), 3):
        lines.append({"model": "llama3.2", "created_at": "2024-01-01T00:00:00Z",
                      "message": {"role": "assistant", "content": text[i:i + 3]}, "done": False})
    if tool_calls:
        lines.append({"model": "llama3.2", "created_at": "2024-01-01T00:00:00Z", "done": False,
                      "message": {"role": "assistant", "content": "", "tool_calls": [{"function": c} for c in tool_calls]}})
    end = final("")
    lines.append(end)
    return [json.dumps(x).encode() + b"\n" for x in lines]


def stream_reply(text: str = "", tool_calls: Optional[list[dict]] = None) -> Reply:
    return Reply(chunks=stream_lines(text, tool_calls), content_type="application/x-ndjson")


class OllamaServer(LoopbackServer):
    def __init__(self) -> None:
        super().__init__(self.answer)

    def answer(self, request: Request) -> Reply:
        if request.path != "/api/chat":
            return Reply(status=404, body=b"404 page not found", content_type="text/plain")
        body = request.json
        if body["model"] == "missing":
            return Reply.json({"error": "model 'missing' not found"}, 404)
        if body.get("tools") and body["messages"][-1]["role"] != "tool":
            fn = body["tools"][0]["function"]
            calls = [{"name": fn["name"], "arguments": tool_arguments(fn.get("parameters"))}]
            return stream_reply("", calls) if body.get("stream", True) else reply("", calls)
        last = body["messages"][-1]
        try:
            images = describe("ollama", last.get("images") or [])
        except BadPart as exc:
            return Reply.json({"error": str(exc)}, 400)
        text = f"echo: {last['content']}" + (f" {images}" if images else "")
        return stream_reply(text) if body.get("stream", True) else reply(text)
