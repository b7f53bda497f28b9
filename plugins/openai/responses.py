"""``openai-responses:<model>``: OpenAI's Responses API (``POST /responses``) over httpx and msgspec. Messages go as
input items (reasoning items from ``Message.reasoning_blocks`` unchanged), output items come back as text, refusal,
tool calls and reasoning; a stream is read from its semantic SSE events, and one that closes before its terminal
event is ``StreamInterrupted``.
"""

from __future__ import annotations

import re
from typing import Any, AsyncIterator, Optional

import attrs
import msgspec

from zagent.providerkit import encoded_once
from zagent.providerkit.masking import sealed_fields
from zagent.errors import ProviderError
from zagent.providerkit import HttpClient, iter_sse, malformed, network_options, server_message, stream_interrupted
from zagent.providerkit import new_call_id, parse_arguments, price_per_million, ProviderLLM
from zagent.types import Chunk, Completion, LLMRequest, Message, ModelProfile, ToolCall, ToolSpec, Usage

from .profiles import profile_for

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class ResponsesItem(msgspec.Struct):
    """One output item; fields of every kind in one loose Struct (unknown kinds are skipped)."""

    type: str = ""
    id: str = ""
    role: str = ""
    content: list[dict[str, Any]] = []
    call_id: str = ""
    name: str = ""
    arguments: str = ""
    summary: list[dict[str, Any]] = []
    encrypted_content: Optional[str] = None
    status: Optional[str] = None


class ResponsesUsage(msgspec.Struct):
    input_tokens: int = 0
    output_tokens: int = 0


class Response(msgspec.Struct):
    id: str = ""
    status: str = ""
    model: str = ""
    output: list[msgspec.Raw] = []
    usage: Optional[ResponsesUsage] = None
    error: Any = None
    incomplete_details: Any = None


class ResponsesEvent(msgspec.Struct):
    type: str = ""
    delta: str = ""
    item: msgspec.Raw = msgspec.Raw(b"")
    response: Optional[Response] = None
    message: str = ""
    code: Any = None


_item_decoder = msgspec.json.Decoder(ResponsesItem)
_response_decoder = msgspec.json.Decoder(Response)
_event_decoder = msgspec.json.Decoder(ResponsesEvent)
_encoder = msgspec.json.Encoder()
_dict_decoder = msgspec.json.Decoder(dict)


