"""An OpenAI Responses API server for tests: ``POST /v1/responses`` as JSON or semantic SSE events.

``ResponsesServer(key=...)`` answers with a 401 in OpenAI's error format
without the right bearer key; a ``function_call`` of the first offered tool
when tools are offered and the last input item is not a
``function_call_output``; otherwise ``echo: <last user text or tool output>``.
Streams send the event sequence the API documents (``response.created``,
``response.output_item.added``, ``response.content_part.added``,
``response.output_text.delta``..., ``response.function_call_arguments.delta``,
``response.output_item.done``, ``response.completed``), each with a
``sequence_number``. Builders (``response``, ``events``) script other answers.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from .loopback import Reply, Request
from .media import BadPart, describe
from .openai_server import BearerServer, error, tool_arguments

USAGE = {"input_tokens": 13, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 6,
         "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 19}


def message_item(text: str, refusal: Optional[str] = None) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}] if refusal is None else \
        [{"type": "refusal", "refusal": refusal}]
    return {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": content}


def call_item(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name,
            "arguments": arguments, "status": "completed"}


def response(output: list[dict], *, status: str = "completed", model: str = "gpt-test", usage: dict = USAGE,
             incomplete: Optional[dict] = None) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "created_at": 1741476542, "status": status, "error": None,
            "incomplete_details": incomplete, "model": model, "output": output, "usage": usage,
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}


def events(output: list[dict], *, terminal: str = "response.completed", usage: dict = USAGE) -> list[bytes]:
    """The SSE events of a streamed response producing ``output``."""
    seq = iter(range(10_000))

    def ev(kind: str, **data: Any) -> bytes:
        payload = {"type": kind, "sequence_number": next(seq), **data}
        return f"event: {kind}\ndata: {json.dumps(payload)}\n\n".encode()

    out = [ev("response.created", response=response([], status="in_progress", usage=None)),
           ev("response.in_progress", response=response([], status="in_progress", usage=None))]
    for index, item in enumerate(output):
        if item["type"] == "message":
            out.append(ev("response.output_item.added", output_index=index, item={**item, "content": [],
                                                                                   "status": "in_progress"}))
            part = item["content"][0]
            if part["type"] == "output_text":
                out.append(ev("response.content_part.added", item_id=item["id"], output_index=index, content_index=0,
                              part={"type": "output_text", "text": "", "annotations": []}))
                text = part["text"]
                for i in range(0, len(text), 4):
                    out.append(ev("response.output_text.delta", item_id=item["id"], output_index=index,
                                  content_index=0, delta=text[i:i + 4]))
                out.append(ev("response.output_text.done", item_id=item["id"], output_index=index, content_index=0,
                              text=text))
            else:
                out.append(ev("response.refusal.delta", item_id=item["id"], output_index=index, content_index=0,
                              delta=part["refusal"]))
            out.append(ev("response.content_part.done", item_id=item["id"], output_index=index, content_index=0,
                          part=part))
        elif item["type"] == "function_call":
            out.append(ev("response.output_item.added", output_index=index, item={**item, "arguments": "",
                                                                                   "status": "in_progress"}))
            args = item["arguments"]
            for i in range(0, len(args), 5):
                out.append(ev("response.function_call_arguments.delta", item_id=item["id"], output_index=index,
                              delta=args[i:i + 5]))
            out.append(ev("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                          arguments=args))
        elif item["type"] == "reasoning":
            out.append(ev("response.output_item.added", output_index=index, item={**item, "summary": []}))
            for s_index, part in enumerate(item.get("summary") or []):
                out.append(ev("response.reasoning_summary_text.delta", item_id=item["id"], output_index=index,
                              summary_index=s_index, delta=part["text"]))
        out.append(ev("response.output_item.done", output_index=index, item=item))
    status = "completed" if terminal == "response.completed" else "incomplete"
    out.append(ev(terminal, response=response(output, status=status, usage=usage)))
    return out


def stream_reply(output: list[dict], **kw: Any) -> Reply:
    return Reply(chunks=events(output, **kw), content_type="text/event-stream")


class ResponsesServer(BearerServer):
    """A loopback Responses API server; ``url`` ends with ``/v1`` like a real base URL."""

    PATH = "/v1/responses"

    def answer(self, request: Request) -> Reply:
        refused = self.refusal(request)
        if refused is not None:
            return refused
        body = request.json
        items = body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]
        last = items[-1]
        if body.get("tools") and last.get("type") != "function_call_output":
            tool = body["tools"][0]
            output = [call_item(f"call_{len(self.requests)}", tool["name"],
                                json.dumps(tool_arguments(tool.get("parameters"))))]
        else:
            text = last.get("output") if last.get("type") == "function_call_output" else last.get("content")
            try:
                text = describe("responses", text)
            except BadPart as exc:
                return error(400, str(exc))
            output = [message_item(f"echo: {text}")]
        if body.get("stream"):
            return stream_reply(output)
        return Reply.json(response(output, model=body["model"]))
