"""The fallback plugin: ``fallback:<model>,<model>,...``, a chain of models tried in order.

``k.llm("fallback:openai:gpt-4o-mini,ollama:llama3.2")`` (or an agent file's
``"llm_config": {"model": ["openai:gpt-4o-mini", "ollama:llama3.2"]}``) answers
with the first model that does not fail with an outage; see ``provider.py``
for which errors move on to the next model. Cheap to import.
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
