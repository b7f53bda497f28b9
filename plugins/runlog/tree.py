"""``render_tree``: a run's spans as an indented text tree (``zagent logs show``). Each line: kind, name, duration,
outcome, tokens, the question a paused node or chat waits on and a preview of the reply or result, control characters
escaped. Children by start time; point events only with ``events=True``. Pure function over store rows.
"""

from __future__ import annotations

from typing import Any


def children_of(rows: list[dict[str, Any]], events: bool = False
                ) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """``(roots, children by span id)``; a row whose parent is not in the run is a root."""
    spans = [r for r in rows if events or r["kind"] != "event"]
    ids = {r["span_id"] for r in spans if r["span_id"]}
    kids: dict[str, list[dict[str, Any]]] = {}
    roots = []
    for r in sorted(spans, key=lambda r: r["started"]):
        if r["parent_id"] in ids:
            kids.setdefault(r["parent_id"], []).append(r)
        else:
            roots.append(r)
    return roots, kids


def render_tree(rows: list[dict[str, Any]], events: bool = False, width: int = 60) -> str:
    roots, kids = children_of(rows, events)
    lines: list[str] = []

    def walk(row: dict[str, Any], prefix: str, last: bool, top: bool) -> None:
        lines.append(("" if top else prefix + ("└─ " if last else "├─ ")) + describe(row, width))
        below = kids.get(row["span_id"] or "", [])
        inner = "" if top else prefix + ("   " if last else "│  ")
        for i, child in enumerate(below):
            walk(child, inner, i == len(below) - 1, False)

    for root in roots:
        walk(root, "", True, True)
    return "\n".join(lines)


def describe(row: dict[str, Any], width: int = 60) -> str:
    parts = [row["kind"], _printable(str(row["name"]))]
    if row.get("agent") and row["kind"] in ("run", "llm") and row["agent"] != row["name"]:
        parts.append(f"[{_printable(str(row['agent']))}]")
    if row.get("duration") is not None:
        parts.append(_seconds(row["duration"]))
    if row.get("outcome"):
        parts.append(row["outcome"])
    if row["kind"] == "llm" or row.get("input_tokens"):
        parts.append(f"{row.get('input_tokens') or 0}→{row.get('output_tokens') or 0} tokens")
    end = row["data"].get("end") or {}
    error = end.get("error")
    if error:
        parts.append(f"error: {_clip(str(error), width)}")
    if end.get("question") is not None:
        question = end["question"]
        parts.append(f"asks: {_clip(question if isinstance(question, str) else repr(question), width)}")
    if isinstance(end.get("questions"), list) and end["questions"]:
        parts.append(f"waits on: {_clip('; '.join(map(str, end['questions'])), width)}")
    preview = _preview(row)
    if preview:
        parts.append(f"» {_clip(preview, width)}")
    return "  ".join(str(p) for p in parts)


def _preview(row: dict[str, Any]) -> str:
    data = row["data"]
    if "reply" in data:
        reply = data["reply"]
        calls = [c.get("name", "?") for c in reply.get("tool_calls") or []]
        return (reply.get("content") or "").strip() or (f"calls {', '.join(calls)}" if calls else "")
    if "result" in data:
        return str(data["result"])
    return ""


def _clip(text: str, width: int) -> str:
    text = _printable(" ".join(text.split()))
    return text if len(text) <= width else text[: width - 1] + "…"


def _printable(text: str) -> str:
    """Control characters shown as ``\\xNN``: model or tool output must not drive the terminal (ANSI escapes)."""
    from zagent.plugins.cliterminal import printable

    return printable(text, layout=False)


def _seconds(value: float) -> str:
    return f"{value * 1000:.1f}ms" if value < 1 else f"{value:.2f}s"
