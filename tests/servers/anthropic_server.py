"""An Anthropic Messages API server for tests: faithful JSON replies and SSE events, plus builders.

``AnthropicServer(key=...)`` answers ``POST /v1/messages``: a 401
``authentication_error`` without the right ``x-api-key``, a 400 without the
``anthropic-version`` header or ``max_tokens``; a ``tool_use`` of the first tool when tools are offered and
the last turn holds no tool result; otherwise ``echo: <last user
text>`` as JSON or as the event stream (``stream: true``).
"""

from __future__ import annotations

import json
from typing import Any, Optional

from .loopback import LoopbackServer, Reply, Request
from .media import BadPart, describe
from .openai_server import tool_arguments


def error(status: int, kind: str, message: str, **kw: Any) -> Reply:
    return Reply.json({"type": "error", "error": {"type": kind, "message": message}}, status, **kw)


def message(text: Optional[str] = None, tool_uses: Optional[list[dict]] = None, *,
            stop: Optional[str] = None, usage: Optional[dict] = None) -> Reply:
    """A Messages API reply; tool_uses are ``{"id", "name", "input": dict}``."""
    content: list[dict] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", **t} for t in tool_uses or []]
    return Reply.json({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
                       "content": content, "stop_reason": stop or ("tool_use" if tool_uses else "end_turn"),
                       "stop_sequence": None, "usage": usage or {"input_tokens": 21, "output_tokens": 9}})


def event(name: str, data: dict) -> bytes:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()


def stream_events(text: str = "", tool_uses: Optional[list[dict]] = None, *, stop: Optional[str] = None) -> list[bytes]:
    """The events of one streamed message: start, ping, blocks with deltas, message_delta, message_stop."""
    events = [event("message_start", {"message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": [],
        "stop_reason": None, "usage": {"input_tokens": 21, "output_tokens": 1}}}),
        event("ping", {})]
    index = 0
    if text:
        events.append(event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}))
        for i in range(0, len(text), 4):
            events.append(event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": text[i:i + 4]}}))
        events.append(event("content_block_stop", {"index": 0}))
        index = 1
    for n, tool in enumerate(tool_uses or [], start=index):
        events.append(event("content_block_start", {"index": n, "content_block": {
            "type": "tool_use", "id": tool["id"], "name": tool["name"], "input": {}}}))
        raw = json.dumps(tool["input"])
        for i in range(0, len(raw), 5):
            events.append(event("content_block_delta", {"index": n, "delta": {
                "type": "input_json_delta", "partial_json": raw[i:i + 5]}}))
        events.append(event("content_block_stop", {"index": n}))
    events.append(event("message_delta", {"delta": {"stop_reason": stop or ("tool_use" if tool_uses else "end_turn"),
                                                    "stop_sequence": None}, "usage": {"output_tokens": 9}}))
    events.append(event("message_stop", {}))
    return events


def stream_reply(text: str = "", tool_uses: Optional[list[dict]] = None, **kw: Any) -> Reply:
    return Reply(chunks=stream_events(text, tool_uses, **kw), content_type="text/event-stream")


class AnthropicServer(LoopbackServer):
    def __init__(self, key: Optional[str] = "sk-ant-test"):
        super().__init__(self.answer)
        self.key = key

    def answer(self, request: Request) -> Reply:
        if self.key is not None and request.headers.get("x-api-key") != self.key:
            return error(401, "authentication_error", "invalid x-api-key")
        if "anthropic-version" not in request.headers:
            return error(400, "invalid_request_error", "anthropic-version: header is required")
        if request.path != "/v1/messages":
            return error(404, "not_found_error", f"Not found: {request.path}")
        body = request.json
        if "max_tokens" not in body:
            return error(400, "invalid_request_error", "max_tokens: Field required")
        last = body["messages"][-1]["content"]
        results = isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)
        if body.get("tools") and not results:
            tool = body["tools"][0]
            uses = [{"id": f"toolu_{len(self.requests)}", "name": tool["name"],
                     "input": tool_arguments(tool.get("input_schema"))}]
            return stream_reply("", uses) if body.get("stream") else message(None, uses)
        if isinstance(last, list):
            try:
                last = describe("anthropic", last)
            except BadPart as exc:
                return error(400, "invalid_request_error", str(exc))
        text = f"echo: {last}"
        return stream_reply(text) if body.get("stream") else message(text)
