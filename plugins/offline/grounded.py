"""The offline test model's values taken from the request, so its canned answers read right.

Numbers of the last user message fill numeric tool parameters, a quoted phrase a free text one; numeric outputs
take the last numeric tool result, the first text output a canned sentence. Known README questions get fixed
replies.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from zagent.types import Field, LLMRequest

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_QUOTED = re.compile(r"'([^'\n]{1,200})'|\"([^\"\n]{1,200})\"")
_FREE = ("enum", "const", "default", "pattern", "format", "examples", "minimum", "maximum", "exclusiveMinimum",
         "exclusiveMaximum", "minLength", "maxLength", "multipleOf")

#: fixed replies for the questions the README and the examples ask (matched on these words)
CANNED = (
    (("language", "model"), "A language model is a program trained on a lot of text to predict the next "
                            "word, which lets it answer questions and write text."),
    (("token",), "A token is a piece of text, often part of a word, that a language model reads and writes "
                 "one at a time."),
    (("sky", "blue"), "The sky looks blue because air scatters short blue wavelengths of sunlight more than "
                      "the longer red ones."),
    (("tide", "pool"), "Tide pools are pockets of sea water left on rocky shores at low tide, home to "
                       "anemones, crabs and snails."),
    (("explain", "result"), "The result is the sum of the question's two numbers, worked out with the add tool."),
)
OFFLINE_NOTE = "(offline test model: a canned answer)"


def last_user_text(request: LLMRequest) -> str:
    for message in reversed(request.messages):
        if message.role == "user" and isinstance(message.content, str):
            return message.content
    return ""


def _numbers(text: str) -> list[float]:
    return [float(n) for n in _NUMBER.findall(text)]


def _quoted(text: str) -> Optional[str]:
    match = _QUOTED.search(text)
    return next(g for g in match.groups() if g) if match else None


def fill_arguments(arguments: dict[str, Any], schema: dict[str, Any], request: LLMRequest) -> dict[str, Any]:
    """``arguments`` (valid for ``schema``) with free numeric and text parameters taken from the user's message."""
    text = last_user_text(request)
    numbers, quoted = _numbers(text), _quoted(text)
    properties = schema.get("properties") or {}
    filled = dict(arguments)
    used = 0
    for name, prop in properties.items():
        if not isinstance(prop, dict) or name not in filled or any(k in prop for k in _FREE):
            continue
        kind = prop.get("type")
        if kind in ("integer", "number") and used < len(numbers):
            filled[name] = _as(kind, numbers[used])
            used += 1
        elif kind == "array" and isinstance(prop.get("items"), dict) and numbers and not used \
                and prop["items"].get("type") in ("integer", "number"):
            filled[name] = [_as(prop["items"]["type"], n) for n in numbers]
            used = len(numbers)
        elif kind == "string" and quoted is not None:
            filled[name] = quoted
        elif kind == "string":
            example = _described_value(str(prop.get("description") or ""), text)
            if example is not None:
                filled[name] = example
    return filled


def _shape(text: str) -> str:
    return re.sub(r"[A-Za-z_]+", "a", re.sub(r"\d+", "0", text))


def _described_value(description: str, text: str) -> Optional[str]:
    """A value for a text parameter whose description shows examples ('America/New_York'): a word of the
    user's message of the same shape (``Europe/Oslo``), else the description's first example."""
    examples: list[str] = [a or b for a, b in _QUOTED.findall(description)]
    if not examples:
        return None
    shapes = {_shape(e) for e in examples if not e.isalpha()}  # a plain word matches any word: no shape then
    for word in text.split():
        word = word.strip("?!.,;:()")
        if word and _shape(word) in shapes:
            return word
    return examples[0]


def _as(kind: str, value: float) -> Any:
    return int(value) if kind == "integer" and value.is_integer() else value


def tool_results(request: LLMRequest) -> list[tuple[str, str]]:
    return [(m.name or "tool", m.content) for m in request.messages if m.role == "tool" and isinstance(m.content, str)]


def grounded_reply(request: LLMRequest) -> Optional[str]:
    """The fixed reply to a known question (whatever tools it called on the way: the README's agent offers
    ``word_count`` for "What is a language model?"), else one sentence from the tool results, else ``None``."""
    words = set(re.findall(r"[a-z]+", last_user_text(request).lower()))
    for keys, reply in CANNED:
        if all(any(w.startswith(k) for w in words) for k in keys):
            return f"{reply} {OFFLINE_NOTE}"
    results = tool_results(request)
    if results:
        return "The tools returned " + "; ".join(f"{name}: {content}" for name, content in results) + \
               f". {OFFLINE_NOTE}"
    return None


def canned_reply(request: LLMRequest) -> str:
    """A grounded sentence, else one saying that this is the offline model."""
    return grounded_reply(request) or f"This is the offline test model's answer; set ZAGENT_MODEL to use a " \
                                      f"real LLM. {OFFLINE_NOTE}"


def fill_fields(values: dict[str, Any], fields: list[Field], request: LLMRequest) -> dict[str, Any]:
    """Output ``values`` with numeric fields from the last numeric tool result and the first text field from
    ``grounded_reply`` (when it has something to say; else the placeholder values stay)."""
    reply = grounded_reply(request)
    numeric = [n for _, content in tool_results(request) for n in _numbers(content.strip()) if
               _NUMBER.fullmatch(content.strip())]
    filled = dict(values)
    text_done = False
    for field in fields:
        if field.examples or field.default is not None or field.fields:
            continue
        if field.type in ("integer", "number") and numeric:
            filled[field.name] = _as(field.type, numeric[-1])
        elif field.type in ("string", None, "") and not text_done and reply is not None:
            filled[field.name] = reply
            text_done = True
    return filled
