"""The output redaction rail: ``rails["redact"]`` regexes replaced by ``redact_with`` (``[REDACTED]``) in tool results,
and with ``redact_llm``/``redact_llm_input`` in model replies/requests (docs/rails.md "Redaction"). Patterns are
compiled once per set by ``compile_spec_regex``; a refused one raises ``ConfigError`` (the result is withheld).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Optional

import msgspec

from zagent.agentkit.specregex import compile_spec_regex

from .config import as_list

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Completion, LLMRequest, ToolResult

DEFAULT_REPLACEMENT = "[REDACTED]"


@lru_cache(maxsize=64)
def compile_patterns(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """Compile a pattern set once."""
    return tuple(compile_spec_regex(p, "rails.redact") for p in patterns)


def redactor(rails: dict[str, Any]) -> Optional[tuple[tuple[re.Pattern[str], ...], str]]:
    """The compiled patterns and replacement of these settings, or None when nothing is to be redacted."""
    patterns = rails.get("redact")
    if not patterns:
        return None
    return compile_patterns(tuple(as_list(patterns, "redact"))), str(rails.get("redact_with", DEFAULT_REPLACEMENT))


def redact_text(text: str, compiled: tuple[re.Pattern[str], ...], replacement: str) -> str:
    """``text`` with each match replaced by ``replacement`` as it is: never read as a template (a spec's
    ``redact_with: "\\g<0>"`` would put every match back)."""
    for pattern in compiled:
        text = pattern.sub(lambda _: replacement, text)
    return text


def redact_value(value: Any, compiled: tuple[re.Pattern[str], ...], replacement: str) -> Any:
    """Strings, lists, tuples and dicts are redacted recursively; anything else is returned as is.

    Returns the very same object when nothing in it matched.
    """
    if isinstance(value, str):
        new = redact_text(value, compiled, replacement)
        return value if new == value else new
    if isinstance(value, (list, tuple)):
        items = [redact_value(v, compiled, replacement) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return type(value)(items) if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        pairs = {k: redact_value(v, compiled, replacement) for k, v in value.items()}
        return value if all(pairs[k] is v for k, v in value.items()) else pairs
    return value


def redact_result(rails: dict[str, Any], result: "ToolResult") -> Optional["ToolResult"]:
    """A redacted copy of ``result``, or None if nothing matched."""
    found = redactor(rails)
    if found is None:
        return None
    compiled, replacement = found
    content = redact_text(result.content, compiled, replacement)
    error = redact_text(result.error, compiled, replacement) if result.error else result.error
    value = redact_value(result.value, compiled, replacement)
    if content == result.content and error == result.error and value is result.value:
        return None
    return msgspec.structs.replace(result, content=content, error=error, value=value)


def redact_completion(rails: dict[str, Any], response: "Completion") -> Optional["Completion"]:
    """With ``redact_llm: true``, a copy of the reply with its text redacted, or None if nothing matched."""
    if not rails.get("redact_llm"):
        return None
    found = redactor(rails)
    if found is None or not response.message.content:
        return None
    text = redact_text(response.message.content, *found)
    if text == response.message.content:
        return None
    message = msgspec.structs.replace(response.message, content=text)
    return msgspec.structs.replace(response, message=message)


def redact_request(rails: dict[str, Any], request: "LLMRequest") -> Optional["LLMRequest"]:
    """With ``redact_llm_input: true``, a copy of the request with every message's text redacted, or None."""
    if not rails.get("redact_llm_input"):
        return None
    found = redactor(rails)
    if found is None:
        return None
    changed = False
    messages = []
    for m in request.messages:
        text = redact_text(m.content, *found) if m.content else m.content
        if text != m.content:
            m, changed = msgspec.structs.replace(m, content=text), True
        messages.append(m)
    return msgspec.structs.replace(request, messages=messages) if changed else None
