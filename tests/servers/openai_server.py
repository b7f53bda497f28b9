"""An OpenAI Chat Completions server for tests: faithful JSON and SSE replies, plus reply builders.

``OpenAIServer(key="sk-test")`` answers ``POST /v1/chat/completions``: with
the wrong or no bearer key a 401 in OpenAI's error format; otherwise
``echo: <last user text>`` (JSON, or SSE when ``stream`` is true, with usage
when ``stream_options.include_usage`` is set); when tools are offered and the
last message is not a tool result, a call of the first tool instead. Script other answers with
``server.then(completion(...), stream_reply(...), Reply(status=500) ...)``.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from .loopback import LoopbackServer, Reply, Request
from .media import BadPart, describe

USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


def error(status: int, message: str, type_: str = "invalid_request_error", **kw: Any) -> Reply:
    return Reply.json({"error": {"message": message, "type": type_, "param": None, "code": None}}, status, **kw)


def completion(text: Optional[str] = None, tool_calls: Optional[list[dict]] = None, *,
               finish: Optional[str] = None, model: str = "gpt-test", usage: dict = USAGE) -> Reply:
    """A ``chat.completion`` JSON reply; tool_calls are ``{"id", "name", "arguments": str}``."""
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if tool_calls:
        message["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": c["arguments"]}} for c in tool_calls]
    return Reply.json({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": finish or ("tool_calls" if tool_calls else "stop")}],
        "usage": usage, "system_fingerprint": None,
    })


def sse(data: Any) -> bytes:
    return b"data: " + (data if isinstance(data, bytes) else json.dumps(data).encode()) + b"\n\n"


def chunk(delta: dict, finish: Optional[str] = None, model: str = "gpt-test") -> bytes:
    return sse({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]})


def stream_events(text: str = "", tool_calls: Optional[list[dict]] = None, *, usage: Optional[dict] = USAGE,
                  finish: Optional[str] = None) -> list[bytes]:
    """The SSE events OpenAI sends: role, content or tool-call deltas (arguments in pieces), finish, usage, [DONE]."""
    events = [chunk({"role": "assistant", "content": "" if not tool_calls else None})]
    for piece in _pieces(text, 3):
        events.append(chunk({"content": piece}))
    for i, call in enumerate(tool_calls or []):
        events.append(chunk({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                                             "function": {"name": call["name"], "arguments": ""}}]}))
        for piece in _pieces(call["arguments"], 4):
            events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
    events.append(chunk({}, finish or ("tool_calls" if tool_calls else "stop")))
    if usage is not None:
        events.append(sse({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000,
                           "model": "gpt-test", "choices": [], "usage": usage}))
    events.append(sse(b"[DONE]"))
    return events


def stream_reply(text: str = "", tool_calls: Optional[list[dict]] = None, **kw: Any) -> Reply:
    return Reply(chunks=stream_events(text, tool_calls, **kw), content_type="text/event-stream")


def tool_arguments(schema: Any) -> dict:
    """Arguments for a tool call: "hi" for each required string property, 1 for other required ones."""
    schema = schema or {}
    props = schema.get("properties") or {}
    return {name: "hi" if (props.get(name) or {}).get("type") == "string" else 1 for name in schema.get("required") or []}


def _pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


class BearerServer(LoopbackServer):
    """A loopback server of an OpenAI API (``PATH``): ``url`` ends with ``/v1`` like a real base URL, a wrong or
    missing bearer key is a 401 and another method or path a 404, in OpenAI's error format (``refusal``)."""

    PATH = "/v1"

    def __init__(self, key: Optional[str] = "sk-test"):
        super().__init__(self.answer)
        self.key = key

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def refusal(self, request: Request) -> Optional[Reply]:
        """The 401 or 404 ``request`` gets, or ``None`` when it is a ``POST`` of ``PATH`` with the right key."""
        if self.key is not None and request.headers.get("authorization") != f"Bearer {self.key}":
            return error(401, "Incorrect API key provided.", "invalid_api_key")
        if request.path != self.PATH or request.method != "POST":
            return error(404, f"Unknown request URL: {request.method} {request.path}")
        return None

    def answer(self, request: Request) -> Reply:
        raise NotImplementedError


class OpenAIServer(BearerServer):
    """A loopback OpenAI-compatible Chat Completions server (see the module docstring)."""

    PATH = "/v1/chat/completions"
    MODELS = ("gpt-test", "gpt-test-mini")
    """What ``GET /v1/models`` lists (OpenAI's list shape)."""

    def answer(self, request: Request) -> Reply:
        if request.method == "GET" and request.path == "/v1/models":
            if self.key is not None and request.headers.get("authorization") != f"Bearer {self.key}":
                return error(401, "Incorrect API key provided.", "invalid_api_key")
            return Reply.json({"object": "list", "data": [
                {"id": m, "object": "model", "created": 1700000000, "owned_by": "test"} for m in self.MODELS]})
        refused = self.refusal(request)
        if refused is not None:
            return refused
        body = request.json
        include = (body.get("stream_options") or {}).get("include_usage")
        usage = USAGE if include else None
        if body.get("tools") and body["messages"][-1]["role"] != "tool":
            calls = [{"id": f"call_{len(self.requests)}", "name": body["tools"][0]["function"]["name"],
                      "arguments": json.dumps(tool_arguments(body["tools"][0]["function"].get("parameters")))}]
            return stream_reply("", tool_calls=calls, usage=usage) if body.get("stream") else completion(tool_calls=calls)
        last = next((m.get("content") for m in reversed(body["messages"]) if m["role"] in ("user", "tool")), "")
        try:
            last = describe("openai", last)
        except BadPart as exc:
            return error(400, str(exc))
        text = f"echo: {last}"
        if body.get("stream"):
            return stream_reply(text, usage=usage)
        return completion(text, model=body["model"])
