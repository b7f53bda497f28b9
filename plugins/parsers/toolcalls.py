"""Reading text tool calls: ``extract(text) -> Extraction(calls, errors, text)`` finds every common style, whichever
was asked for. Each call has a unique id; a malformed call is a ``ToolCallError``, never dropped; arguments that
are not a JSON object stay raw text in ``ToolCall.arguments``; ``text`` is the reply without the calls.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from typing import Any, NamedTuple, Optional, Union

import msgspec
from zagent.providerkit import new_call_id
from zagent.agentkit.thinking import strip_think
from zagent.types import ToolCall

from . import jsontext
from .callrepair import repair_call

_encode = msgspec.json.encode


class ToolCallError(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A call the model tried to make but that could not be read; ``message`` says why."""

    raw: str
    message: str
    name: Optional[str] = None


class Extraction(NamedTuple):
    """What ``extract`` found: calls, malformed-call errors, and the remaining (non-call) text."""

    calls: list[ToolCall]
    errors: list[ToolCallError]
    text: str


_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|(?=<tool_call>)|\Z)", re.DOTALL | re.IGNORECASE)
_FUNCTION_TAG = re.compile(r"<function=([\w.-]+)>(.*?)(?:</function>|\Z)", re.DOTALL)
_MISTRAL = re.compile(r"\[TOOL_CALLS\]\s*")
_MISTRAL_NAMED = re.compile(r"([\w.-]+)(?:\[CALL_ID\]([\w-]+))?\[ARGS\]\s*")
_BARE = re.compile(r"\{\s*\"(?:name|type|function)\"\s*:")
_SPECIAL = re.compile(r"<\|(?:python_tag|eom_id|eot_id)\|>")
_NAME = re.compile(r"\"(?:name|tool)\"\s*:\s*\"([^\"]+)\"")
_CALL_FENCES = frozenset({"tool_call", "tool_calls", "tool", "function_call", "tool_code"})
_ARG_KEYS = ("arguments", "parameters", "args", "input", "tool_input")
_BLANKS = re.compile(r"\n{3,}")
#: what a finder yields: (start, end, the call objects read there, the error when none could be read)
_Found = tuple[int, int, list[Any], Optional[ToolCallError]]


# -- reading -----------------------------------------------------------------------


def extract(text: str) -> Extraction:
    """All tool calls in ``text``, malformed-call errors, and the text with the calls removed.

    Styles read: ``<tool_call>`` and ``<function=name>`` blocks, fenced JSON calls, Mistral ``[TOOL_CALLS]``,
    Llama-3 bare JSON, almost-JSON calls (``callrepair``) and a reply of nothing but Python calls (``pycall``).
    """
    if not isinstance(text, str):
        return Extraction([], [ToolCallError(raw=repr(text), message="reply is not text")], "")
    text = strip_think(text)  # a call the model considered inside <think> is never run
    found: list[_Found] = []
    taken = _Spans()
    for finder in (_tagged, _mistral, _fenced, _bare):
        for start, end, items, err in finder(text, taken):
            found.append((start, end, items, err))
            taken.add(start, end)
    if not found and "(" in text:  # a model drifting into Python-call style: only a reply of nothing but calls
        from .pycall import read

        drifted = read(text, whole=True)
        if drifted is not None:
            return drifted
    found.sort(key=lambda f: f[0])
    calls, errors = _build(found)
    return Extraction(calls, errors, _remaining(text, taken.spans))


class _Spans:
    """Non-overlapping ``(start, end)`` spans already read as calls, kept sorted for O(log n) checks."""

    __slots__ = ("spans", "_starts")

    def __init__(self) -> None:
        self.spans: list[tuple[int, int]] = []
        self._starts: list[int] = []

    def add(self, start: int, end: int) -> None:
        i = bisect.bisect_left(self._starts, start)
        self._starts.insert(i, start)
        self.spans.insert(i, (start, end))

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect.bisect_right(self._starts, start)
        if i and self.spans[i - 1][1] > start:
            return True
        return i < len(self.spans) and self.spans[i][0] < end


def _overlaps(start: int, end: int, taken: _Spans) -> bool:
    return taken.overlaps(start, end)


