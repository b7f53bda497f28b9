"""What OpenAI-protocol models can do, by model-name prefix (first match wins).

Unknown models (vLLM, llama.cpp, gateways...) get native tool calls and no
JSON-schema output; users override per model with
``Kernel(config={"profiles": {"openai:my-model": {...}}})`` or ``profile={...}``.
"""

from __future__ import annotations

from zagent.types import ModelProfile

_FULL = ModelProfile(native_tools=True, parallel_tool_calls=True, json_schema_output=True, streaming_tools=True)

KNOWN: tuple[tuple[str, ModelProfile], ...] = (
    ("o1-mini", ModelProfile(native_tools=False, parallel_tool_calls=False, json_schema_output=False,
                             streaming_tools=False, max_context_tokens=128_000)),
    ("o1-preview", ModelProfile(native_tools=False, parallel_tool_calls=False, json_schema_output=False,
                                streaming_tools=False, max_context_tokens=128_000)),
    ("gpt-4.1", ModelProfile(json_schema_output=True, max_context_tokens=1_047_576)),
    ("gpt-5", ModelProfile(json_schema_output=True, max_context_tokens=400_000)),
    ("gpt-4o", ModelProfile(json_schema_output=True, max_context_tokens=128_000)),
    ("o1", ModelProfile(parallel_tool_calls=False, json_schema_output=True, max_context_tokens=200_000)),
    ("o3", ModelProfile(parallel_tool_calls=False, json_schema_output=True, max_context_tokens=200_000)),
    ("o4", ModelProfile(parallel_tool_calls=False, json_schema_output=True, max_context_tokens=200_000)),
    ("gpt-4-turbo", ModelProfile(json_schema_output=False, max_context_tokens=128_000)),
    ("gpt-3.5-turbo", ModelProfile(json_schema_output=False, max_context_tokens=16_385)),
)


def profile_for(model: str) -> ModelProfile:
    """The profile of ``model`` (``openai/gpt-4o`` style router prefixes are ignored)."""
    name = model.rsplit("/", 1)[-1].lower()
    for prefix, profile in KNOWN:
        if name.startswith(prefix):
            return profile
    return ModelProfile()
