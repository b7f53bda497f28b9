"""Refuse tool calls whose values the model made up: ``ground_calls`` marks such a call ``refused`` (answered
``blocked``, never run; the model is told to ask) at ``ModelProfile.ground_arguments`` level ``"schema"`` (a value
copied from the schema), ``"words"`` (any value not said) or ``"off"``, never enums, booleans (``"True"`` too) or
defaults; optional values never said are left out; a stand-in nobody said (``YOUR_API_KEY``, ``12345``) is refused.
docs/architecture.md has the rules; ``conversation_text`` is what was said.
"""

from __future__ import annotations

import logging
import re
from decimal import Decimal
from typing import Any, Iterable, Mapping, Optional, Sequence

import msgspec

from ..errors import ConfigError
from ..types import Message, ToolCall, ToolSpec

LEVELS = ("off", "schema", "words")
_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")
#: a digit-group separator ("200,000", "1 000 000" with a no-break space, "10_000"): folded away
_GROUPS = re.compile(r"(?<=\d)[,_'\u00a0\u202f](?=\d{3}(?!\d))")
#: a number with a scale word ("$2 million", "1.5k"): its value is added to what was said; a number is tried
#: from its first digit only (from every digit, a tool result's run of 100,000 digits took minutes to search)
_SCALED = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(thousand|million|billion|trillion|k|m|bn)\b")
_SCALES = {"thousand": 10**3, "k": 10**3, "million": 10**6, "m": 10**6, "billion": 10**9, "bn": 10**9,
           "trillion": 10**12}
#: a percentage ("5%", "4.5 percent"): its fraction (0.05, 0.045) is added to what was said
_PERCENT = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:%|percent\b|per cent\b)")
#: numbers said as words ("three restaurants", "a dozen eggs"): their digits are added to what was said
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70",
                      "eighty": "80", "ninety": "90", "hundred": "100", "dozen": "12", "once": "1",
                      "twice": "2", "thrice": "3", "single": "1", "double": "2", "triple": "3", "pair": "2"})
#: a stand-in a model writes for a value it lacks: a template ("YOUR_API_KEY", "your_user_id", "YOUR TOKEN"),
#: the counting number ("12345", "user-1234", not "12346") or the reserved example domain ("a@example.com")
_STAND_IN = re.compile(r"\b(?i:your)_\w*[A-Za-z0-9]|\bYOUR[ -][A-Z]{2,}\b"
                       r"|(?<![\d.])0?1234(?:5(?:6(?:7(?:8(?:90?)?)?)?)?)?(?![\d.])"
                       r"|\b(?i:example)\.(?i:com|org|net)\b")
#: a calendar date as a whole value ("2023-04-15", "05/05/2023"), with a time of day or not
_DATE = re.compile(r"(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})(?:[ t]\d{1,2}:\d{2}(?::\d{2})?z?)?")
#: anything in a conversation that can say which day (a weekday, a month, "tomorrow", "weekend", "the 5th", "5/6",
#: "at 7 pm"; a number alone does not: "three tickets" is said as "3" too):
#: without any, a required date the model wrote was made up (the 0.5B model's habit: "2023-04-15" after
#: "get me something fun in London")
_WHEN = re.compile(r"\d(?:st|nd|rd|th|\s?[ap]\.?m\b)|\d[-/.]\d|\b(?:today|tonight|tomorrow|yesterday|days?|daily"
                   r"|weeks?|weekends?|weekly|months?|monthly|years?|yearly|dates?|morning|afternoon|evening|night"
                   r"|noon|midnight|holidays?|christmas|easter|(?:mon|tues|wednes|thurs|fri|satur|sun)day|jan|feb|apr|jun|jul|aug|sept?"
                   r"|oct|nov|january|february|march|april|june|july|august|september|october|november"
                   r"|december)\b")
_log = logging.getLogger("zagent.grounding")


def conversation_text(messages: Iterable[Message], section: str = "") -> str:
    """What the user, the system prompt and the tools said so far, folded for matching (``section``, the
    prompt-mode tools section, is left out: the schema's examples are not something anyone said)."""
    parts = []
    for m in messages:
        text = m.content or ""
        if section and section in text:
            text = text.replace(section, " ")
        parts.append(text)
    seen = _fold(" ".join(parts))
    extra = [_scaled(number, word) for number, word in _SCALED.findall(seen)]
    extra += [_fraction(number) for number in _PERCENT.findall(seen)]
    extra += [_NUMBER_WORDS[w] for w in _WORD.findall(seen) if w in _NUMBER_WORDS]
    return " ".join([seen, *dict.fromkeys(n for n in extra if n)])


def _fraction(number: str) -> str:
    """``"4.5"`` (said as "4.5%") as ``"0.045"``: exact, by decimal arithmetic."""
    value = (Decimal(number) / 100).normalize()
    return format(value, "f")


def _scaled(number: str, word: str) -> str:
    """``"2", "million"`` as ``"2000000"`` (empty when the product is not a whole number)."""
    value = float(number) * _SCALES[word]
    return str(int(value)) if value.is_integer() else ""


def ground_calls(calls: list[ToolCall], specs: Sequence[ToolSpec], seen: str, level: str) -> list[ToolCall]:
    """``calls`` with each call that has a made-up required value marked ``refused`` (see the module docstring);
    ``seen`` is ``conversation_text(...)``. Calls already refused, or of unknown tools, are left as they are."""
    if level not in LEVELS:
        raise ConfigError(f"profile ground_arguments must be one of {', '.join(map(repr, LEVELS))} (or unset), "
                          f"got {level!r}")
    if level == "off" or not calls:
        return calls
    by_name = {s.name: s for s in specs}
    out = []
    for call in calls:
        spec = by_name.get(call.name)
        why = None
        if spec is not None and call.refused is None and isinstance(call.arguments, dict):
            why = _stand_in(call.arguments, spec, seen) or _invented(call.arguments, spec, seen, level)
            if why is None:
                kept = _pruned(call.arguments, spec, seen)
                if kept is not None:
                    call = msgspec.structs.replace(call, arguments=kept)
        out.append(call if why is None else msgspec.structs.replace(call, refused=why))
    return out


