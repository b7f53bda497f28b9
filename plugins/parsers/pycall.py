"""Python-call tool calls, ``[f(a=1), spotify.play(artist="X")]``: ``read(text)`` finds them with ``ast`` and never
evaluates anything. Arguments are ``name=value`` literals (a bare name is its text); a positional or non-literal
one makes a ``ToolCallError``. A whole reply that does not read is mended once by ``repair``; calls quoted
or nested in it are flattened (``unquote``); a call holding the example's ``<...>`` placeholder is a ``ToolCallError``.
"""

from __future__ import annotations

import ast
import keyword
import re
from typing import Any, Iterator, Optional

from zagent.agentkit.fieldconvert import INT_MAX, INT_MIN
from zagent.agentkit.thinking import strip_think

from zagent.providerkit import new_call_id
from zagent.types import ToolCall, ToolSpec

from .toolcalls import Extraction, ToolCallError, extract
from .toolformats import NO_TOOL, ToolCallFormat, _encode, _function, error_lines

#: replies longer than this are not read as Python calls (ast's cost grows with the text)
MAX_TEXT = 100_000
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_TAGS = re.compile(r"</?(?:TOOLCALL|tool_code|tool_calls?)>|<\|python_tag\|>|<\|eom_id\|>|<\|eot_id\|>",
                   re.IGNORECASE)
_CALL_START = re.compile(r"(?<![\w.])[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*\s*\(")
_CONSTANTS = {"true": True, "false": False, "null": None, "none": None, "True": True, "False": False,
              "None": None}


class _NotCall(Exception):
    """The node is not a call in the accepted shape; the message says why."""


def read(text: str, *, whole: bool = False) -> Optional[Extraction]:
    """The Python-style calls in ``text`` with the remaining text, or ``None`` when it holds none.

    ``whole=True`` reads only a reply that is nothing but calls (or a fenced block of them): what
    other formats' readers accept when a model drifts into this style."""
    if not isinstance(text, str) or len(text) > MAX_TEXT or "(" not in text:
        return None
    text = strip_think(text)
    for start, end, body, embedded in _candidates(text, whole):
        found = _parse(body)
        if (found is None or found[1]) and not embedded and len(body) <= MAX_REPAIR:
            fixed = repair(body)
            mended = _parse(fixed) if fixed != body else None
            if mended is not None and (found is None or not mended[1]):
                found = mended
            if found is None and (flat := unquote(body) or unquote(fixed)) is not None:
                found = _parse(flat)  # [["f(a=1)", g(b=2)]]: quoted calls, a nested list
            if found is None and "<" in fixed:
                found = _placeholder_calls(fixed)  # [f(a=<a>)]: the example copied, told, not taken as the answer
        if found is not None and (found[0] or not embedded):  # a call in prose counts only when well-formed
            calls, errors = found
            rest = (text[:start] + text[end:]).strip()
            return Extraction(calls, errors, "" if _only_separators(rest) else rest)
    return None


def _candidates(text: str, whole: bool) -> Iterator[tuple[int, int, str, bool]]:
    """``(start, end, body, embedded)`` spans to try, most likely first: fences, the whole reply, then
    (unless ``whole``) bracketed lists, one call per line, and calls inside prose (``embedded``)."""
    for m in _FENCE.finditer(text):
        if text[text.rfind("\n", 0, m.start()) + 1:m.start()].strip():
            continue  # a fence opens a line: ``` inside a call's quoted argument is no fence
        if m.group(1).lower() in ("", "python", "py", "tool_code", "tool_call", "tool_calls"):
            yield m.start(), m.end(), _TAGS.sub("", m.group(2)), False
    yield 0, len(text), _TAGS.sub("", text), False
    if whole:
        return
    lists = _top_lists(text)
    if len(lists) > 1 and _only_separators("".join(text[a:b] for a, b in zip([0] + [e for _, e in lists],
                                                                            [s for s, _ in lists] + [len(text)]))):
        yield 0, len(text), "[" + ", ".join(text[a + 1:b - 1] for a, b in lists) + "]", False  # [f()]\n[g()]
    tries = 0
    pos = 0
    while (i := text.find("[", pos)) >= 0 and tries < 32:
        tries += 1
        end = _closing(text, i, "[", "]")
        if end is None:
            break
        yield i, end, text[i:end], True
        pos = i + 1
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) > 1:
        yield 0, len(text), "[" + ", ".join(_TAGS.sub("", ln).strip().rstrip(",;") for ln in lines) + "]", False
    tries = 0
    for m in _CALL_START.finditer(text):
        tries += 1
        if tries > 32:
            break
        end = _closing(text, m.end() - 1, "(", ")")
        if end is not None:
            yield m.start(), end, text[m.start():end], True


