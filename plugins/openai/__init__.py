"""``openai:<model>``: the Chat Completions protocol (OpenAI, vLLM, llama.cpp, Ollama's /v1, LM Studio, OpenRouter...).

Registers the ``openai`` provider. This module is cheap to import: the
provider (``.provider``), its wire types (``.wire``) and httpx load when the
first model is made. Options: ``api_key`` (else ``OPENAI_API_KEY``),
``base_url`` (else ``OPENAI_BASE_URL``, else api.openai.com), ``extra_body``,
``prices``, ``stream_usage``, the HTTP options of ``zagent.http`` (``timeout``,
``max_retries``, ``rpm``, ``client``...), and any other keyword, which is sent
as a request field (``temperature=0``, ``max_tokens=...``). Defaults for all
models come from ``Kernel(config={"openai": {...}})``.
"""

from __future__ import annotations

from typing import Any, Callable


def zagent_register_providers(register: Callable[..., None], kernel: Any) -> None:
    defaults = dict((kernel.config.get("openai") or {}) if kernel is not None else {})

    def openai(model: str, **options: Any) -> Any:
        from .provider import OpenAILLM

        return OpenAILLM.build(model, **{**defaults, **options})

    register("openai", openai)
