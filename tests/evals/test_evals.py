"""Evals: cases through the batch driver, the built-in and registered scorers, reports, resume and compare."""

import json
import os
import pathlib
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zagent import ConfigError, Kernel
from zagent.plugins.evals import EvalReport, Score, compare, evaluate, read_cases
from zagent.plugins.evals.scorers import parse_scorer, scorer_of

ROOT = pathlib.Path(__file__).parents[2]
PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.batch",
           "zagent.plugins.evals"]
QA = {"name": "QA", "prompt": "Answer: {question}", "inputs": [{"name": "question", "type": "string"}],
      "outputs": [{"name": "answer", "type": "string"}], "parse_mode": "str"}
CASES = [{"id": "paris", "inputs": {"question": "capital of France?"}, "expected": "Paris"},
         {"id": "rome", "inputs": {"question": "capital of Italy?"}, "expected": "Rome"}]


@pytest.fixture
def kernel():
    """A fresh isolated kernel with the offline models, actions, batch and evals."""
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    yield k
    k.close()


def _agent(kernel, replies, name="scripted:qa"):
    agent = kernel.agent(QA)
    agent.llm = kernel.llm(name, replies=replies)
    return agent


def _score(kernel, spec, output, expected):
    _, fn = scorer_of(kernel, spec)
    return fn(output, expected, None)


def test_report_scores_each_case_and_totals(kernel):
    """evaluate runs every case and reports per-case scores and the totals."""
    report = evaluate(kernel, _agent(kernel, ["Paris", "Milan"]), CASES, concurrency=1)
    assert [(c.id, c.passed, c.output) for c in report.cases] == [
        ("paris", True, {"answer": "Paris"}), ("rome", False, {"answer": "Milan"})]
    assert report.totals["passed"] == 1 and report.totals["pass_rate"] == 0.5
    assert report.totals["scores"] == {"exact": 0.5}


def test_failed_run_is_an_error_case_and_the_eval_goes_on(kernel):
    """A case whose agent run fails is reported with its error; the other cases are still scored."""
    from zagent.errors import ProviderError

    report = evaluate(kernel, _agent(kernel, [ProviderError("down"), "Rome"]), CASES, concurrency=1)
    assert report.cases[0].error and "down" in report.cases[0].error
    assert report.cases[1].passed
    assert report.totals["errors"] == 1


def test_rerun_with_out_resumes_without_running_the_agent_again(kernel, tmp_path):
    """With out, a second eval of the same cases reads the earlier runs and makes no model call."""
    out = tmp_path / "runs.jsonl"
    agent = _agent(kernel, ["Paris", "Rome"])
    evaluate(kernel, agent, CASES, out=out, concurrency=1)
    again = evaluate(kernel, agent, CASES, out=out, scorers=["contains"], concurrency=1)
    assert agent.llm.calls == 2
    assert [c.passed for c in again.cases] == [True, True]


def test_case_scorers_replace_the_runs_scorers(kernel):
    """A case's own scorers apply to it instead of the eval's."""
    cases = [{**CASES[0], "expected": "par", "scorers": [{"name": "contains"}]}]
    report = evaluate(kernel, _agent(kernel, ["Paris"]), cases, scorers=["exact"])
    assert list(report.cases[0].scores) == ["contains"] and report.cases[0].passed


def test_plugin_registers_a_scorer(kernel):
    """A plugin's zagent_register_scorers adds a scorer cases and --scorer can name."""
    class Short:
        def zagent_register_scorers(self, register):
            register("short", lambda options, kernel: lambda output, expected, case: len(output["answer"]) < 6)

    kernel.add_plugin(Short())
    report = evaluate(kernel, _agent(kernel, ["Paris", "Rome!!!"]), CASES, scorers=["short"], concurrency=1)
    assert [c.passed for c in report.cases] == [True, False]


def test_function_scorer_import_path_needs_trust(kernel):
    """A function scorer named by import path is refused unless trusted (the cases file is data)."""
    with pytest.raises(ConfigError, match="trust"):
        scorer_of(kernel, {"name": "function", "fn": "os.path:exists"})


def test_llm_judge_scores_by_the_judges_verdict(kernel):
    """llm_judge asks a model whether the output meets the expected answer; its yes/no is the score."""
    judge = kernel.llm("scripted:judge", replies=["Yes, it names Paris.", "no - wrong city"])
    report = evaluate(kernel, _agent(kernel, ["Paris", "Milan"]), CASES,
                      scorers=[{"name": "llm_judge", "model": judge}], concurrency=1)
    assert [c.passed for c in report.cases] == [True, False]
    assert "The expected answer: Paris" in judge.requests[0].messages[-1].content
    assert report.cases[1].scores["llm_judge"].reason.startswith("no")


def test_exact_compares_stripped_text_and_values(kernel):
    """exact: the one output field, stripped, equals the expected text; other values compare as they are."""
    assert _score(kernel, "exact", {"answer": " Paris "}, "Paris").passed
    assert not _score(kernel, "exact", {"answer": "paris"}, "Paris").passed
    assert _score(kernel, {"name": "exact", "case_sensitive": False}, {"answer": "paris"}, "Paris").passed
    assert not _score(kernel, "exact", {"n": 1}, "1").passed


def test_contains_is_case_insensitive_and_takes_lists(kernel):
    """contains: every expected piece appears in the output text, case-insensitively by default."""
    assert _score(kernel, "contains", {"answer": "It is PARIS."}, "paris").passed
    partial = _score(kernel, "contains", {"answer": "Paris only"}, ["paris", "lyon"])
    assert not partial.passed and partial.value == 0.5