@attrs.define(repr=False, eq=False, kw_only=True)
class ResponsesLLM(ProviderLLM):
    """A model behind an OpenAI Responses endpoint (``/responses`` under ``base_url``)."""

    tool_name_pattern = r"^[A-Za-z0-9_-]{1,64}$"
    input_media = ("image", "file")

    http: HttpClient
    fields: dict[str, Any] = attrs.field(factory=dict)

    @classmethod
    def build(cls, model: str, **options: Any) -> "ResponsesLLM":
        options.pop("api", None)
        http, rest = network_options("openai-responses", options, key_env="OPENAI_API_KEY",
                                     base_env="OPENAI_BASE_URL", default_base_url=DEFAULT_BASE_URL)
        price = price_per_million(rest.pop("prices", None), model)
        rest.pop("stream_usage", None)  # the Responses API always reports usage
        fields = {**(rest.pop("extra_body", None) or {}), **rest}
        return cls(provider="openai-responses", model=model, http=http, fields=sealed_fields(fields), price=price)

    def default_profile(self) -> ModelProfile:
        return msgspec.structs.replace(profile_for(self.model), api="responses")

    # -- requests ---------------------------------------------------------------------

    def body(self, request: LLMRequest, stream: bool = False) -> bytes:
        """The encoded request body (public for inspection)."""
        payload: dict[str, Any] = {"model": request.model or self.model, "input": to_input(request.messages)}
        if self.fields:
            payload.update(self.fields)
        if request.options:
            options = dict(request.options)
            payload.update(options.pop("extra_body", None) or {})
            payload.update(options)
        if "max_tokens" in payload:  # the chat-completions name, as users and profiles give it
            payload.setdefault("max_output_tokens", payload.pop("max_tokens"))
        profile = self.profile
        if profile.max_tokens is not None and "max_output_tokens" not in payload:
            payload["max_output_tokens"] = profile.max_tokens
        if request.tools:
            payload["tools"] = [_tool(t) for t in request.tools]
            payload.setdefault("tool_choice", "auto")
        if request.response_format:
            payload["text"] = {**(payload.get("text") or {}), "format": text_format(request.response_format)}
        if payload.get("store") is False:
            include = list(payload.get("include") or [])
            if "reasoning.encrypted_content" not in include:
                payload["include"] = include + ["reasoning.encrypted_content"]
        if stream:
            payload["stream"] = True
        return _encoder.encode(payload)

    async def _wire_complete(self, request: LLMRequest) -> Completion:
        response = await self.http.post("/responses", self.body(request))
        content = response.content
        try:
            reply = _response_decoder.decode(content)
        except (msgspec.DecodeError, RecursionError) as exc:  # nested past msgspec's limit too
            raise malformed(self.http, "reply", exc, content) from None
        if reply.error or reply.status == "failed":
            raise self._error(reply.error, content)
        state = _State()
        for raw in reply.output:
            state.take(*self._item(raw))
        return state.completion(reply, self.model)

    def _item(self, raw: Any) -> tuple[ResponsesItem, Optional[dict[str, Any]]]:
        """The decoded item, and for a reasoning item its whole JSON object (sent back unchanged)."""
        try:
            item = _item_decoder.decode(raw)
        except (msgspec.DecodeError, RecursionError) as exc:  # nested past msgspec's limit too
            raise malformed(self.http, "output item", exc, bytes(raw)) from None
        return item, (_dict_decoder.decode(raw) if item.type == "reasoning" else None)

    def _error(self, error: Any, content: bytes = b"") -> ProviderError:
        if isinstance(error, dict):
            message = str(error.get("message") or error)
        else:
            message = str(error) if error else server_message(content, redact=self.http.redact)
        message = self.http.redact(message)
        return ProviderError(f"openai-responses ({self.http.base_url}) reported an error: {message}",
                             provider="openai-responses", status=200, body=message)

    # -- streaming ----------------------------------------------------------------------

    async def _wire_stream(self, request: LLMRequest) -> AsyncIterator[Chunk]:
        response = await self.http.post("/responses", self.body(request, stream=True), stream=True,
                                        expect="text/event-stream")
        state = _State()
        final: Optional[Response] = None
        mod = self.http.module()
        try:
            async for _name, data in iter_sse(response.aiter_lines()):
                if final is not None:  # read on to the body's end: the connection is then reused
                    continue
                try:
                    ev = _event_decoder.decode(data)
                except (msgspec.DecodeError, RecursionError) as exc:  # nested past msgspec's limit too
                    raise malformed(self.http, "stream event", exc, data) from None
                kind = ev.type
                if kind == "response.output_text.delta":
                    if ev.delta:
                        state.text.append(ev.delta)
                        yield Chunk(type="text", text=ev.delta)
                elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                    if ev.delta:
                        state.streamed_reasoning.append(ev.delta)
                        yield Chunk(type="reasoning", text=ev.delta)
                elif kind == "response.refusal.delta":
                    state.refusal.append(ev.delta)
                elif kind == "response.output_item.done" and len(ev.item):
                    item, whole = self._item(ev.item)
                    call = state.take(item, whole, streamed=True)
                    if call is not None:
                        yield Chunk(type="tool_call", tool_call=call)
                elif kind in ("response.completed", "response.incomplete"):
                    final = ev.response or Response(status="completed")
                    response.ended()  # read on a little only (``StreamReply.ended``)
                elif kind in ("response.failed", "error"):
                    raise self._error((ev.response.error if ev.response is not None else None)
                                      or {"message": ev.message or ev.code or "stream failed"})
        except (mod.TransportError, mod.TimeoutException) as exc:
            raise stream_interrupted(self.http, exc, "".join(state.text), state.calls) from None
        finally:
            await response.aclose()
        if final is None:
            raise stream_interrupted(self.http, EOFError("the stream ended before response.completed"),
                                     "".join(state.text), state.calls)
        for chunk in self._unstreamed(final, state):
            yield chunk
        yield Chunk(type="done", completion=state.completion(final, self.model))

    def _unstreamed(self, final: Response, state: "_State") -> list[Chunk]:
        """Output the terminal response holds but no delta event carried (servers that send only
        ``output_item.done``, or only the final object): taken from ``final.output`` so nothing is lost."""
        if state.text or state.calls or state.items or not final.output:
            return []
        for raw in final.output:
            state.take(*self._item(raw))
        chunks = [Chunk(type="text", text="".join(state.text))] if state.text else []
        return chunks + [Chunk(type="tool_call", tool_call=c) for c in state.calls]

    async def aclose(self) -> None:
        await self.http.aclose()

    def __repr__(self) -> str:
        from zagent import mask_userinfo

        return f"<ResponsesLLM {self.name} {mask_userinfo(self.http.base_url)}>"


