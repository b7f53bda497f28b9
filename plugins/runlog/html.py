"""``render_html``: one self-contained HTML page drawing a run as a timeline (``zagent logs show --html``;
docs/observability.md): a row and a bar per span, errors in red, model and tool calls opening to their content. No
script and nothing from the network (inline CSS only); all text from the run is HTML-escaped, its control, bidi
and invisible characters shown as escapes.
"""

from __future__ import annotations

import datetime
import html
from typing import Any

from .tree import children_of

COLOURS = {"run": "#6c8ebf", "step": "#9fb4d8", "llm": "#e69138", "tool": "#6aa84f", "node": "#8e7cc3",
           "workflow": "#674ea7", "groupchat": "#1c4587", "turn": "#3d85c6", "skill": "#c27ba0"}
SPEAKERS = ("#cc4125", "#3c78d8", "#38761d", "#b45f06", "#741b47", "#134f5c")  # none is a kind colour above

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; } .meta { color: #555; margin-bottom: 12px; }
.legend span { display: inline-block; margin-right: 14px; } .legend i { display: inline-block; width: 12px;
  height: 12px; margin-right: 4px; vertical-align: -1px; border-radius: 2px; }
.timeline { border-top: 1px solid #ccc; }
.row { display: flex; align-items: center; height: 24px; border-bottom: 1px solid #eee; }
.label { width: 320px; box-sizing: border-box; flex: none; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; font-size: 13px; }
.track { position: relative; flex: 1; height: 18px; background: #fafafa; }
.bar { position: absolute; top: 2px; height: 14px; min-width: 3px; border-radius: 3px; opacity: .9; }
.bar.error { outline: 2px solid #c00; background-image: repeating-linear-gradient(45deg, transparent 0 4px,
  rgba(255,255,255,.5) 4px 8px); }
.axis { display: flex; margin-left: 320px; color: #666; font-size: 12px; justify-content: space-between; }
.kind { color: #777; margin-right: 6px; }
.outcome { display: inline-block; padding: 2px 10px; border-radius: 10px; font-weight: 600; margin-left: 8px;
  font-size: 14px; vertical-align: 2px; color: #fff; background: #38761d; }
.outcome.failed, .outcome.unfinished, .outcome.aborted { background: #c00; } .outcome.paused { background: #b45f06; }
.errtext { margin: 2px 0 4px 320px; padding: 4px 8px; color: #900; background: #fdecea; border-left: 3px solid #c00;
  font-size: 13px; white-space: pre-wrap; word-break: break-word; }
details.more { margin: 0 0 4px 320px; font-size: 13px; } details.more summary { color: #555; cursor: pointer; }
details.more pre { margin: 4px 0; padding: 6px 8px; background: #f6f6f6; white-space: pre-wrap; word-break: break-word;
  max-height: 400px; overflow: auto; }
"""

#: how a run ended, in the header, by its end status or outcome
ENDINGS = {"ok": "finished", "completed": "finished", "error": "failed", "failed": "failed",
           "unfinished": "unfinished", "paused": "paused", "aborted": "aborted", "cancelled": "aborted"}


def render_html(rows: list[dict[str, Any]]) -> str:
    """The page for one run's rows (as ``RunLogStore.spans`` returns them)."""
    roots, kids = children_of(rows)
    ordered: list[tuple[dict[str, Any], int]] = []

    def walk(row: dict[str, Any], depth: int) -> None:
        ordered.append((row, depth))
        for child in kids.get(row["span_id"] or "", []):
            walk(child, depth + 1)

    for root in roots:
        walk(root, 0)
    t0 = min((r["started"] for r, _ in ordered), default=0.0)
    end = max((r["started"] + (r.get("duration") or 0) for r, _ in ordered), default=t0)
    total = max(end - t0, 1e-6)
    speakers = _speakers(ordered)
    repeated = _repeated_errors(ordered, kids)
    body = [_row(r, depth, t0, total, speakers, r["span_id"] in repeated) for r, depth in ordered]
    top: dict[str, Any] = roots[0] if roots else {"kind": "run", "name": "?", "run_id": "?", "started": 0}
    legend = "".join(f'<span><i style="background:{c}"></i>{escape(k)}</span>'
                     for k, c in COLOURS.items() if any(r["kind"] == k for r, _ in ordered) and k != "turn")
    legend += "".join(f'<span><i style="background:{c}"></i>speaker {escape(s)}</span>' for s, c in speakers.items())
    llm = [r for r, _ in ordered if r["kind"] == "llm"]
    tokens = sum(r.get("input_tokens") or 0 for r in llm), sum(r.get("output_tokens") or 0 for r in llm)
    when = datetime.datetime.fromtimestamp(top["started"]).strftime("%Y-%m-%d %H:%M:%S")
    return "".join([
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>zagent run {escape(str(top['run_id']))}</title><style>{STYLE}</style></head><body>",
        f"<h1>{escape(top['kind'])} {escape(str(top['name']))}{_ending(top)}</h1>",
        f"<div class='meta'>run {escape(str(top['run_id']))} · {when} · {_seconds(total)} · {len(llm)} LLM calls · "
        f"{sum(1 for r, _ in ordered if r['kind'] == 'tool')} tool calls · {tokens[0]}→{tokens[1]} tokens</div>",
        f"<div class='legend'>{legend}</div>",
        f"<div class='axis'>{''.join(f'<span>{_seconds(total * i / 4)}</span>' for i in range(5))}</div>",
        "<div class='timeline'>", *body, "</div></body></html>\n",
    ])


def escape(text: str, quote: bool = True) -> str:
    """``text`` HTML-escaped, its control, bidi and invisible characters shown as escapes first (``printable``): an
    override must not reorder, nor a tag character hide, what the reviewer reads (docs/security.md, 5d)."""
    from zagent.plugins.cliterminal import printable

    return html.escape(printable(text), quote=quote)


def _speakers(ordered: list[tuple[dict[str, Any], int]]) -> dict[str, str]:
    names = []
    for r, _ in ordered:
        if r["kind"] == "turn" and r["name"] not in names:
            names.append(r["name"])
    return {n: SPEAKERS[i % len(SPEAKERS)] for i, n in enumerate(names)}


def _repeated_errors(ordered: list[tuple[dict[str, Any], int]], kids: dict[str, list[dict[str, Any]]]) -> set[Any]:
    """Spans whose error text a span inside them already shows (an error passed up): shown once, lowest."""
    def error(row: dict[str, Any]) -> str:
        return str((row["data"].get("end") or {}).get("error") or "")

    repeated = set()
    for row, _ in ordered:
        text, todo = error(row), list(kids.get(row["span_id"] or "", []))
        while text and todo:
            child = todo.pop()
            if text.split(": ", 1)[-1] in error(child):
                repeated.add(row["span_id"])
                break
            todo.extend(kids.get(child["span_id"] or "", []))
    return repeated


def _row(row: dict[str, Any], depth: int, t0: float, total: float, speakers: dict[str, str],
         repeated: bool = False) -> str:
    left = (row["started"] - t0) / total * 100
    width = (row.get("duration") or 0) / total * 100
    colour = speakers.get(row["name"]) if row["kind"] == "turn" else COLOURS.get(row["kind"], "#999")
    error = row.get("outcome") in ("error", "unfinished")
    label = (f"<span class='kind'>{escape(row['kind'])}</span>{escape(str(row['name']))}")
    attrs = (f"class='bar bar-{escape(row['kind'])}{' error' if error else ''}' "
             f"data-kind='{escape(row['kind'])}' data-name='{escape(str(row['name']), quote=True)}' "
             f"data-span='{escape(str(row['span_id'] or ''))}' data-outcome='{escape(str(row.get('outcome') or ''))}' "
             f"title='{escape(_hover(row), quote=True)}' "
             f"style='left:{left:.3f}%;width:{min(width, 100 - left):.3f}%;background:{colour or '#999'}'")
    html = (f"<div class='row'><div class='label' style='padding-left:{depth * 14}px'>{label}</div>"
            f"<div class='track'><div {attrs}></div></div></div>")
    end = row["data"].get("end") or {}
    if end.get("error") and not repeated:
        html += f"<div class='errtext'>{escape(row['kind'])} {escape(str(row['name']))} failed: {escape(str(end['error']))}</div>"
    more = _more(row)
    if more:
        html += more
    return html


def _ending(top: dict[str, Any]) -> str:
    end = top.get("data", {}).get("end") or {}
    raw = str(end.get("status") or top.get("outcome") or "unfinished")
    word = ENDINGS.get(raw, raw)
    return f" <span class='outcome {escape(word)}'>{escape(word)}</span>"


def _more(row: dict[str, Any]) -> str:
    """The model call's messages and reply, or the tool call's arguments and result, folded."""
    data = row["data"]
    if row["kind"] == "llm" and ("request" in data or "reply" in data):
        request, reply = data.get("request") or {}, data.get("reply") or {}
        parts = [f"[{m.get('role', '?')}] {_text(m.get('content'))}" + "".join(
            f"\n  calls {c.get('name')}({_text(c.get('arguments'))})" for c in m.get("tool_calls") or [])
            for m in request.get("messages") or []]
        answer = _text(reply.get("content")) + "".join(
            f"\ncalls {c.get('name')}({_text(c.get('arguments'))})" for c in reply.get("tool_calls") or [])
        return (f"<details class='more'><summary>prompt ({len(parts)} messages) and reply</summary>"
                f"<pre>{escape(chr(10).join(parts))}</pre><pre>reply: {escape(answer or '(no text)')}</pre></details>")
    if row["kind"] == "tool" and ("arguments" in data or "result" in data):
        return (f"<details class='more'><summary>arguments and result</summary>"
                f"<pre>arguments: {escape(_text(data.get('arguments')))}</pre>"
                f"<pre>result: {escape(_text(data.get('result')))}</pre></details>")
    return ""


def _text(value: Any) -> str:
    import json

    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)


def _hover(row: dict[str, Any]) -> str:
    lines = [f"{row['kind']} {row['name']}", f"duration {_seconds(row.get('duration') or 0)}",
             f"outcome {row.get('outcome') or '?'}"]
    if row["kind"] == "llm" or row.get("input_tokens"):
        lines.append(f"tokens {row.get('input_tokens') or 0} in, {row.get('output_tokens') or 0} out")
    end = row["data"].get("end") or {}
    usage = end.get("usage") or {}
    if row["kind"] != "llm" and usage.get("llm_calls"):
        lines.append(f"inside: {usage['llm_calls']} LLM calls, {usage.get('input_tokens', 0)}→"
                     f"{usage.get('output_tokens', 0)} tokens")
    if end.get("error"):
        lines.append(f"error: {str(end['error'])[:300]}")
    return "\n".join(lines)


def _seconds(value: float) -> str:
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"
