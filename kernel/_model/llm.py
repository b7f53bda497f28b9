"""The provider contract: ``LLM``, the base class every provider's model subclasses.

A provider implements ``_acomplete(request) -> Completion`` and may implement ``_astream(request)`` (an
async generator of ``Chunk``s ending with ``Chunk(type="done", completion=...)``; the default streams the
whole reply at once), ``default_profile()`` and ``aclose()``. What a provider needs (HTTP options, the
kernel's rate limiters: ``zagent.providerkit.shared_stash``) it gets when it is built; it holds no kernel.
``Kernel.llm`` returns the model bound to the kernel (``zagent._model.run.Model``), which runs rails, events,
usage and cost around these coroutines. Used directly, an ``LLM`` has the same call methods without them.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, ClassVar, Optional

import attrs
import msgspec

from ..errors import ConfigError
from .run import Direct
from ..types import Chunk, Completion, LLMRequest, ModelProfile, Usage

__all__ = ["LLM"]


@attrs.define(repr=False, eq=False, kw_only=True)
class LLM(Direct):
    """Base class of provider models. ``provider`` and ``model`` name it (``openai``, ``gpt-4o-mini``).

    :ivar profile_overrides: fields of ``ModelProfile`` forced by the user.
    :ivar price: USD per million ``(input, output)`` tokens, when a price table
        was given; ``cost(usage)`` turns usage into money and each run's total
        is kept in ``ctx.stash[zagent._model.run.COST_KEY]``.
    """

    provider: str = ""
    model: str = ""
    profile_overrides: dict[str, Any] = attrs.field(factory=dict)
    price: Optional[tuple[float, float]] = None
    _profile: Optional[ModelProfile] = attrs.field(default=None, init=False)

    #: regex every tool name must match on this provider's wire (``None``: any name); offered
    #: tools that don't match are renamed for the request and mapped back (``zagent._model.toolnames``)
    tool_name_pattern: ClassVar[Optional[str]] = None
    #: kinds of message parts this provider's wire carries (``"image"``, ``"file"`` or a file media type);
    #: ``ModelProfile.input_media`` narrows or widens it per model
    input_media: ClassVar[tuple[str, ...]] = ()

    # -- to implement -------------------------------------------------------

    async def _acomplete(self, request: LLMRequest) -> Completion:
        raise NotImplementedError(f"{type(self).__name__} does not implement _acomplete")

    async def _astream(self, request: LLMRequest) -> AsyncIterator[Chunk]:
        completion = await self._acomplete(request)
        if completion.text:
            yield Chunk(type="text", text=completion.text)
        for call in completion.tool_calls:
            yield Chunk(type="tool_call", tool_call=call)
        yield Chunk(type="done", completion=completion)

    def default_profile(self) -> ModelProfile:
        """What this provider knows about ``self.model``; override per provider."""
        return ModelProfile()

    async def aclose(self) -> None:
        """Release connections. Called by ``Kernel.aclose``."""

    # -- what the call path reads ---------------------------------------------

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

    @property
    def kernel(self) -> Any:
        """Gone: a provider's model holds no kernel (an ``AttributeError`` saying what to do instead)."""
        raise AttributeError(
            f"{type(self).__name__} has no 'kernel': a provider's model holds no kernel. Take what it needs "
            "when it is built (in zagent_register_providers(register, kernel), or zagent.providerkit.shared_stash() "
            "inside the factory), and hand that to the model; k.llm(...) returns a zagent.Model, whose "
            ".kernel is the kernel")

    def endpoint(self) -> Optional[str]:
        """The URL this model's requests go to (``http.base_url`` of the HTTP providers), for telemetry."""
        return getattr(getattr(self, "http", None), "base_url", None)

    def call_settings(self) -> dict[str, Any]:
        """The request fields sent with every call unless the call gives its own (``temperature``,
        ``max_tokens``... set when the model was built, e.g. in an agent file's ``llm_config``), for
        telemetry: the HTTP providers' ``fields``; a provider that keeps them elsewhere overrides this."""
        fields = getattr(self, "fields", None)
        return dict(fields) if isinstance(fields, dict) else {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"