class _State:
    """Output gathered from items: text, refusal, calls (unique ids), reasoning text and items."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.refusal: list[str] = []
        self.calls: list[ToolCall] = []
        self.ids: set[str] = set()  # the calls' ids (a list scan per call was quadratic in the number of calls)
        self.reasoning: list[str] = []
        self.streamed_reasoning: list[str] = []
        self.items: list[dict[str, Any]] = []

    def take(self, item: ResponsesItem, whole: Optional[dict[str, Any]] = None, streamed: bool = False) -> Optional[ToolCall]:
        kind = item.type
        if kind == "message" and not streamed:
            for part in item.content:
                if part.get("type") == "output_text":
                    self.text.append(str(part.get("text") or ""))
                elif part.get("type") == "refusal":
                    self.refusal.append(str(part.get("refusal") or ""))
        elif kind == "function_call":
            call_id = item.call_id or item.id
            if not call_id or call_id in self.ids:
                call_id = new_call_id()
            call = ToolCall(id=call_id, name=item.name, arguments=parse_arguments(item.arguments))
            self.ids.add(call_id)
            self.calls.append(call)
            return call
        elif kind == "reasoning":
            self.items.append(whole or {"type": "reasoning", "id": item.id, "summary": item.summary})
            self.reasoning.extend(str(s.get("text") or "") for s in item.summary if s.get("text"))
        return None

    def completion(self, reply: Response, model: str) -> Completion:
        reasoning = "".join(self.streamed_reasoning) or "\n\n".join(self.reasoning) or None
        message = Message(role="assistant", content="".join(self.text) or None, tool_calls=self.calls,
                          reasoning=reasoning, reasoning_blocks=self.items)
        u = reply.usage
        usage = Usage(input_tokens=u.input_tokens, output_tokens=u.output_tokens, calls=1) if u else Usage(calls=1)
        return Completion(message=message, finish_reason=_finish(reply, self.calls), usage=usage,
                          model=reply.model or model, refusal="".join(self.refusal) or None)


def _finish(reply: Response, calls: list[ToolCall]) -> str:
    if calls:
        return "tool_calls"
    if reply.status == "incomplete":
        reason = (reply.incomplete_details or {}).get("reason") if isinstance(reply.incomplete_details, dict) else None
        return "length" if reason in (None, "max_output_tokens") else "content_filter"
    return "stop"


# -- request encoding ------------------------------------------------------------------


def to_input(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages as Responses input items (reasoning items first in an assistant turn, unchanged)."""
    items: list[dict[str, Any]] = []
    for m in messages:
        role = m.role
        if role == "tool":
            items.append({"type": "function_call_output", "call_id": m.tool_call_id or "", "output": m.content or ""})
            continue
        if role == "assistant":
            items.extend(b for b in m.reasoning_blocks if b.get("type") == "reasoning")
            if m.content:
                items.append({"role": "assistant", "content": m.content})
            for c in m.tool_calls:
                args = c.arguments if isinstance(c.arguments, str) else _encoder.encode(c.arguments).decode()
                items.append({"type": "function_call", "call_id": c.id, "name": c.name, "arguments": args})
            continue
        items.append({"role": role, "content": input_parts(m) if m.parts else m.content or ""})
    return items


def input_parts(m: Message) -> list[dict[str, Any]]:
    """A message with parts as Responses content: ``input_text``, ``input_image``, ``input_file``."""
    from zagent.providerkit import data_url

    out: list[dict[str, Any]] = [{"type": "input_text", "text": m.content}] if m.content else []
    for p in m.parts:
        if p.type == "text":
            out.append({"type": "input_text", "text": p.text})
        elif p.type == "image":
            out.append({"type": "input_image", "image_url": data_url(p)})
        else:
            out.append({"type": "input_file", "filename": p.name or "file", "file_data": data_url(p)})
    return out


def _tool_dict(spec: ToolSpec) -> dict[str, Any]:
    tool: dict[str, Any] = {"type": "function", "name": spec.name,
                            "parameters": spec.parameters or {"type": "object", "properties": {}}, "strict": False}
    if spec.description:
        tool["description"] = spec.description
    return tool


_tool = encoded_once(_tool_dict)


def text_format(fmt: dict[str, Any]) -> dict[str, Any]:
    """``text.format`` from a chat-style ``response_format`` (or a bare JSON schema)."""
    kind = fmt.get("type")
    if kind == "json_object" or kind == "text":
        return {"type": kind}
    if kind == "json_schema":
        inner = fmt.get("json_schema") or {}
        out = {"type": "json_schema", "name": inner.get("name") or "output", "schema": inner.get("schema") or {}}
        if "strict" in inner:
            out["strict"] = inner["strict"]
        return out
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", str(fmt.get("title") or "")).strip("_")[:64] or "output"
    return {"type": "json_schema", "name": name, "schema": fmt, "strict": False}
