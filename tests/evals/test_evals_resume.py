"""Resuming an eval from its runs file (``out``): only the runs this agent made of these cases' inputs count; another
agent's (or an edited agent's, or hand-written) records are refused before any model call; an edited case runs
again. And scorer options a scorer does not take are refused, not ignored."""

import json

import pytest

from zagent import ConfigError, Kernel
from zagent.plugins.evals import evaluate

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.batch",
           "zagent.plugins.evals", "zagent.plugins.cli"]
CASES = [{"id": f"c{i}", "inputs": {"question": f"question {i}?"}, "expected": "example answer"} for i in range(4)]


class Calls:
    """Every model request's last message (the offline test model answers ``example answer``)."""

    def __init__(self):
        self.prompts = []

    def zagent_before_llm_call(self, request, ctx):
        self.prompts.append(request.messages[-1].content.partition("\n")[0])


def _spec(model="test:offline", prompt="Answer: {question}"):
    return {"name": "Mine", "prompt": prompt, "inputs": [{"name": "question"}], "outputs": [{"name": "answer"}],
            "parse_mode": "str", "llm": model}


def _kernel():
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    k.calls = Calls()
    k.add_plugin(k.calls)
    return k


@pytest.fixture
def kernel():
    """A fresh isolated kernel with the offline models, actions, batch, evals and a recorder of model calls."""
    k = _kernel()
    yield k
    k.close()


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_an_interrupted_eval_resumes_running_only_the_missing_cases(kernel, tmp_path):
    """Regression: an eval killed after two of four cases (the third record cut mid-write) resumes with the same
    agent in a new process: the two recorded cases are not run again, the other two are, and all four are scored."""
    out = tmp_path / "runs.jsonl"
    evaluate(kernel, _spec(), CASES, out=out, concurrency=1)
    assert len(kernel.calls.prompts) == 4
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:2]) + lines[2][:20])  # a kill: two whole records and a torn one
    with _kernel() as k2:  # a new process
        report = evaluate(k2, _spec(), CASES, out=out, concurrency=1)
        assert k2.calls.prompts == ["Answer: question 2?", "Answer: question 3?"]
    assert [c.passed for c in report.cases] == [True] * 4
    assert sorted(r["id"] for r in _rows(out)) == ["c0", "c1", "c2", "c3"]


def test_an_edited_agents_old_runs_are_refused_before_any_model_call(kernel, tmp_path):
    """Attack: the runs file holds the agent's runs from before its prompt (or its model) was edited: same name,
    same cases; they were "resumed" as the edited agent's. Defence: a ConfigError naming the file, how many records
    and what to do; no model call, the file unchanged."""
    out = tmp_path / "runs.jsonl"
    evaluate(kernel, _spec(prompt="Answer well: {question}"), CASES[:3], out=out, concurrency=1)
    before, calls = out.read_bytes(), len(kernel.calls.prompts)
    with pytest.raises(ConfigError, match=r"holds 3 record\(s\) this batch did not make .*another --out file"):
        evaluate(kernel, _spec(), CASES, out=out, concurrency=1)
    with pytest.raises(ConfigError, match=r"holds 3 record\(s\)"):
        evaluate(kernel, _spec(model="test:other", prompt="Answer well: {question}"), CASES, out=out)
    assert len(kernel.calls.prompts) == calls and out.read_bytes() == before


def test_an_edited_case_runs_again_and_is_scored_on_its_new_run(kernel, tmp_path):
    """Attack: a case whose inputs were edited after its run kept the old run (scored as the new case's).
    Defence: each record names the digest of the inputs it ran; the edited case runs again, only it, and the
    record scored is its new one."""
    out = tmp_path / "runs.jsonl"
    evaluate(kernel, _spec(), CASES[:2], out=out, concurrency=1)
    edited = [CASES[0], {**CASES[1], "inputs": {"question": "something else?"}}]
    report = evaluate(kernel, _spec(), edited, out=out, concurrency=1)
    assert kernel.calls.prompts[2:] == ["Answer: something else?"]
    rows = _rows(out)
    assert [r["id"] for r in rows] == ["c0", "c1", "c1"] and rows[1]["inputs_digest"] != rows[2]["inputs_digest"]
    assert report.cases[1].duration == rows[2]["duration"] and report.cases[1].passed


def test_a_hand_written_runs_file_names_the_fix(kernel, tmp_path):
    """Attack: a hand-written (or older zagent's) runs file, records with no maker, claims every case passed.
    Defence: refused, naming the file and the way out (another --out, or move/delete it); no model call."""
    out = tmp_path / "runs.jsonl"
    out.write_text("".join(json.dumps({"id": c["id"], "line": n, "ok": True, "output": {"answer": "example answer"}})
                           + "\n" for n, c in enumerate(CASES, 1)))
    with pytest.raises(ConfigError, match=r"holds 4 record\(s\).*move or delete"):
        evaluate(kernel, _spec(), CASES, out=out)
    assert not kernel.calls.prompts


def test_the_cli_refuses_a_planted_runs_file_before_any_model_call(kernel, tmp_path, capsys):
    """Attack: ``zagent eval cases.jsonl --agent mine.json --out runs.jsonl`` in a downloaded folder whose
    ``runs.jsonl`` says every case passed. Defence: exit 1 naming the file; no model request, no report."""
    from zagent.plugins.cli import main

    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    (tmp_path / "mine.json").write_text(json.dumps(_spec()))
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps({"id": c["id"], "line": n, "ok": True, "output": {"answer": "example answer"},
                                        "made_by": "f" * 32, "inputs_digest": "f" * 32}) + "\n"
                            for n, c in enumerate(CASES, 1)))
    code = main(["eval", str(tmp_path / "cases.jsonl"), "--agent", str(tmp_path / "mine.json"), "--out", str(runs),
                 "--report", str(tmp_path / "r.json")], kernel=kernel)
    assert code != 0 and not kernel.calls.prompts
    assert "holds 4 record(s) this batch did not make" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_unknown_scorer_options_are_refused_in_python_flags_and_cases_files(kernel, tmp_path):
    """A scorer given an option it does not take (``case_sensitve``, a typo) is a ConfigError naming the option and
    the ones it takes, whether given in Python, as a --scorer flag or in a cases file; never ignored."""
    from zagent.plugins.evals.scorers import parse_scorer, scorer_of

    with pytest.raises(ConfigError, match=r"scorer 'exact' does not take option\(s\) 'case_sensitve'; it takes "
                                          r"'case_sensitive', 'field'"):
        evaluate(kernel, _spec(), CASES, scorers=[{"name": "exact", "case_sensitve": False}])
    with pytest.raises(ConfigError, match=r"'numeric' does not take option\(s\) 'tol'"):
        scorer_of(kernel, parse_scorer("numeric:tol=0.5"))
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({**CASES[0], "scorers": [{"name": "contains", "fields": "answer"}]}) + "\n")
    with pytest.raises(ConfigError, match=r"case 'c0': scorer 'contains' does not take option\(s\) 'fields'") as e:
        evaluate(kernel, _spec(), str(cases))
    assert "trust" not in str(e.value) and not kernel.calls.prompts
