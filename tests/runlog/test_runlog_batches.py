"""`zagent logs list` folds a batch's item runs into one row; `--batch ID` lists them."""

import json

from zagent import Kernel
from zagent.plugins.cli import main

from .conftest import PLUGINS

QA = {"name": "Answerer", "prompt": "Answer: {question}", "inputs": [{"name": "question", "type": "string"}],
      "outputs": [{"name": "answer", "type": "string"}], "parse_mode": "title"}


def _logs(log_path, capsys, *args):
    k = Kernel(PLUGINS, entry_points=False, strict=True)
    try:
        code = main(["logs", *args, "--db", log_path], kernel=k)
    finally:
        k.close()
    return code, capsys.readouterr().out


def _batch(log_path, n):
    k = Kernel(PLUGINS + ["zagent.plugins.batch", "zagent.plugins.memory", "zagent.plugins.manager",
                          "zagent.plugins.workflow"], entry_points=False, config={"log": log_path})
    report = k.batch(QA, [{"question": f"q{i}"} for i in range(n)] + [{"nothing": 1}])
    k.close()
    return report


def test_a_batch_is_one_row_of_logs_list(log_path, capsys):
    """Five items of one batch show as one 'batch' row named by the batch id, with their runs counted."""
    report = _batch(log_path, 5)
    code, out = _logs(log_path, capsys, "list")
    lines = [line for line in out.splitlines()[1:] if line.strip()]
    assert code == 0 and len(lines) == 1
    assert lines[0].startswith(report.summary.batch_id) and " batch " in lines[0] and "Answerer ×5" in lines[0]
    assert "5 ok" in lines[0]


def test_batch_id_lists_the_item_runs(log_path, capsys):
    """--batch ID lists each item's run, and --json rows name their batch."""
    report = _batch(log_path, 3)
    code, out = _logs(log_path, capsys, "list", "--batch", report.summary.batch_id, "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 3 and {r["batch"] for r in rows} == {report.summary.batch_id}
    assert {r["kind"] for r in rows} == {"run"}


def _run(log_path, question):
    k = Kernel(PLUGINS, entry_points=False, config={"log": log_path})
    k.agent(QA)(question=question)
    k.close()


def test_the_limit_counts_a_batch_as_one_row_with_all_its_items(log_path, capsys):
    """25 batch items then 2 runs: `logs list` (20 rows) shows the whole batch (×25) and both runs; -n 2 the runs."""
    report = _batch(log_path, 25)
    _run(log_path, "first")
    _run(log_path, "second")
    code, out = _logs(log_path, capsys, "list")
    lines = [line for line in out.splitlines()[1:] if line.strip()]
    assert code == 0 and len(lines) == 3, out
    assert lines[2].startswith(report.summary.batch_id) and "Answerer ×25" in lines[2] and "25 ok" in lines[2]
    code, out = _logs(log_path, capsys, "list", "-n", "2")
    assert [line.split()[3] for line in out.splitlines()[1:] if line.strip()] == ["run", "run"]
