"""The output redaction rail: ``rails["redact"]`` regexes replaced by ``redact_with`` (``[REDACTED]``) in tool results,
and with ``redact_llm``/``redact_llm_input`` in model replies/requests, reasoning and text parts too (docs/rails.md). Patterns are
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
    from zagent import Completion, LLMRequest, Message, ToolResult

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
    """With ``redact_llm: true``, a copy of the reply with its text and reasoning redacted, or None if nothing
    matched."""
    if not rails.get("redact_llm"):
        return None
    found = redactor(rails)
    if found is None:
        return None
    message = _redact_message(response.message, found, calls=False)
    return None if message is response.message else msgspec.structs.replace(response, message=message)


def redact_request(rails: dict[str, Any], request: "LLMRequest") -> Optional["LLMRequest"]:
    """With ``redact_llm_input: true``, a copy of the request with every text a message carries redacted (its
    content, text parts, reasoning and earlier calls' arguments), or None."""
    if not rails.get("redact_llm_input"):
        return None
    found = redactor(rails)
    if found is None:
        return None
    messages = [_redact_message(m, found, calls=True) for m in request.messages]
    changed = any(a is not b for a, b in zip(messages, request.messages))
    return msgspec.structs.replace(request, messages=messages) if changed else None


def _redact_message(m: "Message", found: tuple[tuple[re.Pattern[str], ...], str], *, calls: bool) -> "Message":
    """``m`` with its content, reasoning, text parts (and with ``calls`` its tool calls' arguments) redacted; ``m``
    itself when nothing matched. Signed reasoning blocks are left as they are (a provider checks them)."""
    changes: dict[str, Any] = {}
    for key in ("content", "reasoning"):
        text = getattr(m, key)
        if text:
            new = redact_text(text, *found)
            if new != text:
                changes[key] = new
    if m.parts:
        parts = [msgspec.structs.replace(p, text=redact_text(p.text, *found)) if p.text else p for p in m.parts]
        if any(a.text != b.text for a, b in zip(parts, m.parts)):
            changes["parts"] = parts
    if calls and m.tool_calls:
        tool_calls = [msgspec.structs.replace(c, arguments=redact_value(c.arguments, *found)) for c in m.tool_calls]
        if any(a.arguments is not b.arguments for a, b in zip(tool_calls, m.tool_calls)):
            changes["tool_calls"] = tool_calls
    return msgspec.structs.replace(m, **changes) if changes else m
