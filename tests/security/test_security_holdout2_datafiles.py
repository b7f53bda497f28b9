"""Hold-out round four: data files (batch inputs, eval cases): one endless line, a case naming code.

Attacks tried (session 2026-12-03, redteam2) and whether they got through before this module's fix:

- a downloaded eval cases file or batch inputs file that is one sparse 20 MiB "line" with no newline (a
  sparse file of terabytes costs no disk): GOT THROUGH (each reader, and ``zagent batch``'s line count, read
  the whole line into memory before looking at it) -- fixed: ``zagent.agentkit.files.bounded_lines`` reads at
  most ``MAX_LINE_BYTES`` (16 MiB) of a line and refuses a longer one with a ``ConfigError`` naming the line
- an ordinary file's last line without a newline: held (read as before)
- ``zagent eval --trust agent.json`` (the user trusts the agent file) over a downloaded cases file whose case
  names its own scorer ``{"name": "function", "fn": "case_mod:score"}``: GOT THROUGH (imported and run under
  the agent's trust; ``"os:system"`` would run the model's output as a shell command) -- fixed: a cases file's
  scorers get only the kernel's ``trusted_imports``
- the same cases file's ``llm_judge`` scorer naming ``"model": "record:test:offline"`` (no path: the user's own
  recording): GOT THROUGH (the judge wrote the user's default recording) -- fixed: a case's scorers are made
  under ``spec_options``, as a spec's model
"""

import pytest

from zagent.errors import ConfigError

SIZE = 20 * 2**20


def sparse(path):
    with open(path, "wb") as f:
        f.write(b'{"q": "')
        f.truncate(SIZE)
    return path


def test_an_endless_line_in_a_batch_inputs_file_is_refused(tmp_path):
    """``read_items``: a 20 MiB line is a ConfigError naming line 1, not an item read whole."""
    from zagent.plugins.batch.files import read_items

    with pytest.raises(ConfigError, match="line 1 is longer than 16 MiB"):
        list(read_items(str(sparse(tmp_path / "inputs.jsonl"))))


def test_an_endless_line_in_an_eval_cases_file_is_refused(tmp_path):
    """``read_cases``: a 20 MiB line is a ConfigError naming the file and line 1."""
    from zagent.plugins.evals.run import read_cases

    with pytest.raises(ConfigError, match="line 1 is longer than 16 MiB"):
        read_cases(str(sparse(tmp_path / "cases.jsonl")))


def test_a_last_line_without_a_newline_still_reads(tmp_path):
    """A normal file whose last line has no newline gives all its items."""
    from zagent.plugins.batch.files import read_items

    path = tmp_path / "inputs.jsonl"
    path.write_bytes(b'{"q": "a"}\n\n{"q": "b"}')
    assert [item.inputs for item in read_items(str(path))] == [{"q": "a"}, {"q": "b"}]


def test_a_cases_file_scorer_gets_no_trust_from_a_trusted_agent(tmp_path, monkeypatch):
    """``evaluate`` under ``Trust(everything=True)`` (``zagent eval --trust``): a case's own scorer
    ``{"name": "function", "fn": "case_mod:score"}`` is refused, the module never imported."""
    import json

    from zagent.speckit import Trust, trusting
    from zagent.plugins.evals import evaluate

    from .conftest import agent_spec, make_kernel

    marker = tmp_path / "pwned"
    (tmp_path / "case_mod.py").write_text(f"open({str(marker)!r}, 'w').write('x')\ndef score(*a):\n    return 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    case = {"id": "c1", "inputs": {"question": "hi"}, "expected": "x",
            "scorers": [{"name": "function", "fn": "case_mod:score"}]}
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n")
    k = make_kernel(plugins=["zagent.plugins.batch", "zagent.plugins.evals"])
    with trusting(Trust(everything=True)), pytest.raises(ConfigError, match="A cases file is data"):
        evaluate(k, agent_spec(llm="test:offline"), str(tmp_path / "cases.jsonl"))
    assert not marker.exists()


def test_a_cases_file_judge_cannot_write_the_users_default_recording(tmp_path, monkeypatch):
    """A case's ``{"name": "llm_judge", "model": "record:test:offline"}`` (no path: the user's own recording)
    is refused as a spec's model would be; the user's recording is untouched."""
    import json

    from zagent.plugins.evals import evaluate

    from .conftest import agent_spec, make_kernel

    monkeypatch.setenv("ZAGENT_RECORDINGS", str(tmp_path / "recordings"))
    case = {"id": "c1", "inputs": {"question": "hi"}, "expected": "x",
            "scorers": [{"name": "llm_judge", "model": "record:test:offline"}]}
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n")
    k = make_kernel(plugins=["zagent.plugins.batch", "zagent.plugins.evals"])
    with pytest.raises(ConfigError, match="A cases file is data"):
        evaluate(k, agent_spec(llm="test:offline"), str(tmp_path / "cases.jsonl"))
    assert not (tmp_path / "recordings").exists()
