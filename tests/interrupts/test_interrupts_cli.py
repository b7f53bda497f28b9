"""CLI: a workflow that asks a person ends paused (exit 3, its question shown), ``zagent workflow resume`` answers
it, and ``zagent logs show`` shows the question; wrong run ids and missing files are clear errors."""

import json
import os
import subprocess
import sys

from zagent.plugins.cli import main

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
EXAMPLE = os.path.join(ROOT, "examples", "workflow_approval.json")


def run(db, kernel, *extra):
    return main(["workflow", "run", EXAMPLE, "-i", "topic=solar", "--checkpoints", db, "--run-id", "a1", *extra],
                kernel=kernel)


def resume(db, kernel, *extra, run_id="a1"):
    return main(["workflow", "resume", run_id, EXAMPLE, "--checkpoints", db, *extra], kernel=kernel)


def test_a_paused_run_shows_its_question_and_how_to_answer(kernel, db, capsys):
    """run of a workflow with an interrupt node exits 3, prints the question and the resume command."""
    assert run(db, kernel) == 3
    out, err = capsys.readouterr()
    assert "## approve asks\nApprove this outline for a report on solar" in out
    assert "? approve: paused, asks: Approve this outline" in err
    assert f"zagent workflow resume a1 {EXAMPLE} --checkpoints {db} --answer TEXT" in err


def test_resume_answers_the_question_and_finishes(kernel, db, capsys):
    """workflow resume RUN_ID FILE --answer TEXT finishes the run without re-running the outline node."""
    run(db, kernel)
    capsys.readouterr()
    assert resume(db, kernel, "--answer", "Looks good", "--json") == 0
    out, err = capsys.readouterr()
    assert list(json.loads(out)) == ["report"]
    assert "resuming (1 done)" in err and "> outline" not in err and "+ write: done" in err


def test_paused_json_output_lists_the_interrupts(kernel, db, capsys):
    """--json on a paused run prints status, run id and the pending interrupts as JSON."""
    assert run(db, kernel, "--json") == 3
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "paused" and shown["run_id"] == "a1"
    assert [(i["node"], i["index"]) for i in shown["interrupts"]] == [("approve", 0)]


def test_answer_json_gives_structured_data(kernel, db, capsys):
    """--answer-json hands the node a JSON value; a malformed one is a clear error."""
    run(db, kernel)
    assert resume(db, kernel, "--answer-json", "{oops") == 1
    assert "--answer-json is not JSON" in capsys.readouterr().err
    assert resume(db, kernel, "--answer-json", '{"ok": true}', "--json") == 0


def test_resume_of_an_unknown_run_is_a_clear_error(kernel, db, capsys):
    """A run id the file does not hold exits 1 saying so."""
    run(db, kernel)
    capsys.readouterr()
    assert resume(db, kernel, "--answer", "x", run_id="nope") == 1
    assert "no run 'nope'" in capsys.readouterr().err


def test_resume_of_a_finished_run_is_a_clear_error(kernel, db, capsys):
    """Answering a run that already finished exits 1: it is not paused at an interrupt."""
    run(db, kernel)
    resume(db, kernel, "--answer", "ok")
    capsys.readouterr()
    assert resume(db, kernel, "--answer", "again") == 1
    assert "is finished, not paused at an interrupt" in capsys.readouterr().err


def test_resume_needs_an_existing_checkpoint_file(kernel, tmp_path, capsys):
    """A --checkpoints file that does not exist is reported (and not created)."""
    missing = str(tmp_path / "none.db")
    assert resume(missing, kernel, "--answer", "x") == 1
    assert "does not exist" in capsys.readouterr().err and not os.path.exists(missing)


def test_logs_show_prints_the_pending_question(tmp_path):
    """zagent logs show of a paused workflow run shows it paused and the question its node asks."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZAGENT_")}
    env.update(ZAGENT_LOG_DB=str(tmp_path / "logs.db"), XDG_DATA_HOME=str(tmp_path))
    zagent = [sys.executable, "-m", "zagent.plugins.cli"]
    paused = subprocess.run([*zagent, "workflow", "run", EXAMPLE, "-i", "topic=solar", "-q", "--checkpoints",
                             str(tmp_path / "runs.db"), "--run-id", "a1"], env=env, capture_output=True, text=True,
                            timeout=120)
    assert paused.returncode == 3, paused.stderr[-2000:]
    shown = subprocess.run([*zagent, "logs", "show", "a1"], env=env, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "workflow  approval" in shown.stdout and "paused" in shown.stdout
    assert "asks: Approve this outline for a report on solar" in shown.stdout
