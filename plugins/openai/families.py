"""Tool calling on local servers, by evidence: for an open-weights model (named in ``FAMILIES``) with no profile,
``probe`` asks the server once whether ``tools=`` gives native ``tool_calls``; a text-only verdict (cached per base
URL and model) puts the model in prompt mode in its family's format. A profile that sets ``native_tools`` or
``tool_format`` is never probed or changed.
"""

from __future__ import annotations

import threading
from typing import Any, Optional

#: (name fragment, text tool-call format, evidence). First match wins, on the lowercased model name.
FAMILIES: tuple[tuple[str, str, str], ...] = (
    ("hermes", "hermes", "trained on <tool_call> blocks; not measured here"),
    ("qwen", "pycall", "measured: Qwen2.5-Coder-0.5B Q4_K_M, bench/RESULTS.md"),
    ("llama", "pycall", "Llama 3.2's documented 'pythonic' calls; not measured here"),
    ("mistral", "mistral", "trained on [TOOL_CALLS]; not measured here"),
    ("mixtral", "mistral", "trained on [TOOL_CALLS]; not measured here"),
    ("gemma", "pycall", "Gemma's documented Python-style calls; not measured here"),
)
#: the format for a text-only server when the family is unknown (the best one measured)
FALLBACK_FORMAT = "pycall"

PROBE_TOOL: dict[str, Any] = {"name": "get_time", "description": "Get the current local time in a city.",
              "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
PROBE_QUESTION = "What time is it in Paris right now? Use the get_time tool."

_verdicts: dict[tuple[str, str], bool] = {}
"""(base URL, model) -> the server returns native ``tool_calls`` (True) or only text (False)."""
_lock = threading.Lock()


def family_format(model: str) -> Optional[str]:
    """The text format of ``model``'s family, or ``None`` when no family matches."""
    name = model.rsplit("/", 1)[-1].lower()
    for fragment, fmt, _why in FAMILIES:
        if fragment in name:
            return fmt
    return None


def verdict(base_url: str, model: str) -> Optional[bool]:
    """What is known about the server: native tool calls work (True), text only (False), or ``None``."""
    return _verdicts.get((base_url, model))


def record(base_url: str, model: str, native: bool) -> None:
    with _lock:
        _verdicts[(base_url, model)] = native


def forget() -> None:
    """Drop every cached verdict (tests; a server that was reconfigured)."""
    with _lock:
        _verdicts.clear()


def text_only_fields(model: str) -> dict[str, Any]:
    """The profile fields of a model whose server answers ``tools=`` with text."""
    return {"native_tools": False, "tool_format": family_format(model) or FALLBACK_FORMAT}


async def probe(llm: Any) -> bool:
    """Ask ``llm``'s server once whether it returns native tool calls; record and return the verdict."""
    from zagent.errors import ProviderError
    from zagent.types import ToolSpec

    request = llm.request(PROBE_QUESTION, tools=[ToolSpec(**PROBE_TOOL)], max_tokens=48, temperature=0)
    try:
        completion = await llm._wire_complete(request)  # the server's own answer
    except ProviderError as exc:
        status = getattr(exc, "status", None)
        if status is None or not 400 <= int(status) < 500 or int(status) in (401, 403, 404, 408, 429):
            raise  # not an answer about tools: the caller keeps the profile it had
        native = False  # the server refuses tools=
    else:
        native = bool(completion.message.tool_calls)
    record(llm.http.base_url, llm.model, native)
    return native