def _top_lists(text: str) -> list[tuple[int, int]]:
    """The spans of the bracketed lists one after another in ``text`` (at most 32), outermost only."""
    spans: list[tuple[int, int]] = []
    pos = 0
    while (i := text.find("[", pos)) >= 0 and len(spans) < 32:
        end = _closing(text, i, "[", "]")
        if end is None:
            break
        spans.append((i, end))
        pos = end
    return spans


def _closing(text: str, start: int, opener: str, closer: str) -> Optional[int]:
    """Index just past the ``closer`` matching ``text[start]`` (quoted strings skipped), else ``None``."""
    depth, i, n, quote = 0, start, len(text), ""
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _parse(body: str) -> Optional[tuple[list[ToolCall], list[ToolCallError]]]:
    body = body.strip()
    if not body or "(" not in body:
        return None
    tree = _tree(body)
    if tree is None:
        return None
    nodes = tree.elts if isinstance(tree, (ast.List, ast.Tuple)) else [tree]
    call_nodes = [n for n in nodes if isinstance(n, ast.Call) and _name(n.func)]
    if not nodes or len(call_nodes) < len(nodes):  # every element must be a named call
        return None
    calls: list[ToolCall] = []
    errors: list[ToolCallError] = []
    for node in call_nodes:
        name = _name(node.func) or ""
        try:
            if node.args:
                raise _NotCall("write every argument as name=value (it had a positional argument)")
            args = {}
            for kw in node.keywords:
                if kw.arg is None:
                    raise _NotCall("write every argument as name=value (it had **)")
                args[kw.arg] = _value(kw.value)
        except (_NotCall, RecursionError) as exc:
            raw = ast.get_source_segment(body, node) or name
            errors.append(ToolCallError(raw=raw[:2000], message=f"the call cannot be read: {exc}", name=name))
            continue
        calls.append(ToolCall(id=new_call_id(), name=name, arguments=args))
    return calls, errors


#: a tool named like a Python keyword (``import``, ``as``): the call cannot be parsed as written
_KEYWORD_NAME = re.compile(r"(?<![\w'\"])(" + "|".join(keyword.kwlist) + r")(?=\s*[.(])")
_MANGLE = "_zkw_"


