"""The fallback plugin: ``fallback:<model>,<model>,...``, a chain of models tried in order.

``k.llm("fallback:openai:gpt-4o-mini,ollama:llama3.2")``, or a list of models in an agent file's
``llm_config.model``. Cheap to import; ``provider.py`` says which errors move on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


def zagent_register_providers(register: Callable[..., None], kernel: "Kernel") -> None:
    def _fallback(model: str, **options: Any) -> Any:
        from .provider import FallbackLLM

        return FallbackLLM.build(kernel, model, **options)

    register("fallback", _fallback)
