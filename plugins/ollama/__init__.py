"""``ollama:<model>``: Ollama's native ``/api/chat`` (NDJSON streaming, tools, ``format`` JSON schema).

Registers the ``ollama`` provider; cheap to import (the provider and httpx
load when the first model is made). The server comes from ``base_url``, else
``OLLAMA_HOST`` (``host:port`` or a URL), else ``http://127.0.0.1:11434``.
Sampling settings (``temperature``, ``num_ctx``...) are sent in Ollama's
``options`` object; ``format``, ``keep_alive`` and ``think`` at the top level.
Ollama's OpenAI-compatible ``/v1`` route is served by the ``openai`` provider.
The profile says ``json_schema_output=True`` (Ollama 0.5+ takes a JSON schema
as ``format``), so json-mode agents send their output schema on turns without
tools; for an older server pass ``profile={"json_schema_output": False}`` or set
``Kernel(config={"profiles": {"ollama:*": {"json_schema_output": False}}})``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


def zagent_register_providers(register: Callable[..., None], kernel: "Kernel") -> None:
    defaults = dict((kernel.config.get("ollama") or {}) if kernel is not None else {})

    def ollama(model: str, **options: Any) -> Any:
        from .provider import OllamaLLM

        return OllamaLLM.build(model, **{**defaults, **options})

    register("ollama", ollama)