def test_json_subset_checks_nested_keys(kernel):
    """json_subset: every expected key is in the output with an equal value, at any depth."""
    output = {"city": {"name": "Paris", "pop": 2}, "ok": True}
    assert _score(kernel, "json_subset", output, {"city": {"name": "Paris"}}).passed
    miss = _score(kernel, "json_subset", output, {"city": {"name": "Rome"}})
    assert not miss.passed and "city.name" in miss.reason


def test_numeric_tolerance(kernel):
    """numeric: within the absolute or relative tolerance passes; non-numbers fail."""
    assert _score(kernel, {"name": "numeric", "tolerance": 0.1}, {"x": "3.05"}, 3).passed
    assert not _score(kernel, {"name": "numeric", "tolerance": 0.01}, {"x": 3.05}, 3).passed
    assert _score(kernel, {"name": "numeric", "relative": 0.1}, {"x": 105}, 100).passed
    assert not _score(kernel, "numeric", {"x": "three"}, 3).passed
    assert _score(kernel, {"name": "numeric", "field": "n"}, {"n": 5, "s": "x"}, {"n": 5}).passed


def test_broken_scorer_fails_the_case_not_the_eval(kernel):
    """A scorer that raises gives the case a failed score naming the error."""
    def broken(output, expected, case):
        raise RuntimeError("oops")

    report = evaluate(kernel, _agent(kernel, ["Paris"]), CASES[:1], scorers=[broken])
    assert not report.cases[0].passed and "oops" in report.cases[0].scores["broken"].reason


def test_compare_finds_regressions_and_fixes(kernel, tmp_path):
    """compare names the cases that passed before and fail now, and the ones fixed."""
    before = evaluate(kernel, _agent(kernel, ["Paris", "Milan"], "scripted:a"), CASES, concurrency=1)
    before.save(tmp_path / "before.json")
    after = evaluate(kernel, _agent(kernel, ["Lyon", "Rome"], "scripted:b"), CASES, concurrency=1)
    diff = compare(tmp_path / "before.json", after)
    assert diff.regressed == ["paris"] and diff.fixed == ["rome"] and diff.worse
    assert EvalReport.load(tmp_path / "before.json").cases[0].scores["exact"] == Score(value=1.0, passed=True)


def test_cases_file_errors_name_the_line(tmp_path):
    """A cases file with a non-object line or a repeated id is a ConfigError naming it."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"inputs": {}}\n[1, 2]\n')
    with pytest.raises(ConfigError, match="line 2"):
        read_cases(bad)
    with pytest.raises(ConfigError, match="appears twice"):
        read_cases([{"id": "a"}, {"id": "a"}])
    with pytest.raises(ConfigError, match="line 1"):
        read_cases([{"inputs": {}, "expect": 1}])


@given(st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
       st.dictionaries(st.from_regex(r"[a-z]{1,8}", fullmatch=True), st.integers(-10**6, 10**6), max_size=4))
def test_scorer_flag_round_trips(name, options):
    """parse_scorer reads NAME:key=value,... back into the name and the (JSON) option values."""
    text = name + (":" + ",".join(f"{k}={v}" for k, v in options.items()) if options else "")
    assert parse_scorer(text) == {"name": name, **options}


def test_cli_eval_reports_and_compare_exits_1_on_regression(tmp_path):
    """`zagent eval` on the offline calculator example prints the table, writes the report, and with
    --compare against a better report exits 1."""
    env = {k: v for k, v in os.environ.items() if k not in ("ZAGENT_MODEL", "RAY_ADDRESS")}
    env["ZAGENT_LOG"] = "0"
    cmd = [sys.executable, "-m", "zagent.plugins.cli", "eval", "examples/calculator_cases.jsonl",
           "--agent", "examples/calculator_agent.json", "--scorer", "json_subset", "--report",
           str(tmp_path / "r.json"), "--out", str(tmp_path / "runs.jsonl")]
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert first.returncode == 0, first.stderr
    assert "PASS  sum" in first.stdout and "FAIL  wrong" in first.stdout and "total: passed 3/4" in first.stdout
    better = json.loads((tmp_path / "r.json").read_text())
    for case in better["cases"]:
        case["passed"] = True
    (tmp_path / "better.json").write_text(json.dumps(better))
    second = subprocess.run([*cmd[:-4], "--out", str(tmp_path / "runs.jsonl"), "--compare",
                             str(tmp_path / "better.json"), "--json"],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert second.returncode == 1, second.stderr
    assert json.loads(second.stdout)["comparison"]["regressed"] == ["wrong"]


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                    max_leaves=12)


@given(st.dictionaries(st.text(max_size=4), JSON, max_size=4), st.dictionaries(st.text(max_size=4), JSON, max_size=3))
def test_json_subset_accepts_any_object_inside_a_larger_one(expected, extra):
    """json_subset passes an output holding every expected key (more keys do not matter), and fails one missing a key."""
    kernel = Kernel(plugins=PLUGINS, entry_points=False)
    _, fn = scorer_of(kernel, "json_subset")
    assert fn({**extra, **expected}, expected, None).passed
    if expected:
        key = next(iter(expected))
        assert not fn({k: v for k, v in expected.items() if k != key}, expected, None).passed


def test_report_cells_escape_controls_and_bidi_overrides_as_the_cli_does():
    """A model output with an erase-line escape, a newline and a right-to-left override is shown escaped,
    exactly as the CLI's ``printable`` shows it, so a report row cannot be hidden or reordered."""
    from zagent.plugins.cliterminal import printable
    from zagent.plugins.evals.render import clean

    hostile = "ok\x1b[2K\nPASS \u202efdp.exe"
    shown = clean(hostile, 200)
    assert shown == printable(hostile, layout=False)
    assert "\u202e" not in shown and "\x1b" not in shown and "\n" not in shown
