"""Terminal text for eval reports and comparisons (model output made safe to print: no control characters).

Every cell goes through ``clean``: one line, at most ``limit`` characters, escaped by the CLI's
``cliterminal.printable`` (C0/C1 controls, bidi overrides, newlines and tabs shown as escapes).
"""

from __future__ import annotations

from typing import Any

import msgspec

_encode = msgspec.json.Encoder(enc_hook=repr).encode


def clean(value: Any, limit: int = 60) -> str:
    """``value`` on one line, at most ``limit`` characters, its control characters escaped (``printable``)."""
    from zagent.plugins.cliterminal import printable

    text = printable(value if isinstance(value, str) else _encode(value).decode(), layout=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def render_report(report: Any) -> str:
    lines = [f"eval of {clean(report.agent)}: {len(report.cases)} case(s)"]
    for case in report.cases:
        mark = "PASS" if case.passed else ("ERROR" if case.error else "FAIL")
        if case.error:
            lines.append(f"  {mark:5} {clean(case.id, 30)}  {clean(case.error, 90)}")
            continue
        scores = " ".join(f"{clean(k, 48)}={v.value:.2f}" for k, v in case.scores.items())
        why = "; ".join(clean(v.reason, 60) for v in case.scores.values() if not v.passed and v.reason)
        lines.append(f"  {mark:5} {clean(case.id, 30)}  {scores}  output={clean(case.output, 40)}"
                     + (f"  ({why})" if why else ""))
    t = report.totals
    means = ", ".join(f"{clean(k, 48)} {v:.2f}" for k, v in t.get("scores", {}).items())
    lines.append(f"total: passed {t.get('passed', 0)}/{t.get('cases', 0)} ({100 * t.get('pass_rate', 0):.1f}%), "
                 f"failed {t.get('failed', 0)}, errors {t.get('errors', 0)}; mean scores: {means or 'none'}; "
                 f"tokens {t.get('input_tokens', 0)} in / {t.get('output_tokens', 0)} out")
    return "\n".join(lines)


def render_comparison(comparison: Any) -> str:
    c = comparison
    lines = [f"compared with {clean(c.baseline)}: pass rate {100 * c.pass_rate[0]:.1f}% -> {100 * c.pass_rate[1]:.1f}%"]
    for label, (old, new) in c.scores.items():
        lines.append(f"  {clean(label, 30)}: {old if old is None else f'{old:.2f}'} -> "
                     f"{new if new is None else f'{new:.2f}'}")
    for title, ids in (("regressed (passed before, not now)", c.regressed), ("fixed", c.fixed),
                       ("new cases", c.added), ("cases gone", c.removed),
                       ("not run now (passed before)", getattr(c, "lost", []))):
        if ids:
            lines.append(f"  {title}: {', '.join(clean(i, 30) for i in ids[:20])}"
                         + (f" and {len(ids) - 20} more" if len(ids) > 20 else ""))
    return "\n".join(lines)
