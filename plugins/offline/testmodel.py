"""``test:<name>``: an offline model that needs no script (the kernel's fallback ``test:offline``).

From the request alone: it calls each offered tool not called yet (``ask_clarification`` aside) once, all in one
turn (one a turn without ``parallel_tool_calls``; ``<tool_call>`` text without ``native_tools``), with valid
arguments; then it answers in the requested format.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Optional

import attrs
import msgspec

from zagent.errors import ConfigError
from zagent.types import Chunk, Completion, Field, LLMRequest, Message, ModelProfile, ToolCall, ToolSpec

from .grounded import canned_reply, fill_arguments, fill_fields
from zagent.providerkit import new_call_id, ProviderLLM

from .common import completion_chunks, estimate_usage, finish_reason_of, render_text_tool_calls
from .values import from_field, from_schema

_json = msgspec.json.Encoder()
#: tools the test model leaves alone: ReAct's ask_clarification asks the user, it does no work
_NEVER_CALLED = frozenset({"ask_clarification"})

#: settings meant for a real model (sampling, HTTP): accepted by the offline test model, without effect
IGNORED_OPTIONS = frozenset({
    "temperature", "top_p", "top_k", "max_tokens", "max_completion_tokens", "seed", "stop", "presence_penalty",
    "frequency_penalty", "n", "timeout", "deadline", "max_retries", "max_response_bytes", "base_url", "api_key",
    "headers", "rpm", "reasoning_effort", "stream_options", "tool_choice", "parallel_tool_calls",
})


@attrs.define(repr=False, eq=False, kw_only=True)
class TestLLM(ProviderLLM):
    """Calls offered tools once, then answers validly for the requested output format."""

    __test__ = False  # not a pytest test class
    input_media = ("image", "file")
    text: Optional[str] = None
    calls: int = 0
    #: the kernel's parser registry (given by the offline plugin's factory), which renders ``output_spec``
    parsers: Any = None

    @classmethod
    def build(cls, model: str, *, text: Optional[str] = None, parsers: Any = None, **options: Any) -> "TestLLM":
        # An agent file written for a real model runs offline too: sampling and HTTP settings are accepted
        # and have no effect here (the answers are deterministic); anything else is likely a typo.
        unknown = sorted(k for k in options if k not in IGNORED_OPTIONS)
        if unknown:
            raise ConfigError(
                f"test:{model} got unknown options {unknown}; it accepts text='fixed answer' "
                f"(and profile={{...}}), and ignores model settings ({', '.join(sorted(IGNORED_OPTIONS))})"
            )
        return cls(provider="test", model=model, text=text, parsers=parsers)

    async def _wire_complete(self, request: LLMRequest) -> Completion:
        self.calls += 1
        message = self._reply(request)
        return Completion(
            message=message, finish_reason=finish_reason_of(message),
            usage=estimate_usage(request, message), model=self.model,
        )

    async def _wire_stream(self, request: LLMRequest) -> AsyncIterator[Chunk]:
        completion = await self._wire_complete(request)
        for chunk in completion_chunks(completion):
            yield chunk

    def _reply(self, request: LLMRequest) -> Message:
        pending = _uncalled_tools(request)
        if pending:
            if not self.profile.parallel_tool_calls:
                pending = pending[:1]
            calls = [ToolCall(id=new_call_id(), name=t.name, arguments=_arguments(t, request)) for t in pending]
            message = Message(role="assistant", tool_calls=calls)
            return message if self.profile.native_tools else render_text_tool_calls(message)
        return Message(role="assistant", content=self._answer(request))

    def _answer(self, request: LLMRequest) -> str:
        if request.output_spec and request.output_spec.get("fields") is not None:
            return self._render(request.output_spec, request)
        if request.response_format:
            return _json.encode(_from_response_format(request.response_format)).decode()
        if self.text is not None:
            return self.text
        return _plain_answer(request)

    def _render(self, spec: dict[str, Any], request: LLMRequest) -> str:
        fields = [f if isinstance(f, Field) else msgspec.convert(f, Field) for f in spec.get("fields") or []]
        values = fill_fields({f.name: from_field(f) for f in fields}, fields, request)
        parser = self._parser(spec.get("mode") or "json")
        if parser is not None and hasattr(parser, "render"):
            try:
                rendered: str = parser.render(values, fields, **(spec.get("options") or {}))
                return rendered
            except ConfigError:  # e.g. mode "custom": only the user's parse function knows the format
                pass
        return _json.encode(values).decode()

    def _parser(self, mode: str) -> Any:
        return None if self.parsers is None else self.parsers.get(mode)

    def default_profile(self) -> ModelProfile:
        return ModelProfile(json_schema_output=True)

    def __repr__(self) -> str:
        return f"<TestLLM {self.name} calls={self.calls}>"


def _called_names(messages: list[Message]) -> set[str]:
    names: set[str] = set()
    for m in messages:
        if m.role == "assistant":
            names.update(c.name for c in m.tool_calls)
            if m.content and "<tool_call>" in m.content:
                names.update(_text_call_names(m.content))
        elif m.role == "tool" and m.name:
            names.add(m.name)
    return names


def _text_call_names(text: str) -> list[str]:
    names = []
    for part in text.split("<tool_call>")[1:]:
        body = part.split("</tool_call>", 1)[0]
        try:
            data = msgspec.json.decode(body)
        except msgspec.DecodeError:
            continue
        if isinstance(data, dict) and isinstance(data.get("name"), str):
            names.append(data["name"])
    return names


def _uncalled_tools(request: LLMRequest) -> list[ToolSpec]:
    if not request.tools:
        return []
    done = _called_names(request.messages) | _NEVER_CALLED
    return [t for t in request.tools if t.name not in done]


def _arguments(spec: ToolSpec, request: LLMRequest) -> dict[str, Any]:
    schema = spec.parameters or {"type": "object", "properties": {}}
    try:
        value = from_schema(schema)
    except ConfigError as exc:  # e.g. a pattern it cannot satisfy: name the tool too
        raise ConfigError(f"test model calling tool {spec.name!r}: {exc}") from None
    return fill_arguments(value, schema, request) if isinstance(value, dict) else {}


def _from_response_format(fmt: dict[str, Any]) -> Any:
    """Accepts OpenAI's ``{"type": "json_schema", "json_schema": {"schema": ...}}``, ``json_object`` or a bare schema."""
    if fmt.get("type") == "json_schema":
        return from_schema((fmt.get("json_schema") or {}).get("schema") or {"type": "object"})
    if fmt.get("type") == "json_object":
        return {}
    return from_schema(fmt.get("schema", fmt))


def _plain_answer(request: LLMRequest) -> str:
    seen = _seen_parts(request.messages)
    return f"{seen} {canned_reply(request)}" if seen else canned_reply(request)


def _seen_parts(messages: list[Message]) -> str:
    """``I see 1 image (image/png, 12 bytes) and 1 file (report.pdf).`` for the last user turn's parts."""
    for m in reversed(messages):
        if m.role != "user":
            continue
        if not m.parts:
            return ""
        said = []
        for kind in ("image", "file"):
            of = [p for p in m.parts if p.type == kind]
            if of:
                what = ", ".join(p.name or p.url or f"{p.media_type}, {len(p.data)} bytes" for p in of)
                said.append(f"{len(of)} {kind}{'s' if len(of) > 1 else ''} ({what})")
        return f"I see {' and '.join(said)}." if said else ""
    return ""
