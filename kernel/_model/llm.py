"""The provider contract: ``LLM``, the base class every provider's model subclasses (it holds no kernel).

A provider implements ``_acomplete(request) -> Completion`` and may implement ``_astream(request)`` (``Chunk``s
ending with ``Chunk(type="done", completion=...)``), ``default_profile()`` and ``aclose()``. The reply is taken as
the provider gives it: ``<think>`` spans and tool names a wire refuses are the provider kit's
(``zagent.providerkit.ProviderLLM``).
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Awaitable, Callable, ClassVar, Optional

import attrs
import msgspec

from ..errors import ConfigError
from .run import Calls
from ..types import Chunk, Completion, LLMRequest, ModelProfile, Usage

__all__ = ["LLM"]


@attrs.define(repr=False, eq=False, kw_only=True)
class LLM(Calls):
    """Base class of provider models, named by ``provider`` and ``model``; ``profile_overrides`` are fields of
    ``ModelProfile`` forced by the user, ``price`` USD per million ``(input, output)`` tokens."""

    provider: str = ""
    model: str = ""
    profile_overrides: dict[str, Any] = attrs.field(factory=dict)
    price: Optional[tuple[float, float]] = None
    _profile: Optional[ModelProfile] = attrs.field(default=None, init=False)

    #: kinds of message parts the wire carries (``"image"``, ``"file"``, a media type); see ``ModelProfile.input_media``
    input_media: ClassVar[tuple[str, ...]] = ()

    async def _acomplete(self, request: LLMRequest) -> Completion:
        raise NotImplementedError(f"{type(self).__name__} does not implement _acomplete")

    def _astream(self, request: LLMRequest) -> AsyncIterator[Chunk]:
        return stream_whole(self._acomplete, request)

    def default_profile(self) -> ModelProfile:
        """What this provider knows about ``self.model``; override per provider."""
        return ModelProfile()

    def _bound(self) -> tuple["LLM", None]:
        return self, None

    async def aclose(self) -> None:
        """Release connections. Called by ``Kernel.aclose``."""

    def cost(self, usage: Usage) -> Optional[float]:
        """USD cost of ``usage`` at this model's ``price``, or ``None`` without a price."""
        price = self.price
        if price is None:
            return None
        return (usage.input_tokens * price[0] + usage.output_tokens * price[1]) / 1_000_000

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def profile(self) -> ModelProfile:
        """The model's capabilities, with user overrides applied (computed once)."""
        if self._profile is None:
            base = self.default_profile()
            if self.profile_overrides:
                try:
                    base = msgspec.structs.replace(base, **self.profile_overrides)
                except TypeError as exc:
                    raise ConfigError(
                        f"bad profile override for {self.name}: {exc}; "
                        f"known fields: {', '.join(ModelProfile.__struct_fields__)}"
                    ) from None
            self._profile = base
        return self._profile

    def endpoint(self) -> Optional[str]:
        """The URL this model's requests go to (``http.base_url`` of the HTTP providers), for telemetry."""
        return getattr(getattr(self, "http", None), "base_url", None)

    def call_settings(self) -> dict[str, Any]:
        """The request fields sent with every call unless it gives its own (the HTTP providers' ``fields``), for
        telemetry; a provider that keeps them elsewhere overrides this."""
        fields = getattr(self, "fields", None)
        return dict(fields) if isinstance(fields, dict) else {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


async def stream_whole(complete: Callable[[LLMRequest], Awaitable[Completion]],
                       request: LLMRequest) -> AsyncIterator[Chunk]:
    """The whole reply of ``complete(request)`` as a stream: its text, its tool calls, then ``done``."""
    completion = await complete(request)
    if completion.text:
        yield Chunk(type="text", text=completion.text)
    for call in completion.tool_calls:
        yield Chunk(type="tool_call", tool_call=call)
    yield Chunk(type="done", completion=completion)