def _tagged(text: str, taken: _Spans) -> Iterable[_Found]:
    if "<tool_call>" in text or "<TOOL_CALL>" in text.upper():
        for m in _BLOCK.finditer(text):
            yield (m.start(), m.end(), *_decode_block(m.group(1)))
    if "<function=" in text:
        for m in _FUNCTION_TAG.finditer(text):
            if _overlaps(m.start(), m.end(), taken):
                continue
            yield m.start(), m.end(), [{"name": m.group(1), "arguments": _args_text(m.group(2))}], None


def _decode_block(body: str) -> tuple[list[Any], Optional[ToolCallError]]:
    inner = body.strip()
    fence = jsontext.FENCE.search(inner)
    if fence:
        inner = fence.group(2).strip()
    try:
        value = jsontext.loads(inner)
    except ValueError as exc:
        several = _several_objects(inner) or repair_call(inner, _call_shaped)
        if several:
            return several, None
        return [], _error(body, f"the call is not valid JSON ({exc})")
    return (value if isinstance(value, list) else [value]), None


_SEPARATORS = re.compile(r"[\s,;]*")


def _several_objects(text: str) -> list[Any]:
    """Several call objects one after another (newline, comma or ';' between), else ``[]``."""
    items, pos = [], 0
    for start, end, value in jsontext.iter_objects(text):
        if not _SEPARATORS.fullmatch(text, pos, start) or not _call_shaped(value):
            return []
        items.append(value)
        pos = end
    return items if items and _SEPARATORS.fullmatch(text, pos) else []


def _args_text(body: str) -> Any:
    body = body.strip()
    try:
        return jsontext.loads(body) if body else {}
    except ValueError:
        return body


def _mistral(text: str, taken: _Spans) -> Iterable[_Found]:
    if "[TOOL_CALLS]" not in text:
        return
    pairs: Optional[dict[int, int]] = None
    done = 0
    for m in _MISTRAL.finditer(text):
        if m.start() < done or _overlaps(m.start(), m.end(), taken):
            continue
        if pairs is None:  # one bracket pass serves every marker after this one
            pairs = jsontext.bracket_pairs(text, m.end())
        for found in _mistral_at(text, m.start(), m.end(), pairs):
            done = found[1]
            yield found


def _mistral_at(text: str, start: int, pos: int, pairs: dict[int, int]) -> Iterable[_Found]:
    if text.startswith("[", pos):
        end = pairs.get(pos)
        if end is None:
            yield start, len(text), [], _error(text[start:], "the [TOOL_CALLS] list is not closed")
            return
        try:
            value = jsontext.loads(text[pos:end])
        except ValueError as exc:
            yield start, end, [], _error(text[start:end], f"the [TOOL_CALLS] list is not valid JSON ({exc})")
            return
        yield start, end, (value if isinstance(value, list) else [value]), None
        return
    items: list[Any] = []
    end = pos
    while (m := _MISTRAL_NAMED.match(text, end)) is not None:
        obj_end = pairs.get(m.end()) if text.startswith(("{", "["), m.end()) else None
        stop = obj_end or _line_end(text, m.end())
        item = {"name": m.group(1), "arguments": _args_text(text[m.end():stop])}
        if m.group(2):
            item["id"] = m.group(2)
        items.append(item)
        end = stop
        end = end + len(text[end:]) - len(text[end:].lstrip())
    if items:
        yield start, end, items, None
    else:
        yield start, _line_end(text, pos), [], _error(text[start:_line_end(text, pos)],
                                                      "nothing readable follows [TOOL_CALLS]")


def _line_end(text: str, pos: int) -> int:
    nl = text.find("\n", pos)
    return len(text) if nl < 0 else nl


def _fenced(text: str, taken: _Spans) -> Iterable[_Found]:
    if "```" not in text:
        return
    for start, end, lang, body in jsontext.fences(text):
        if _overlaps(start, end, taken):
            continue
        must = lang in _CALL_FENCES
        if not must and lang not in ("json", "", "javascript"):
            continue
        try:
            value = jsontext.loads(body.strip())
        except ValueError as exc:
            if must or _looks_like_call(body):
                yield start, end, [], _error(body, f"the fenced call is not valid JSON ({exc})")
            continue
        items = value if isinstance(value, list) else [value]
        if must or (items and all(_call_shaped(i) for i in items)):
            yield start, end, items, None


