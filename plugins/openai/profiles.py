"""What OpenAI-protocol models can do, by model-name prefix (``profile_for``: first match wins, router prefixes
such as ``openai/`` ignored); unknown models get ``UNKNOWN`` (native tools, no JSON-schema output, 2048
``max_tokens``). ``Kernel(config={"profiles": ...})`` entries ``"openai:*"`` then ``"openai:<model>"``, then
``k.llm(..., profile=...)``, override single fields; tool mode for unknown models is ``families``'.
"""

from __future__ import annotations

from zagent.types import ModelProfile

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


#: Unknown models (local servers, gateways) get bounded generations: a server without a limit may
#: generate until its context is full, minutes on a laptop. 2048 tokens at ~20 tokens/s (a small model
#: on a laptop CPU) is about 100 s, inside the default 120 s read timeout; ``max_tokens=`` per call or
#: ``profile={"max_tokens": None}`` lifts it.
UNKNOWN = ModelProfile(max_tokens=2048)


def profile_for(model: str) -> ModelProfile:
    """The profile of ``model`` (``openai/gpt-4o`` style router prefixes are ignored)."""
    name = model.rsplit("/", 1)[-1].lower()
    for prefix, profile in KNOWN:
        if name.startswith(prefix):
            return profile
    return UNKNOWN
