"""``ollama:<model>``: Ollama's native ``/api/chat``. The server is ``base_url``, else ``OLLAMA_BASE_URL``, else
``OLLAMA_HOST`` (``host:port`` or a URL), else ``http://127.0.0.1:11434``; sampling settings (``temperature``,
``num_ctx``...) go in Ollama's ``options``, ``format``, ``keep_alive`` and ``think`` at the top level; defaults from
``Kernel(config={"ollama": {...}})``. The profile says ``json_schema_output=True`` (Ollama 0.5+).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


def zagent_config_keys() -> tuple[str, ...]:
    """The settings this plugin reads: ``ollama`` (defaults for every ollama model)."""
    return ("ollama",)


def zagent_register_providers(register: Callable[..., None], kernel: "Kernel") -> None:
    defaults = dict((kernel.config.get("ollama") or {}) if kernel is not None else {})

    def ollama(model: str, **options: Any) -> Any:
        from .provider import OllamaLLM

        return OllamaLLM.build(model, **{**defaults, **options})

    register("ollama", ollama)
