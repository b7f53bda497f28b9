"""The ``pipe`` tool-call format, tiny-agent's ``TOOL:name|key=value&key=value`` lines (``TOOL:name`` alone: no
arguments). Values are text, JSON lists and objects decoded; an unreadable ``TOOL:`` line is a ``ToolCallError``
the model is told how to fix. It also reads every other style.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
from zagent.providerkit import new_call_id
from zagent.types import ToolCall, ToolSpec

from .toolcalls import Extraction, ToolCallError, extract
from .toolformats import ToolCallFormat, error_lines

_LINE = re.compile(r"^[ \t]*TOOL:[ \t]*(?P<body>[^\n]*)$", re.MULTILINE)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,127}")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _pairs(raw: str, rest: str) -> tuple[dict[str, Any], str]:
    """The arguments of ``rest`` (``k=v&k=v``), or an error message."""
    arguments: dict[str, Any] = {}
    for pair in (p for p in rest.split("&") if p.strip()):
        key, sep, value = pair.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not _KEY.fullmatch(key):
            return {}, f"argument {pair.strip()!r} is not key=value"
        if key in arguments:
            return {}, f"argument {key!r} is given twice"
        if value[:1] in "[{":
            try:
                value = msgspec.json.decode(value)
            except (msgspec.DecodeError, RecursionError):  # [[[[... deep stays text (the runner bounds it)
                pass
        arguments[key] = value
    return arguments, ""


def read_pipe_calls(text: str) -> Extraction:
    """The ``TOOL:`` lines of ``text``: calls, errors, and the text without those lines."""
    calls: list[ToolCall] = []
    errors: list[ToolCallError] = []
    for m in _LINE.finditer(text):
        body = m.group("body").strip()
        name, _, rest = body.partition("|")
        name = name.strip()
        if not _NAME.fullmatch(name):
            errors.append(ToolCallError(raw=m.group(0).strip(), message=f"{name!r} is not a tool name"))
            continue
        arguments, problem = _pairs(m.group(0), rest)
        if problem:
            errors.append(ToolCallError(raw=m.group(0).strip(), message=problem, name=name))
            continue
        calls.append(ToolCall(id=new_call_id(), name=name, arguments=arguments))
    return Extraction(calls=calls, errors=errors, text=_LINE.sub("", text).strip())


def _value(value: Any) -> str:
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


class PipeFormat(ToolCallFormat):
    """tiny-agent's ``TOOL:name|k=v&k=v`` lines (see the module docstring)."""

    name = "pipe"
    call_example = "TOOL:<tool name>|<argument>=<value>&<argument>=<value>"

    def extract(self, text: str) -> Extraction:
        found = read_pipe_calls(text)
        if not found.calls and not found.errors:
            return extract(text)
        others = extract(found.text)  # a reply mixing styles: the others' calls too
        return Extraction(calls=found.calls + others.calls, errors=found.errors + others.errors, text=others.text)

    def parse_tool_calls(self, text: str) -> list[ToolCall]:
        return self.extract(text).calls

    def feedback(self, errors: Any) -> str:
        return ("Some tool calls could not be read:\n" + error_lines(errors)
                + f"\nWrite each call on its own line exactly like this:\n{self.call_example}")

    def _render_tools(self, specs: list[ToolSpec]) -> str:
        lines = []
        for s in specs:
            props = (s.parameters or {}).get("properties") or {}
            args = ", ".join(f"{k}: {(v or {}).get('type', 'any') if isinstance(v, dict) else 'any'}"
                             for k, v in props.items())
            lines.append(f"- {s.name}({args}): {s.description}".rstrip(": "))
        return ("You may call tools to help answer. The tools:\n" + "\n".join(lines) + "\n\n"
                "To call a tool, write a line like this (one line per call, arguments as key=value joined "
                f"by &):\n{self.call_example}\n"
                "Then stop and wait for the results. If no tool is needed, answer directly without any TOOL: line.")

    def _render_calls(self, calls: list[ToolCall]) -> str:
        out = []
        for c in calls:
            given = c.arguments if isinstance(c.arguments, dict) else {}  # raw text (not an object): no arguments
            args = "&".join(f"{k}={_value(v)}" for k, v in given.items())
            out.append(f"TOOL:{c.name}|{args}" if args else f"TOOL:{c.name}")
        return "\n".join(out)
