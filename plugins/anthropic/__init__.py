"""``anthropic:<model>``: Anthropic's Messages API. Options: ``api_key`` (else ``ANTHROPIC_API_KEY``), ``base_url``
(else ``ANTHROPIC_BASE_URL``, else api.anthropic.com), ``max_tokens`` (default 4096: the API requires it),
``anthropic_version``, ``extra_body``, ``prices``, the HTTP options (docs/http.md), any other keyword as a request
field; defaults from ``Kernel(config={"anthropic": {...}})``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


def zagent_config_keys() -> tuple[str, ...]:
    """The settings this plugin reads: ``anthropic`` (defaults for every anthropic model)."""
    return ("anthropic",)


def zagent_register_providers(register: Callable[..., None], kernel: "Kernel") -> None:
    defaults = dict((kernel.config.get("anthropic") or {}) if kernel is not None else {})

    def anthropic(model: str, **options: Any) -> Any:
        from .provider import AnthropicLLM

        return AnthropicLLM.build(model, **{**defaults, **options})

    register("anthropic", anthropic)
