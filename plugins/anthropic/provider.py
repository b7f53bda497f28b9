"""The Anthropic Messages API provider (``AnthropicLLM``) over httpx and msgspec. A stream yields text, reasoning
(thinking deltas) and whole tool calls; one that closes after a ``message_delta`` with a stop reason and no tool
call open is complete, as the official SDK treats it, and one that closes earlier is cut.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Optional

import attrs
import msgspec

from zagent.errors import ProtocolError, ProviderError
from zagent.providerkit import HttpClient, iter_sse, malformed, network_options, stream_interrupted
from zagent.providerkit.masking import sealed_fields
from zagent.providerkit import new_call_id, parse_arguments, price_per_million, ProviderLLM, unique_call_ids
from zagent.types import Chunk, Completion, LLMRequest, Message, ModelProfile, ToolCall, Usage

from . import wire

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"


@attrs.define(repr=False, eq=False, kw_only=True)
class AnthropicLLM(ProviderLLM):
    """A Claude model behind the Messages API (``POST /v1/messages``)."""

    tool_name_pattern = r"^[A-Za-z0-9_-]{1,64}$"  # Anthropic's tool-name rule; other names are mapped (zagent.providerkit.toolnames)
    input_media = ("image", "application/pdf")  # files: PDFs (document blocks)

    http: HttpClient
    fields: dict[str, Any] = attrs.field(factory=dict)

    @classmethod
    def build(cls, model: str, **options: Any) -> "AnthropicLLM":
        version = options.pop("anthropic_version", API_VERSION)
        headers = {"anthropic-version": version, **(options.pop("headers", None) or {})}
        http, rest = network_options("anthropic", {**options, "headers": headers}, key_env="ANTHROPIC_API_KEY",
                                     base_env="ANTHROPIC_BASE_URL", default_base_url=DEFAULT_BASE_URL,
                                     auth_header="x-api-key", auth_prefix="")
        price = price_per_million(rest.pop("prices", None), model)
        fields = {"max_tokens": 4096, **(rest.pop("extra_body", None) or {}), **rest}
        return cls(provider="anthropic", model=model, http=http, fields=sealed_fields(fields), price=price)

    def default_profile(self) -> ModelProfile:
        # json_schema_output=False: the Messages API has no response_format, so agents stay prompt-based
        # (a response_format given explicitly still becomes a system instruction, see ``body``)
        return ModelProfile(native_tools=True, parallel_tool_calls=True, json_schema_output=False,
                            streaming_tools=True, max_context_tokens=200_000)

    def body(self, request: LLMRequest, stream: bool = False) -> bytes:
        system, turns = wire.split_messages(request.messages)
        if request.response_format:
            system = "\n\n".join(filter(None, [system, wire.schema_instruction(request.response_format)]))
        payload: dict[str, Any] = {"model": request.model or self.model, "messages": turns, **self.fields}
        if system:
            payload["system"] = system
        options = request.options
        if options:
            options = dict(options)
            payload.update(options.pop("extra_body", None) or {})
            payload.update(options)
        if request.tools:
            payload["tools"] = [wire.encode_tool(t) for t in request.tools]
        if stream:
            payload["stream"] = True
        return wire.encoder.encode(payload)

    async def _wire_complete(self, request: LLMRequest) -> Completion:
        response = await self.http.post("/v1/messages", self.body(request))
        content = response.content
        try:
            reply = wire.reply_decoder.decode(content)
        except (msgspec.DecodeError, RecursionError) as exc:  # nested past msgspec's limit too
            raise malformed(self.http, "reply", exc, content) from None
        if reply.type == "error" or reply.error is not None:
            raise self._error(reply.error)
        message, usage = wire.to_completion_parts(reply)
        if message.tool_calls:
            message = msgspec.structs.replace(message, tool_calls=unique_call_ids(message.tool_calls))
        return Completion(message=message, finish_reason=wire.STOP_REASONS.get(reply.stop_reason or "", reply.stop_reason),
                          usage=usage, model=reply.model or self.model,
                          id=reply.id if isinstance(reply.id, str) else None)

    def _error(self, error: Any) -> ProviderError:
        message = error.get("message") if isinstance(error, dict) else str(error)
        kind = error.get("type") if isinstance(error, dict) else "error"
        message = self.http.redact(str(message))
        shown = self.http.redact(str(kind))  # the server's words too: it may echo the request's key there
        return ProviderError(f"anthropic ({self.http.base_url}) reported {shown}: {message}",
                             provider="anthropic", status=200, body=message, retryable=kind == "overloaded_error")

    async def _wire_stream(self, request: LLMRequest) -> AsyncIterator[Chunk]:
        response = await self.http.post("/v1/messages", self.body(request, stream=True), stream=True,
                                        expect="text/event-stream")
        state = _AnthropicStreamState()
        mod = self.http.module()
        try:
            async for _name, data in iter_sse(response.aiter_lines()):
                if state.stopped:  # read on to the body's end: the connection is then reused
                    continue
                for chunk in self._on_event(self._decode(data), state):
                    yield chunk
                if state.stopped:
                    response.ended()  # read on a little only (``StreamReply.ended``)
        except (mod.TransportError, mod.TimeoutException) as exc:
            raise stream_interrupted(self.http, exc, state.text(), state.all_calls()) from None
        finally:
            await response.aclose()
        if state.open_calls:  # a tool_use block never stopped, message_stop or not: its input may be cut
            names = ", ".join(repr(name) for _id, name in state.open_calls.values())
            raise stream_interrupted(self.http, EOFError(f"the stream ended with tool call(s) {names} still open "
                                                         "(no content_block_stop)"), state.text(), state.all_calls())
        if not state.stopped and state.finish_reason is None:
            raise stream_interrupted(self.http, EOFError("the stream ended before message_stop"),
                                     state.text(), state.all_calls())
        message = Message(role="assistant", content=state.text() or None, tool_calls=state.calls,
                          reasoning="".join(state.thinking_parts) or None, reasoning_blocks=state.thinking_blocks)
        yield Chunk(type="done", completion=Completion(
            message=message, finish_reason=state.finish_reason, usage=state.usage(), model=state.model or self.model))

    def _decode(self, data: str) -> wire.AnthropicEvent:
        try:
            return wire.event_decoder.decode(data)
        except (msgspec.DecodeError, RecursionError) as exc:  # nested past msgspec's limit too
            raise malformed(self.http, "stream event", exc, data) from None

    def _on_event(self, ev: wire.AnthropicEvent, state: "_AnthropicStreamState") -> list[Chunk]:
        kind = ev.type
        if kind == "content_block_delta" and ev.delta is not None:
            if ev.delta.type == "text_delta" and ev.delta.text:
                state.parts.append(ev.delta.text)
                return [Chunk(type="text", text=ev.delta.text)]
            if ev.delta.type == "input_json_delta":
                state.json_parts.setdefault(ev.index, []).append(ev.delta.partial_json)
            elif ev.delta.type == "thinking_delta" and ev.delta.thinking:
                if ev.index in state.open_thinking:
                    state.block_parts.setdefault((ev.index, "thinking"), []).append(ev.delta.thinking)
                state.thinking_parts.append(ev.delta.thinking)
                return [Chunk(type="reasoning", text=ev.delta.thinking)]
            elif ev.delta.type == "signature_delta":
                if ev.index in state.open_thinking:
                    state.block_parts.setdefault((ev.index, "signature"), []).append(ev.delta.signature)
        elif kind == "content_block_start" and ev.content_block is not None:
            block = ev.content_block
            if block.type == "tool_use":
                if ev.index in state.open_calls:  # the open call would vanish, its input going to this one
                    raise ProtocolError(
                        f"anthropic ({self.http.base_url}) started a tool_use block at index {ev.index} while the call "
                        f"{state.open_calls[ev.index][1]!r} there was still open; the reply is not used. Check the "
                        "server or the proxy in front of it", provider="anthropic", status=200)
                state.open_calls[ev.index] = (block.id, block.name)
                if block.input is not None and block.input != {}:  # sent whole in the start (some proxies): kept
                    state.json_parts[ev.index] = [wire.encoder.encode(block.input).decode()]
            elif block.type in wire.THINKING_TYPES:
                state.open_thinking[ev.index] = block
                if block.thinking:
                    state.thinking_parts.append(block.thinking)
                    return [Chunk(type="reasoning", text=block.thinking)]
            elif block.type == "text" and block.text:
                state.parts.append(block.text)
                return [Chunk(type="text", text=block.text)]
        elif kind == "content_block_stop":
            thinking = state.open_thinking.pop(ev.index, None)
            if thinking is not None:
                state.thinking_blocks.append(state.whole_block(ev.index, thinking))
                return []
            call = state.close_call(ev.index)
            if call is not None:
                return [Chunk(type="tool_call", tool_call=call)]
        elif kind == "message_start" and ev.message is not None:
            state.start(ev.message)
        elif kind == "message_delta":
            state.delta(ev)
        elif kind == "message_stop":
            state.stopped = True
        elif kind == "error":
            raise self._error(ev.error)
        return []

    async def aclose(self) -> None:
        await self.http.aclose()

    def __repr__(self) -> str:
        from zagent import mask_userinfo

        return f"<AnthropicLLM {self.name} {mask_userinfo(self.http.base_url)}>"


class _AnthropicStreamState:
    """Text parts, open tool_use blocks and their JSON deltas, usage and stop reason of one stream."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.open_calls: dict[int, tuple[str, str]] = {}
        self.json_parts: dict[int, list[str]] = {}
        self.calls: list[ToolCall] = []
        self.ids: set[str] = set()  # the calls' ids (a list scan per call was quadratic in the number of calls)
        self.open_thinking: dict[int, wire.Block] = {}
        self.thinking_blocks: list[dict[str, Any]] = []
        self.thinking_parts: list[str] = []
        self.block_parts: dict[tuple[int, str], list[str]] = {}  # (index, "thinking"/"signature"): open blocks' deltas
        self.finish_reason: Optional[str] = None
        self.input_tokens = 0
        self.output_tokens = 0
        self.model = ""
        self.stopped = False

    def whole_block(self, index: int, block: wire.Block) -> dict[str, Any]:
        """The thinking block at ``index`` with its streamed deltas joined (once: ``+`` per delta was quadratic)."""
        for field in ("thinking", "signature"):
            parts = self.block_parts.pop((index, field), None)
            if parts:
                setattr(block, field, (getattr(block, field) or "") + "".join(parts))
        return wire.thinking_block(block)

    def start(self, message: wire.MessageReply) -> None:
        self.model = message.model
        if message.usage is not None:
            self.input_tokens = wire.input_tokens(message.usage)
            self.output_tokens = message.usage.output_tokens

    def delta(self, ev: wire.AnthropicEvent) -> None:
        if ev.delta is not None and ev.delta.stop_reason:
            self.finish_reason = wire.STOP_REASONS.get(ev.delta.stop_reason, ev.delta.stop_reason)
        if ev.usage is not None:
            self.output_tokens = ev.usage.output_tokens or self.output_tokens

    def close_call(self, index: int) -> Optional[ToolCall]:
        opened = self.open_calls.pop(index, None)
        if opened is None:
            return None
        call_id = opened[0]
        if not call_id or call_id in self.ids:
            call_id = new_call_id()
        call = ToolCall(id=call_id, name=opened[1], arguments=parse_arguments("".join(self.json_parts.pop(index, []))))
        self.ids.add(call_id)
        self.calls.append(call)
        return call

    def all_calls(self) -> list[ToolCall]:
        """Finished calls plus those still open (raw partial JSON), for an interrupted stream."""
        pending = [ToolCall(id=i, name=n, arguments="".join(self.json_parts.get(idx, [])))
                   for idx, (i, n) in sorted(self.open_calls.items())]
        return self.calls + pending

    def text(self) -> str:
        return "".join(self.parts)

    def usage(self) -> Usage:
        return Usage(input_tokens=self.input_tokens, output_tokens=self.output_tokens, calls=1)