def _tree(body: str) -> Optional[ast.expr]:
    """``body`` parsed as one expression; a call name that is a Python keyword is read too (``[as(a=1)]``)."""
    try:
        return ast.parse(body, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    if _MANGLE in body or not _KEYWORD_NAME.search(body):
        return None
    try:
        tree = ast.parse(_KEYWORD_NAME.sub(_MANGLE + r"\1", body), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in ast.walk(tree):  # a string that held "import (" gets its own text back
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _MANGLE in node.value:
            node.value = node.value.replace(_MANGLE, "")
    return tree


def _name(node: ast.AST) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(p[len(_MANGLE):] if p.startswith(_MANGLE) else p for p in reversed(parts))


def _value(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, int) and not isinstance(node.value, bool) and not INT_MIN <= node.value \
                <= INT_MAX:  # 0xfff... of 90,000 digits: no 64-bit integer, and str() of it raises later
            raise _NotCall(f"a whole number of {node.value.bit_length()} bits is out of range (not a 64-bit integer)")
        if isinstance(node.value, (str, int, float, bool)) or node.value is None:
            return node.value
        raise _NotCall(f"{type(node.value).__name__} values are not supported")
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_value(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        out = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                raise _NotCall("** inside a dict is not a literal")
            key = _value(k)
            out[key if isinstance(key, str) else str(key)] = _value(v)
        return out
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _value(node.operand)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.Name):
        return _CONSTANTS.get(node.id, node.id)
    raise _NotCall("argument values must be literals (strings, numbers, lists, dicts), not expressions")


#: an apostrophe between two letters ("Nyong'o", "don't"): literal text, not a closing quote
_APOSTROPHE = re.compile(r"(?<=[A-Za-z])'(?=[A-Za-z])")
#: ``name=value`` where the value is unquoted text up to the next ``,`` or ``)``
#: (a value is at most 300 characters: the scan from each ``=`` is bounded, so hostile text stays linear)
_BARE = re.compile(r"(\b[A-Za-z_]\w*\s*=\s*)([^\s,()\[\]{}'\"=][^,()\[\]{}'\"=]{0,300}?)(\s*)(?=[,)])")
#: replies longer than this are not repaired (a reply of calls is short; the repair is a second parse)
MAX_REPAIR = 20_000


def repair(body: str) -> str:
    """``body`` with the two slips small models make in Python calls mended: an apostrophe inside a word of a
    quoted value escaped (``cast='Lupita Nyong'o'``), a bare value that is no literal (``date=2021-06-15``) quoted;
    the text itself when there is nothing to mend. Only a quoted value's own text and bare values change."""
    fixed = _APOSTROPHE.sub(r"\'", body)
    return _bare_args(fixed, lambda part: _BARE.sub(_quote_bare, part))  # bare values outside quoted strings


def unquote(body: str) -> Optional[str]:
    """``body``, a list holding calls written as quoted strings or in a nested list (``[["f(a=1)", g(b=2)]]``),
    as one flat list of calls (``[f(a=1), g(b=2)]``); ``None`` unless every element is such a call and at least
    one was quoted or nested. A quoted call is mended like a reply (``repair``); nothing else is read."""
    parts: list[str] = []
    try:
        tree = _tree(body.strip())
        changed = isinstance(tree, (ast.List, ast.Tuple)) and _flatten(tree, parts, 0)
    except (RecursionError, ValueError, MemoryError):
        return None
    return "[" + ", ".join(parts) + "]" if changed else None


def _flatten(node: ast.List | ast.Tuple, parts: list[str], depth: int) -> Optional[bool]:
    """Appends the source of each call in ``node`` to ``parts``; whether one was quoted or nested, ``None`` when
    an element is not a call (nor a string or list of calls)."""
    changed = False
    for elt in node.elts:
        if isinstance(elt, ast.Call) and _name(elt.func):
            parts.append(ast.unparse(elt))
            continue
        if depth >= 2:
            return None
        if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
            text = elt.value.strip()
            inner = _tree(text) if "(" in text else None
            if inner is None and "(" in text:
                inner = _tree(repair(text))
            elt = ast.List(elts=[inner]) if isinstance(inner, ast.Call) else inner  # type: ignore[assignment]
        if not isinstance(elt, (ast.List, ast.Tuple)) or _flatten(elt, parts, depth + 1) is None:
            return None
        changed = True
    return changed


#: ``name=<...>``, a placeholder as a whole argument value (outside quoted strings, which ``_bare_args`` keeps)
_PLACEHOLDER_ARG = re.compile(r"(\b[A-Za-z_]\w*\s*=\s*)(<[^<>\n\"']{1,80}>)(?=\s*[,)])")
_MARK = "\x00zph:"


def _placeholder_calls(body: str) -> Optional[tuple[list[ToolCall], list[ToolCallError]]]:
    """A reply of calls that reads once each ``name=<...>`` placeholder is a value: its calls without one, and a
    ``ToolCallError`` for each call with one (the tools section's example copied; the model is told to write the
    request's values or answer in text). ``None`` when it holds no such placeholder or does not read even so."""
    if _MARK in body:
        return None
    marked = _bare_args(body, lambda part: _PLACEHOLDER_ARG.sub(lambda m: m.group(1) + repr(_MARK + m.group(2)), part))
    found = _parse(marked) if marked != body else None
    if found is None:
        return None
    calls, errors = [], list(found[1])
    for call in found[0]:
        args = call.arguments if isinstance(call.arguments, dict) else {}
        held = [f"{k}={v[len(_MARK):]}" for k, v in args.items() if isinstance(v, str) and v.startswith(_MARK)]
        if not held:
            calls.append(call)
            continue
        errors.append(ToolCallError(raw=f"{call.name}({', '.join(held)})"[:2000], name=call.name, message=(
            "it holds the example's placeholders, not values: write the values the request gives, "
            "or answer in plain text if it gives none")))
    return calls, errors


def _bare_args(text: str, change: Any) -> str:
    """``text`` with ``change`` applied to each stretch outside quoted strings."""
    out, i, n = [], 0, len(text)
    while i < n:
        j = i
        while j < n and text[j] not in "\"'":
            j += 1
        out.append(change(text[i:j]))
        if j >= n:
            break
        end = _string_end(text, j)
        out.append(text[j:end])
        i = end
    return "".join(out)


def _string_end(text: str, start: int) -> int:
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    return len(text)


#: the tools section's own placeholder (``a=<a>``): copied, it is no value, and stays unreadable
_PLACEHOLDER = re.compile(r"<[^<>]*>")


def _quote_bare(m: re.Match[str]) -> str:
    value = m.group(2).strip()
    if _PLACEHOLDER.fullmatch(value):
        return m.group(0)
    try:
        node = ast.parse(value, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        node = None
    literal = isinstance(node, (ast.Constant, ast.Name)) or (
        isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant))
    return m.group(0) if literal else m.group(1) + repr(value) + m.group(3)


def _only_separators(text: str) -> bool:
    return not text.strip(" \t\r\n,;[]")


def render(calls: list[ToolCall]) -> str:
    """Calls written as a Python list (``repr`` of each argument value: a literal ``read`` takes back)."""
    parts = []
    for c in calls:
        args = c.arguments if isinstance(c.arguments, dict) else {}
        parts.append(f"{c.name}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")")
    return "[" + ", ".join(parts) + "]"


def _example(specs: list[ToolSpec]) -> str:
    """The call example in the offered tools' own names (``[add(a=<a>, b=<b>)]``): with the generic
    ``func_name1(param1=value1)`` the 0.5B model wrote ``[17, 25]`` instead of calling ``add``. Placeholders,
    never values, so nothing in it can be copied as an argument."""
    parts = []
    for spec in specs[:2]:
        props = (spec.parameters or {}).get("properties")
        names = [p for p in props if isinstance(p, str)][:3] if isinstance(props, dict) else []
        parts.append(f"{spec.name}(" + ", ".join(f"{p}=<{p}>" for p in names) + ")")
    return "[" + ", ".join(parts) + "]" if parts else ""


class PyCallFormat(ToolCallFormat):
    """Calls as a Python list, ``[f(a=1), g(b="x")]`` (BFCL's style): tools shown as a JSON list."""

    name = "pycall"
    call_example = '[func_name1(param1=value1, param2=value2), func_name2(param=value)]'

    def extract(self, text: str) -> Extraction:
        found = read(text)
        return found if found is not None else extract(text)

    def _render_tools(self, specs: list[ToolSpec]) -> str:
        body = _encode([_function(s) for s in specs]).decode()
        return ("You can call these functions, given as JSON schemas:\n"
                f"{body}\n\n"
                "To call functions, reply with only a Python list of calls with keyword arguments and literal "
                f"values, like this:\n{_example(specs) or self.call_example}\n"
                f"Put every call the request needs in the one list, then stop and wait for the results. {NO_TOOL}")

    def _render_calls(self, calls: list[ToolCall]) -> str:
        return render(calls)

    def feedback(self, errors: Any) -> str:
        return ("Some tool calls could not be read:\n" + error_lines(errors)
                + f"\nWrite the calls exactly like this, with literal values:\n{self.call_example}")
