"""``scripted:<name>``: an LLM that replays ``replies=[...]`` in order and keeps every request in ``requests``.

A reply is text, a ``{"content", "tool_calls"}`` dict, a ``Message``, a ``Completion``, an exception (raised) or
a callable of the request; running out raises ``ConfigError``. Tool calls come as ``<tool_call>`` text with
``native_tools=False``. ``Kernel.llm`` gives one instance per spec and options: one script name per test.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Callable, Sequence, Union

import attrs

from zagent.errors import ConfigError
from zagent.providerkit import ProviderLLM
from zagent.types import Chunk, Completion, LLMRequest, Message

from .common import completion_chunks, estimate_usage, finish_reason_of, ordinal, render_text_tool_calls, to_message

Reply = Union[str, dict[str, Any], Message, Completion, BaseException, Callable[[LLMRequest], Any]]


@attrs.define(repr=False, eq=False, kw_only=True)
class ScriptedLLM(ProviderLLM):
    """Replays ``replies`` one per call; ``requests`` holds every ``LLMRequest`` received."""

    input_media = ("image", "file")

    replies: list[Any] = attrs.field(factory=list)
    requests: list[LLMRequest] = attrs.field(factory=list)
    calls: int = 0

    @classmethod
    def build(cls, model: str, *, replies: Sequence[Reply] = (), **options: Any) -> "ScriptedLLM":
        if options:
            raise ConfigError(
                f"scripted:{model} got unknown options {sorted(options)}; it accepts replies=[...] (and profile={{...}})"
            )
        if isinstance(replies, (str, dict)):
            replies = [replies]
        return cls(provider="scripted", model=model, replies=list(replies))

    async def _wire_complete(self, request: LLMRequest) -> Completion:
        self.requests.append(request)
        self.calls += 1
        if self.calls > len(self.replies):
            raise ConfigError(
                f"{self.name} was scripted with {_replies(len(self.replies))} but the "
                f"{ordinal(self.calls)} call was made; add more replies=[...] (or the agent called the model "
                "more often than the test expected)"
            )
        return self._complete(request, self.replies[self.calls - 1])

    async def _wire_stream(self, request: LLMRequest) -> AsyncIterator[Chunk]:
        completion = await self._wire_complete(request)
        for chunk in completion_chunks(completion):
            yield chunk

    def _complete(self, request: LLMRequest, reply: Any) -> Completion:
        if callable(reply) and not isinstance(reply, (BaseException, type)):
            reply = reply(request)
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, Completion):
            return reply if self.profile.native_tools else _text_completion(reply)
        message = to_message(reply)
        if not self.profile.native_tools:
            message = render_text_tool_calls(message)
        finish = reply.get("finish_reason") if isinstance(reply, dict) else None
        return Completion(
            message=message,
            finish_reason=finish or finish_reason_of(message),
            usage=estimate_usage(request, message),
            model=self.model,
        )

    @property
    def remaining(self) -> int:
        """How many scripted replies are left."""
        return max(0, len(self.replies) - self.calls)

    def __repr__(self) -> str:
        return f"<ScriptedLLM {self.name} calls={self.calls}/{len(self.replies)}>"


def _replies(n: int) -> str:
    return f"{n} {'reply' if n == 1 else 'replies'}"


def _text_completion(completion: Completion) -> Completion:
    message = render_text_tool_calls(completion.message)
    if message is completion.message:
        return completion
    return Completion(message=message, finish_reason="stop", usage=completion.usage, model=completion.model)
