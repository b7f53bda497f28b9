"""``grouped``: the rows of ``zagent logs list`` with each batch's item runs folded into one row, named by the batch id,
started when its first item did, the items' time, calls and tokens added up and their outcomes counted
(``12 ok, 2 error``). Pure function over store rows.
"""

from __future__ import annotations

from typing import Any


def grouped(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    batches: dict[str, dict[str, Any]] = {}
    outcomes: dict[str, dict[str, int]] = {}
    for run in runs:
        batch = run.get("batch")
        if not batch:
            rows.append(run)
            continue
        row = batches.get(batch)
        if row is None:
            row = batches[batch] = {**run, "run_id": batch, "kind": "batch", "duration": 0.0, "input_tokens": 0,
                                    "output_tokens": 0, "llm_calls": 0, "tool_calls": 0}
            outcomes[batch] = {}
            rows.append(row)
        row["started"] = min(row["started"], run["started"])
        for key in ("duration", "input_tokens", "output_tokens", "llm_calls", "tool_calls"):
            row[key] += run.get(key) or 0
        counts = outcomes[batch]
        counts[run.get("outcome") or "?"] = counts.get(run.get("outcome") or "?", 0) + 1
        items = sum(counts.values())
        row["name"] = f"{run['name']} ×{items}"
        row["outcome"] = ", ".join(f"{n} {o}" for o, n in sorted(counts.items()))
    return rows
