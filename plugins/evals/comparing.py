"""``compare(baseline, report)``: what changed between two eval reports of the same cases (by case id)."""

from __future__ import annotations

from typing import Any, Optional

import attrs

from .run import EvalReport

__all__ = ["Comparison", "compare"]


@attrs.define(kw_only=True)
class Comparison:
    """Case ids that ``regressed`` (passed in the baseline, not now), got ``fixed``, were ``added`` or
    ``removed`` (``lost``: removed ones that passed in the baseline); ``pass_rate`` and each scorer's mean as
    ``(baseline, now)``."""

    baseline: str
    regressed: list[str]
    fixed: list[str]
    added: list[str]
    removed: list[str]
    pass_rate: tuple[float, float]
    scores: dict[str, tuple[Optional[float], Optional[float]]]
    lost: list[str] = attrs.field(factory=list)

    @property
    def worse(self) -> bool:
        """Any case regressed, or passed in the baseline and was not run now (``zagent eval --compare`` exits 1
        then: a gate cannot say a case it did not run still passes)."""
        return bool(self.regressed or self.lost)

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
    then_rate, then_scores = _totals(baseline.totals, name)
    now_rate, now_scores = _totals(report.totals, "this run")
    labels = sorted(set(then_scores) | set(now_scores))
    removed = [i for i in old if i not in new]
    return Comparison(
        baseline=name,
        regressed=[i for i in common if old[i].passed and not new[i].passed],
        fixed=[i for i in common if new[i].passed and not old[i].passed],
        added=[i for i in new if i not in old], removed=removed, lost=[i for i in removed if old[i].passed],
        pass_rate=(then_rate, now_rate),
        scores={k: (then_scores.get(k), now_scores.get(k)) for k in labels})


def _totals(totals: dict[str, Any], name: str) -> tuple[float, dict[str, Optional[float]]]:
    """The pass rate and mean scores of a report's ``totals``; a ``ConfigError`` naming the report when they are
    not numbers (an edited baseline's text or list made the comparison fail with a traceback)."""
    from zagent.errors import ConfigError

    rate, scores = totals.get("pass_rate", 0.0), totals.get("scores", {})
    if not _number(rate) or not isinstance(scores, dict) or not all(
            isinstance(k, str) and (v is None or _number(v)) for k, v in scores.items()):
        raise ConfigError(f"the eval report {name!r} has totals that are not numbers (pass_rate {rate!r:.40}, "
                          f"scores {scores!r:.80}); it was edited or written by something else: give a report "
                          "written by 'zagent eval --report'")
    return float(rate), scores


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
