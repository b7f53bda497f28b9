"""``FallbackLLM``: models tried in order; an outage of one moves the call to the next.

``moves_on``: a ``ProviderError`` still retryable after the model's own retries, or ``DeadlineExceeded``; other
errors are raised at once. All failed: the last error, naming each model's. A stream moves on only before its first
chunk; the chain's profile is the first model's.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, AsyncIterator, Optional, Sequence

import attrs
import msgspec
from zagent.errors import ConfigError, DeadlineExceeded, ProviderError
from zagent import LLM
from zagent.types import Chunk, Completion, LLMRequest, ModelProfile

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

__all__ = ["FallbackLLM", "moves_on"]

log = logging.getLogger("zagent")
MAX_MODELS = 16


def moves_on(exc: BaseException) -> bool:
    """Whether ``exc`` from one model sends the call to the next (see the module docstring)."""
    return isinstance(exc, DeadlineExceeded) or (isinstance(exc, ProviderError) and bool(exc.retryable))


@attrs.define(repr=False, eq=False, kw_only=True)
class FallbackLLM(LLM):
    """Calls go to ``models`` in order. ``build`` gives the chain's options to every model (1 to ``MAX_MODELS``);
    ``models=[{"model": "provider:model", **options}, ...]`` gives each its own."""

    models: list[LLM]

    @classmethod
    def build(cls, kernel: "Kernel", model: str, *, models: Optional[Sequence[Any]] = None, **options: Any) -> "FallbackLLM":
        entries: list[Any] = list(models) if models is not None else [m.strip() for m in model.split(",") if m.strip()]
        if not 1 <= len(entries) <= MAX_MODELS:
            raise ConfigError(f"fallback:{model}: name 1 to {MAX_MODELS} models, comma-separated "
                              "(fallback:openai:gpt-4o-mini,ollama:llama3.2) or as models=[...]")
        chain = []
        for entry in entries:
            spec, own = (entry, {}) if isinstance(entry, str) else (_entry(entry, model))
            if spec.startswith("fallback:"):
                raise ConfigError(f"fallback:{model}: a chain cannot hold another fallback chain ({spec!r})")
            chain.append(kernel.llm(spec, **{**options, **own}).llm)  # the provider's model: no kernel held
        name = ",".join(m.name for m in chain)
        return cls(provider="fallback", model=name, models=chain)

    def default_profile(self) -> ModelProfile:
        return self.models[0].profile

    def _for(self, llm: LLM, request: LLMRequest) -> LLMRequest:
        return msgspec.structs.replace(request, model=llm.model)

    def _move_on(self, i: int, exc: Exception, failures: list[str]) -> None:
        """Note model ``i``'s failure ``exc`` and return to try the next model, or raise when ``exc`` is
        not one to fall back on (``moves_on``) or ``i`` is the last model (with the earlier failures)."""
        if not moves_on(exc) or i == len(self.models) - 1:
            raise _with_failures(exc, failures) if failures else exc
        from zagent.agentkit.secrets import error_excerpt  # masked, then cut
        failures.append(f"{self.models[i].name}: {error_excerpt(exc)}")
        log.warning("fallback: %s failed (%s), trying %s", self.models[i].name, type(exc).__name__,
                    self.models[i + 1].name)

    async def _acomplete(self, request: LLMRequest) -> Completion:
        failures: list[str] = []
        for i, llm in enumerate(self.models):
            try:
                return await llm._send(self._for(llm, request))
            except Exception as exc:
                self._move_on(i, exc, failures)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _astream(self, request: LLMRequest) -> AsyncIterator[Chunk]:
        failures: list[str] = []
        for i, llm in enumerate(self.models):
            agen = llm._send_stream(self._for(llm, request))
            try:
                first = await agen.__anext__()
            except StopAsyncIteration:
                return
            except Exception as exc:
                self._move_on(i, exc, failures)
                continue
            yield first
            async for chunk in agen:
                yield chunk
            return

    async def aclose(self) -> None:
        return None  # the chain's models belong to the kernel, which closes them

    def __repr__(self) -> str:
        return f"<FallbackLLM fallback:{self.model}>"


def _entry(entry: Any, chain: str) -> tuple[str, dict[str, Any]]:
    if isinstance(entry, dict) and isinstance(entry.get("model"), str):
        return entry["model"], {k: v for k, v in entry.items() if k != "model"}
    raise ConfigError(f"fallback:{chain}: each model is 'provider:model' or {{'model': 'provider:model', "
                      f"options...}}, got {type(entry).__name__}")


def _with_failures(exc: BaseException, failures: list[str]) -> BaseException:
    """``exc`` (the last model's error, same type) with what the earlier models said, in its message."""
    note = "; ".join(failures)
    try:
        exc.args = (f"{exc} (every model of the fallback chain failed; before it: {note})", *exc.args[1:])
    except Exception:  # pragma: no cover - an exception type that refuses new args
        pass
    return exc
