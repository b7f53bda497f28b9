"""``compare(baseline, report)``: what changed between two eval reports of the same cases (by case id)."""

from __future__ import annotations

from typing import Any, Optional

import attrs

from .run import EvalReport

__all__ = ["Comparison", "compare"]


@attrs.define(kw_only=True)
class Comparison:
    """Case ids that ``regressed`` (passed in the baseline, not now), got ``fixed``, were ``added`` or
    ``removed``; ``pass_rate`` and each scorer's mean as ``(baseline, now)``."""

    baseline: str
    regressed: list[str]
    fixed: list[str]
    added: list[str]
    removed: list[str]
    pass_rate: tuple[float, float]
    scores: dict[str, tuple[Optional[float], Optional[float]]]

    @property
    def worse(self) -> bool:
        """Any case regressed (``zagent eval --compare`` exits 1 then)."""
        return bool(self.regressed)

    def render(self) -> str:
        from .render import render_comparison

        return render_comparison(self)


def compare(baseline: Any, report: EvalReport) -> Comparison:
    """``report`` set against ``baseline`` (an ``EvalReport`` or the path of a saved one)."""
    name = "the baseline"
    if not isinstance(baseline, EvalReport):
        name = str(baseline)
        baseline = EvalReport.load(baseline)
    old = {c.id: c for c in baseline.cases}
    new = {c.id: c for c in report.cases}
    common = [i for i in new if i in old]
    labels = sorted(set(baseline.totals.get("scores", {})) | set(report.totals.get("scores", {})))
    return Comparison(
        baseline=name,
        regressed=[i for i in common if old[i].passed and not new[i].passed],
        fixed=[i for i in common if new[i].passed and not old[i].passed],
        added=[i for i in new if i not in old], removed=[i for i in old if i not in new],
        pass_rate=(float(baseline.totals.get("pass_rate", 0.0)), float(report.totals.get("pass_rate", 0.0))),
        scores={k: (baseline.totals.get("scores", {}).get(k), report.totals.get("scores", {}).get(k)) for k in labels})