def _bare(text: str, taken: _Spans) -> Iterable[_Found]:
    if "{" not in text:
        return
    pos, pairs, tries = 0, None, 0
    while (m := _BARE.search(text, pos)) is not None and tries < 64:
        start = m.start()
        pos = start + 1
        if _overlaps(start, start + 1, taken):
            continue
        if pairs is None:
            pairs = jsontext.bracket_pairs(text, start)
        end = pairs.get(start)
        tries += 1  # bounds the failed candidates; a call found gives the try back below
        try:
            value = jsontext.loads(text[start:end]) if end else None
        except ValueError:
            value = None
        if end and isinstance(value, dict) and _call_shaped(value):  # (a value was read only when end is set)
            yield start, end, [value], None
            pos, tries = end, tries - 1
        elif value is None and _looks_like_call(text[start:end or len(text)]):
            stop = end or len(text)
            repaired = repair_call(text[start:stop], _call_shaped)  # a made-up "output", a missing brace
            if repaired:
                yield start, stop, repaired, None
            else:
                yield start, stop, [], _error(text[start:stop], "the call is not valid JSON")
            pos = stop


def _looks_like_call(text: str) -> bool:
    return bool(_NAME.search(text)) and any(f'"{k}"' in text for k in _ARG_KEYS)


def _call_shaped(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    fn = value.get("function")
    if isinstance(fn, dict) and isinstance(fn.get("name"), str):
        return True
    name = value.get("name", value.get("tool"))
    return isinstance(name, str) and any(k in value for k in _ARG_KEYS)


def _error(raw: str, why: str) -> ToolCallError:
    name = _NAME.search(raw)
    return ToolCallError(raw=raw.strip(), message=why, name=name.group(1) if name else None)


# -- building calls ------------------------------------------------------------------


def _build(found: list[_Found]) -> tuple[list[ToolCall], list[ToolCallError]]:
    calls: list[ToolCall] = []
    errors: list[ToolCallError] = []
    seen: set[str] = set()
    for _s, _e, items, err in found:
        if err is not None:
            errors.append(err)
        for item in items:
            call = _to_call(item)
            if isinstance(call, ToolCallError):
                errors.append(call)
                continue
            if call.id in seen:
                call = ToolCall(id=new_call_id(), name=call.name, arguments=call.arguments)
            seen.add(call.id)
            calls.append(call)
    return calls, errors


def _to_call(item: Any) -> Union[ToolCall, ToolCallError]:
    raw = _encode(item).decode() if not isinstance(item, str) else item
    if not isinstance(item, dict):
        return ToolCallError(raw=raw, message="a call must be a JSON object with 'name' and 'arguments'")
    fn = item.get("function")
    body: dict[Any, Any] = fn if isinstance(fn, dict) else item
    name = body.get("name", body.get("tool", item.get("name")))
    if not isinstance(name, str) or not name.strip():
        return ToolCallError(raw=raw, message="the call has no tool name; give it as \"name\"")
    args: Any = next((body[k] for k in _ARG_KEYS if k in body), {})
    call_id = item.get("id") or body.get("id")
    return ToolCall(id=call_id if isinstance(call_id, str) and call_id else new_call_id(),
                    name=name.strip(), arguments=_arguments(args))


def _arguments(args: Any) -> Union[dict[str, Any], str]:
    if args is None:
        return {}
    if isinstance(args, dict):
        return args
    if isinstance(args, str):
        try:
            value = jsontext.loads(args) if args.strip() else {}
        except ValueError:
            return args
        return value if isinstance(value, dict) else args
    return _encode(args).decode()


def _remaining(text: str, taken: list[tuple[int, int]]) -> str:
    if not taken:
        return _SPECIAL.sub("", text).strip()
    parts, pos = [], 0
    for start, end in sorted(taken):
        if start >= pos:
            parts.append(text[pos:start])
        pos = max(pos, end)
    parts.append(text[pos:])
    rest = _BLANKS.sub("\n\n", _SPECIAL.sub("", "".join(parts))).strip()
    return "" if _SEPARATORS.fullmatch(rest) else rest