def _stand_in(arguments: Mapping[str, Any], spec: ToolSpec, seen: str) -> Optional[str]:
    """Why a call is refused when a value in it (at any depth) holds a stand-in nobody said (``"YOUR_API_KEY"``,
    ``"Bearer your_access_token"``, ``12345``, ``"https://api.example.com"``): the model wrote it for a value it
    does not have. An argument equal to its parameter's default or one of its enum values is the tool's own."""
    props = (spec.parameters or {}).get("properties")
    props = props if isinstance(props, dict) else {}
    stack: list[Any] = [value for name, value in arguments.items() if not _schema_value(value, props.get(name))]
    budget = 1000  # values looked at: arguments are small; a huge one is not searched through
    while stack and budget > 0:
        value = stack.pop()
        budget -= 1
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if isinstance(value, str):
            for m in _STAND_IN.finditer(value[:2000]):
                if _fold(m.group(0)) not in seen:
                    return (f"the value {value[:80]!r} holds the stand-in {m.group(0)!r}, not a real value; do not "
                            "make it up: ask the user for it (ask_clarification), or answer without this tool if "
                            "none fits")
        elif isinstance(value, Mapping):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return None


def _schema_value(value: Any, sub: Any) -> bool:
    """Whether ``value`` is the parameter's own default or one of its enum values."""
    if not isinstance(sub, dict):
        return False
    enum = sub.get("enum")
    return ("default" in sub and value == sub["default"]) or (isinstance(enum, list) and value in enum)


def _pruned(arguments: Mapping[str, Any], spec: ToolSpec, seen: str) -> Optional[dict[str, Any]]:
    """``arguments`` without the optional values never said (``None``: nothing to leave out)."""
    schema = spec.parameters or {}
    props = schema.get("properties")
    if not isinstance(props, dict):
        return None
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    dropped = [name for name, value in arguments.items()
               if name not in needed and isinstance(props.get(name), dict)
               and not _flag(value) and isinstance(value, (str, int, float))
               and value != props[name].get("default") and not _said(_fold(str(value)), seen)]
    if not dropped:
        return None
    _log.info("tool %r: left out %s (never said; the tool's default applies)", spec.name,
              ", ".join(f"{n}={arguments[n]!r}" for n in dropped))
    return {name: value for name, value in arguments.items() if name not in dropped}


def _invented(arguments: Mapping[str, Any], spec: ToolSpec, seen: str, level: str) -> Optional[str]:
    schema = spec.parameters or {}
    props = schema.get("properties")
    required = schema.get("required")
    if not isinstance(props, dict) or not isinstance(required, list):
        return None
    for name in required:
        sub = props.get(name)
        if name not in arguments or not isinstance(sub, dict) or "enum" in sub:
            continue
        value = arguments[name]
        if _flag(value) or not isinstance(value, (str, int, float)) or value == sub.get("default"):
            continue
        text = _fold(str(value))
        if not text or _said(text, seen):
            continue
        if _fold(_schema_text(spec, sub)).find(text) >= 0 and len(text) > 1:
            return (f"the value {value!r} for {name!r} is the example in the tool's description, not something the "
                    "user said; do not guess it: ask the user for it (ask_clarification), or answer without "
                    "this tool if none fits")
        if _DATE.fullmatch(text) and seen.isascii() and not _WHEN.search(seen):
            return (f"the date {value!r} for {name!r} is nowhere in the conversation and nothing in it says which "
                    "day; do not make it up: ask the user for it (ask_clarification), or answer without this tool "
                    "if none fits")
        if level == "words":
            return (f"the value {value!r} for {name!r} is nowhere in the conversation; do not make it up: ask the "
                    "user for it (ask_clarification), or answer without this tool if none fits")
    return None


def _flag(value: Any) -> bool:
    """A yes/no value: a boolean, or one spelled as text (``"True"``, ``"false"``: a string enum standing for a
    flag). Like a boolean it is a choice the model read from the request ("suitable for children"), never words
    the user said, so it is not checked."""
    return isinstance(value, bool) or (isinstance(value, str) and value.strip().casefold() in ("true", "false"))


def _said(text: str, seen: str) -> bool:
    """Whether a folded value was said: as a whole, as a whole number (``20.0`` as "20"), by one of its words
    of three or more letters ("San Francisco, CA" after "San Francisco"), or, with no such word, by all of
    its numbers ("2023-04-15" needs 2023, 04 and 15)."""
    if text in seen:
        return True
    if text.replace(".", "", 1).isdigit():
        try:
            number = float(text)
        except ValueError:
            return False
        return number.is_integer() and str(int(number)) in seen
    tokens = _WORD.findall(text)
    words = [t for t in tokens if not t.isdigit() and len(t) >= 3]
    if words:
        return any(w in seen for w in words)
    numbers = [t for t in tokens if t.isdigit()]
    return bool(numbers) and all(n in seen for n in numbers)


def _schema_text(spec: ToolSpec, sub: Mapping[str, Any]) -> str:
    return f"{spec.description} {msgspec.json.encode(sub).decode()}"


def _fold(text: str) -> str:
    return _SPACE.sub(" ", _GROUPS.sub("", text.casefold()))
