"""A batch resumes only from the records it made: each names its maker (``made_by``, the digest of the agent spec or
workflow as loaded and its model) and the inputs it ran (``inputs_digest``); a results file holding another maker's
records is refused before anything runs or changes; an edited input runs again."""

import json

import pytest
from zagent import ConfigError

from .conftest import QA, read_jsonl, write_jsonl


class Calls:
    """Counts model requests (the offline model answers every item)."""

    def __init__(self):
        self.count = 0

    def zagent_before_llm_call(self, request, ctx):
        self.count += 1


@pytest.fixture
def calls(kernel):
    """A recorder of the kernel's model requests."""
    spy = Calls()
    kernel.add_plugin(spy)
    return spy


def _planted(path, n, **extra):
    rows = [{"id": f"q{i}", "line": i + 1, "ok": True, "attempts": 1, "duration": 0.1, "output": {"answer": "42"},
             **extra} for i in range(n)]
    return write_jsonl(path, rows)


def test_a_planted_results_file_is_refused_untouched(kernel, calls, tmp_path):
    """Attack: ``--out`` names a results file another agent wrote (a torn last line and a failed record included):
    its records were taken as done, ``retry_failed`` rewrote it and the torn line was cut. Defence: a ConfigError
    naming the file and the count; no model call, not a byte of the file changed."""
    inputs = write_jsonl(tmp_path / "in.jsonl", [{"id": f"q{i}", "question": "x"} for i in range(3)])
    out = _planted(tmp_path / "out.jsonl", 2, made_by="e" * 32, inputs_digest="e" * 32)
    with out.open("a") as f:
        f.write(json.dumps({"id": "q2", "line": 3, "ok": False, "error": {}}) + '\n{"id": "q9", "li')
    before = out.read_bytes()
    for retry_failed in (False, True):
        with pytest.raises(ConfigError, match=r"out\.jsonl' holds 3 record\(s\) this batch did not make \(the "
                                              r"first on line 1\)"):
            kernel.batch(QA, str(inputs), out=out, retry_failed=retry_failed)
    assert calls.count == 0 and out.read_bytes() == before


def test_another_model_does_not_resume_from_the_first_models_records(kernel, calls, tmp_path, monkeypatch):
    """Attack: the same agent file run with another model (``--model``, or ``ZAGENT_MODEL`` for a spec naming none)
    into the same results file mixed the two models' answers, the first model's taken as the second's. Defence:
    refused, naming --model and ZAGENT_MODEL; the same model still resumes."""
    out, other = tmp_path / "out.jsonl", tmp_path / "other.jsonl"
    items = [{"id": "a", "question": "x"}, {"id": "b", "question": "y"}]
    kernel.batch({**QA, "llm": "test:one"}, items[:1], out=out)
    with pytest.raises(ConfigError, match=r"holds 1 record\(s\).*\(--model, ZAGENT_MODEL\)"):
        kernel.batch({**QA, "llm": "test:two"}, items, out=out)
    monkeypatch.setenv("ZAGENT_MODEL", "test:one")
    kernel.batch(QA, items[:1], out=other)
    assert kernel.batch(QA, items[:1], out=other).summary.skipped == 1
    monkeypatch.setenv("ZAGENT_MODEL", "test:two")
    with pytest.raises(ConfigError, match=r"other\.jsonl' holds 1 record\(s\)"):
        kernel.batch(QA, items, out=other)
    assert calls.count == 2


def test_an_edited_input_line_runs_again_and_only_it(kernel, calls, tmp_path):
    """An item whose inputs changed since its result was written is not done: it runs again (a second line for its
    id, the newer one its result); unchanged items are skipped, and so is the edited one on the next resume."""
    out = tmp_path / "out.jsonl"
    kernel.batch(QA, [{"id": "a", "question": "x"}, {"question": "by line"}], out=out)
    edited = [{"id": "a", "question": "changed"}, {"question": "by line"}]
    report = kernel.batch(QA, edited, out=out)
    assert (report.summary.skipped, report.summary.done, calls.count) == (1, 1, 3)
    assert [r.get("id") for r in read_jsonl(out)] == ["a", None, "a"]
    assert kernel.batch(QA, edited, out=out).summary.skipped == 2 and calls.count == 3


def test_an_agent_object_resumes_from_its_own_records_only(kernel, calls, tmp_path):
    """An agent given as an object resumes from its own records; another agent object's (another prompt) records
    are refused."""
    out = tmp_path / "out.jsonl"
    kernel.batch(kernel.agent(QA), [{"id": "a", "question": "x"}], out=out)
    assert kernel.batch(kernel.agent(QA), [{"id": "a", "question": "x"}], out=out).summary.skipped == 1
    with pytest.raises(ConfigError, match="did not make"):
        kernel.batch(kernel.agent({**QA, "prompt": "Reply: {question}"}), [{"id": "a", "question": "x"}], out=out)
    assert calls.count == 1


def test_records_name_their_maker_with_or_without_out(kernel, tmp_path):
    """Every result, written or returned, carries ``made_by`` (the summary's) and its inputs' digest."""
    report = kernel.batch(QA, [{"question": "x"}, {"question": "y"}])
    made_by = {r["made_by"] for r in report.results}
    assert made_by == {report.summary.made_by} and len(report.summary.made_by) == 32
    assert len({r["inputs_digest"] for r in report.results}) == 2


def test_the_cli_names_the_file_and_the_fix(kernel, tmp_path, capsys):
    """``zagent batch agent.json in.jsonl --out old.jsonl`` with records of no maker (a hand-written file, an
    older zagent's): exit 1 naming the file and what to do, nothing run."""
    from zagent.plugins.cli import main

    kernel.add_plugin("zagent.plugins.cli")
    agent = tmp_path / "agent.json"
    agent.write_text(json.dumps(QA))
    inputs = write_jsonl(tmp_path / "in.jsonl", [{"id": "q0", "question": "x"}])
    out = _planted(tmp_path / "old.jsonl", 1)
    assert main(["batch", str(agent), str(inputs), "--out", str(out), "-q"], kernel=kernel) == 1
    err = capsys.readouterr().err
    assert "old.jsonl' holds 1 record(s) this batch did not make" in err and "move or delete" in err
