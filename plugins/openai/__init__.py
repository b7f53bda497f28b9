"""``openai:<model>``: the Chat Completions protocol (OpenAI and compatible servers), and ``openai-responses:<model>``,
the Responses API (also ``openai:`` with ``api="responses"`` or a profile's ``{"api": "responses"}``). Options:
``api_key`` (else ``OPENAI_API_KEY``), ``base_url`` (else ``OPENAI_BASE_URL``, else api.openai.com), ``extra_body``,
``prices``, ``stream_usage``, the HTTP options (docs/http.md), any other keyword as a request field; defaults from
``Kernel(config={"openai": {...}})``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


def zagent_config_keys() -> tuple[str, ...]:
    """The settings this plugin reads: ``openai`` (defaults for every openai model)."""
    return ("openai",)


def zagent_register_providers(register: Callable[..., None], kernel: "Kernel") -> None:
    defaults = dict((kernel.config.get("openai") or {}) if kernel is not None else {})
    profiles = (kernel.config.get("profiles") or {}) if kernel is not None else {}

    def openai(model: str, **options: Any) -> Any:
        options = {**defaults, **options}
        api = options.pop("api", None) or _profile_api(profiles, model)
        if api == "responses":
            return responses(model, **options)
        if api not in (None, "chat"):
            from zagent.errors import ConfigError

            raise ConfigError(f"openai:{model}: api={api!r} is not known; use 'chat' (Chat Completions) or 'responses'")
        from .provider import OpenAILLM

        return OpenAILLM.build(model, **options)

    def responses(model: str, **options: Any) -> Any:
        from .responses import ResponsesLLM

        return ResponsesLLM.build(model, **{**defaults, **options})

    register("openai", openai)
    register("openai-responses", responses)


def _profile_api(profiles: dict[str, Any], model: str) -> Any:
    """``api`` from ``Kernel(config={"profiles": {"openai:<model>": {"api": "responses"}}})`` (or ``openai:*``)."""
    for key in (f"openai:{model}", "openai:*"):
        entry = profiles.get(key) or {}
        if "api" in entry:
            return entry["api"]
    return None
