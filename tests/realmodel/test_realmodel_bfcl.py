"""A fixed slice of BFCL's development categories, zagent's defaults on the real model, with a floor on the score.

The cases are the ones bench/toolcalls.py runs with ``--limit 3`` (3 spread over each development
category; the held-out categories are never used), scored by BFCL's own AST checker. Needs the BFCL
data: ``pip install --no-deps bfcl-eval==2026.3.23`` (.ci/steps/50-realmodel.sh installs it); skipped
without it. The floor sits below the score recorded in bench/RESULTS.md, so a regression in the formats,
the probe or the prompts fails CI while temperature-0 noise between llama.cpp builds does not.
"""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from .conftest import ROOT

SLICE = {
    "live_multiple": ["live_multiple_0-0-0", "live_multiple_351-133-15", "live_multiple_702-164-18"],
    "live_parallel": ["live_parallel_0-0-0", "live_parallel_5-2-0", "live_parallel_10-6-0"],
    "live_parallel_multiple": ["live_parallel_multiple_0-0-0", "live_parallel_multiple_8-7-0",
                               "live_parallel_multiple_16-14-0"],
    "live_irrelevance": ["live_irrelevance_0-0-0", "live_irrelevance_294-73-1", "live_irrelevance_588-183-1"],
    "live_relevance": ["live_relevance_0-0-0", "live_relevance_5-5-0", "live_relevance_10-10-0"],
}
#: cases of the 15 zagent's default must get right: measured 4 of 15 on 2026-12-03 (bench/RESULTS.md), one case of slack
FLOOR = 3


def _bench():
    spec = importlib.util.spec_from_file_location("zagent_bench_toolcalls", ROOT / "bench" / "toolcalls.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(1500)  # a hang guard, not a speed check: 15 model cases took 484-600+ s on 2 loaded cores
def test_bfcl_dev_slice_scores_above_its_floor(model_server):
    """zagent's default (no profile set) on 15 fixed BFCL dev cases: at least FLOOR right by BFCL's checker."""
    pytest.importorskip("bfcl_eval", reason="pip install --no-deps bfcl-eval==2026.3.23")
    bench = _bench()
    checker = bench.load_checker()
    from bfcl_eval.constants.enums import Language

    bench._Lang.PYTHON = Language.PYTHON
    runner = bench.Bench(model_server.url, model_server.model, 256)

    async def run():
        verdicts = {}
        for category, ids in SLICE.items():
            for case in bench.load_ids(category, ids):
                calls, _tokens, _text = await runner.zagent(case, "default")
                verdicts[case["id"]] = bench.score(checker, category, case, calls)
        await runner.http.aclose()
        return verdicts

    verdicts = asyncio.run(run())
    right = sum(verdicts.values())
    assert right >= FLOOR, f"{right} of {len(verdicts)} right (floor {FLOOR}): {verdicts}"
