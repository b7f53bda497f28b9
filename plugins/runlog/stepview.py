"""``render_step``: one step of a logged run in full (``zagent logs show RUN --step N``): each model call's whole prompt
and reply, each tool call's arguments and result, as the log holds them; control characters escaped, newlines kept.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from .tree import _printable, _seconds, children_of


def step_rows(rows: list[dict[str, Any]], step: int) -> Optional[list[dict[str, Any]]]:
    """The model and tool calls of step ``step`` (the ``step`` span's, or else the ``step``-th model call with the
    tool calls after it), in order; ``None`` when the run has no such step."""
    _, kids = children_of(rows)
    steps = [r for r in rows if r["kind"] == "step" and (r["data"].get("start") or {}).get("step") == step]
    if steps:
        found: list[dict[str, Any]] = []
        todo = [steps[0]]
        while todo:
            row = todo.pop(0)
            for child in kids.get(row["span_id"] or "", []):
                if child["kind"] in ("llm", "tool"):
                    found.append(child)
                todo.append(child)
        return sorted(found, key=lambda r: r["started"])
    calls = sorted((r for r in rows if r["kind"] in ("llm", "tool")), key=lambda r: r["started"])
    llm_at = [i for i, r in enumerate(calls) if r["kind"] == "llm"]
    if not 1 <= step <= len(llm_at):
        return None
    end = llm_at[step] if step < len(llm_at) else len(calls)
    return calls[llm_at[step - 1]:end]


def render_step(rows: list[dict[str, Any]], step: int) -> str:
    lines: list[str] = []
    for row in rows:
        head = f"── {row['kind']} {_printable(str(row['name']))}"
        if row.get("duration") is not None:
            head += f"  {_seconds(row['duration'])}"
        if row.get("outcome"):
            head += f"  {row['outcome']}"
        lines.append(head)
        data = row["data"]
        if row["kind"] == "llm":
            request = data.get("request") or {}
            for message in request.get("messages") or []:
                lines.append(f"[{message.get('role', '?')}] {_text(message.get('content'))}")
                for call in message.get("tool_calls") or []:
                    lines.append(f"  calls {call.get('name')}({_json(call.get('arguments'))})")
            if request.get("tools"):
                lines.append(f"(tools offered: {', '.join(map(str, request['tools']))})")
            reply = data.get("reply") or {}
            lines.append("── reply")
            lines.append(_text(reply.get("content")) or "(no text)")
            for call in reply.get("tool_calls") or []:
                lines.append(f"  calls {call.get('name')}({_json(call.get('arguments'))})")
        else:
            lines.append(f"arguments: {_json(data.get('arguments'))}")
            lines.append(f"result: {_text(data.get('result'))}")
        error = (data.get("end") or {}).get("error")
        if error:
            lines.append(f"error: {_text(error)}")
    return "\n".join(lines)


def _text(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else _json(value)
    return "\n".join(_printable(line) for line in text.split("\n"))


def _json(value: Any) -> str:
    return _printable(json.dumps(value, ensure_ascii=False, default=repr))
