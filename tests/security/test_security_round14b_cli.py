"""Round fourteen, wave two: the ``zagent`` command as a surface. The CLI user is trusted; the spec, baseline
report, run log and servers they point it at are not. Each test runs the real command in a subprocess.

- an ``eval --compare`` gate passed while cases that passed in the baseline were no longer run: GOT THROUGH;
- a baseline report whose totals were edited to text or a list crashed the comparison with a traceback (and,
  with ``--json``, printed no JSON): GOT THROUGH (3);
- a spec's ``llm_config`` timeout replaced the user's ``--timeout`` / ``ZAGENT_TIMEOUT`` (the command waited 25 s
  on a silent server after ``--timeout 1``): GOT THROUGH (3 spellings);
- a run log edited (or written by something else, ``--db``) made ``zagent logs`` fail with a traceback: GOT
  THROUGH (5); ``logs show --html`` emptied an earlier page before the page failed: GOT THROUGH;
- ``zagent groupchat run`` of a chat paused on a person's answer (a speaker's ``zagent.interrupt``) exited 0,
  as if it had finished (``workflow run`` exits 3): GOT THROUGH (2: text and ``--json``);
- with ``--json``, a failure that is not a ``ZagentError`` printed no JSON: GOT THROUGH;
- held (regression guard): a scorer crash counted as a regression.
SIGTERM and a closed stdout: ``test_security_round14b_cli_signals.py``.
"""

import json
import sqlite3

import pytest

from .conftest import CLI_PLUGINS, agent_spec, run_cli

PLUGINS = CLI_PLUGINS + ",batch,evals,runlog,openai"


def cli(*args, cwd=None, env=None):
    """``run_cli`` with the batch, eval, run-log and OpenAI plugins too."""
    return run_cli(*args, cwd=cwd, plugins=PLUGINS, env=env)


def no_traceback(done):
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, (done.returncode, done.stderr)


# -- eval --compare: the gate ---------------------------------------------------------------------------------


def _passing_cases(path, n):
    """``n`` cases the offline test model passes (it answers ``example answer``)."""
    path.write_text("".join(json.dumps({"id": f"c{i}", "inputs": {"question": "q"},
                                        "expected": {"answer": "example answer"}}) + "\n" for i in range(n)))
    return path


@pytest.fixture
def baseline(tmp_path):
    """``(agent file, cases file of three passing cases, baseline report of them)``."""
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec()))
    cases = _passing_cases(tmp_path / "cases.jsonl", 3)
    report = tmp_path / "base.json"
    done = cli("eval", str(cases), "--agent", str(spec), "--report", str(report), cwd=tmp_path)
    assert done.returncode == 0 and json.loads(report.read_text())["totals"]["passed"] == 3, done.stderr
    return spec, cases, report


def test_compare_gate_fails_when_cases_that_passed_before_were_not_run(tmp_path, baseline):
    """Attack (got through): the cases file of a change drops the cases that now fail; ``--compare`` saw no
    regression among the one case left and exited 0. Defence: a case that passed in the baseline and was not
    run now fails the gate (exit 1), named on stderr and in ``--json``'s ``comparison.lost``."""
    spec, _, report = baseline
    fewer = _passing_cases(tmp_path / "fewer.jsonl", 1)
    done = cli("eval", str(fewer), "--agent", str(spec), "--compare", str(report), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "passed in" in done.stderr and "'c1', 'c2'" in done.stderr and "were not run now" in done.stderr
    done = cli("eval", str(fewer), "--agent", str(spec), "--compare", str(report), "--json", cwd=tmp_path)
    assert done.returncode == 1 and json.loads(done.stdout)["comparison"]["lost"] == ["c1", "c2"]


def test_compare_gate_still_passes_the_same_cases_and_a_failing_case_dropped(tmp_path, baseline):
    """The same cases, all passing, exit 0; dropping a case that failed in the baseline too is no loss."""
    spec, cases, report = baseline
    assert cli("eval", str(cases), "--agent", str(spec), "--compare", str(report), cwd=tmp_path).returncode == 0
    data = json.loads(report.read_text())
    data["cases"][2]["passed"] = False
    report.write_text(json.dumps(data))
    two = _passing_cases(tmp_path / "two.jsonl", 2)
    done = cli("eval", str(two), "--agent", str(spec), "--compare", str(report), cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_a_scorer_that_crashes_now_is_a_regression(tmp_path, baseline):
    """Held: a case whose scorer raises now (it passed before) is a regression, exit 1 (not a pass)."""
    spec, cases, report = baseline
    (tmp_path / "r14bscorer.py").write_text("def boom(output, expected, case):\n    raise RuntimeError('x')\n")
    done = cli("eval", str(cases), "--agent", str(spec), "--compare", str(report), "--scorer",
               "function:fn=r14bscorer:boom", cwd=tmp_path)
    assert done.returncode == 1 and "regressed" in done.stdout, done.stderr


@pytest.mark.parametrize("edit", [
    pytest.param(lambda t: t.update(pass_rate="all"), id="pass_rate-text"),
    pytest.param(lambda t: t.update(scores=["exact", 1]), id="scores-a-list"),
    pytest.param(lambda t: t.update(scores={"exact": "1.0"}), id="a-score-as-text"),
])
@pytest.mark.parametrize("json_out", [False, True])
def test_a_baseline_with_edited_totals_is_a_clean_error(tmp_path, baseline, edit, json_out):
    """Attack (got through, 3): a baseline report (a shared CI artifact) whose totals hold text or a list: the
    comparison failed with a ``ValueError``/``TypeError`` traceback, and with ``--json`` stdout held no JSON.
    Defence: a ``ConfigError`` naming the report and what to do; ``--json`` prints ``{"status", "error"}``."""
    spec, cases, report = baseline
    data = json.loads(report.read_text())
    edit(data["totals"])
    report.write_text(json.dumps(data))
    done = cli("eval", str(cases), "--agent", str(spec), "--compare", str(report), *(["--json"] if json_out else []),
               cwd=tmp_path)
    no_traceback(done)
    assert "totals that are not numbers" in done.stderr and "zagent eval --report" in done.stderr
    if json_out:
        failure = json.loads(done.stdout)
        assert failure["status"] == "failed" and failure["error"]["type"] == "ConfigError"


def test_json_output_of_a_failure_that_is_not_zagents_is_still_json(capsys):
    """Attack: a command failing on an error that is not a ``ZagentError`` (a library's ``ValueError`` on a
    hostile file) printed a traceback and no JSON: a script reading ``--json`` got nothing to parse. Defence:
    with ``--json`` every failure prints ``{"status": "failed", "error"}`` on stdout (got through before)."""
    from zagent import Kernel
    from zagent.plugins.cli import main

    class R14bBrokenCommand:
        def zagent_register_commands(self, cli, kernel):
            p = cli.command("r14b-broken", self.run)
            p.add_argument("--json", action="store_true")

        def run(self, args, kernel):
            raise ValueError("could not convert string to float: 'all'")

    k = Kernel(plugins=[R14bBrokenCommand()], entry_points=False)
    try:
        with pytest.raises(ValueError):
            main(["r14b-broken", "--json"], kernel=k)
    finally:
        k.close()
    failure = json.loads(capsys.readouterr().out)
    assert failure == {"status": "failed", "error": {"type": "ValueError",
                                                     "message": "could not convert string to float: 'all'"}}


# -- a spec's timeout against the user's --timeout ------------------------------------------------------------


@pytest.fixture
def silent_server():
    from tests.servers.loopback import LoopbackServer, Reply

    with LoopbackServer(lambda request: Reply(hang=True)) as server:
        yield server


def _slow_spec(tmp_path, **llm):
    spec = tmp_path / "slow.json"
    spec.write_text(json.dumps(agent_spec(llm_config={"model": "openai:gpt-4o", **llm})))
    return spec


@pytest.mark.parametrize("llm", [{"timeout": 25}, {"timeout": {"read": 25}}, {"read_timeout": 25}],
                         ids=["timeout", "timeout-read", "read_timeout"])
@pytest.mark.timeout(90)  # a hang guard: fails only if it never ends
@pytest.mark.parametrize("how", ["flag", "env"])
def test_a_spec_cannot_wait_longer_than_the_users_timeout(tmp_path, silent_server, llm, how):
    """Attack (got through, 3 spellings): ``zagent run slow.json --timeout 1`` (or ``ZAGENT_TIMEOUT=1``) with a
    spec setting ``llm_config.timeout: 25`` waited 25 s on a server that never answers: the user's timeout was
    only a default the spec replaced. Defence: a spec's timeout longer than the user's is a ``ConfigError`` at
    load, saying a spec may shorten the wait only; nothing is sent."""
    spec = _slow_spec(tmp_path, **llm)
    env = {"OPENAI_BASE_URL": silent_server.url + "/v1", "OPENAI_API_KEY": "sk-r14b"}
    flags = ["--timeout", "1"] if how == "flag" else []
    if how == "env":
        env["ZAGENT_TIMEOUT"] = "1"
    done = cli("run", str(spec), "-i", "question=hi", "-q", *flags, cwd=tmp_path, env=env)
    no_traceback(done)
    assert "longer than the 1 s you set" in done.stderr and silent_server.requests == []


@pytest.mark.timeout(90)  # a hang guard: fails only if it never ends
@pytest.mark.parametrize("command", ["workflow", "batch"])
def test_a_workflows_inline_agent_or_a_batch_cannot_wait_longer_either(tmp_path, silent_server, command):
    """The other entry points: a workflow's inline agent under ``workflow run --timeout 1``, and ``zagent batch``
    under ``ZAGENT_TIMEOUT=1``, with ``timeout: 25`` in the file: refused at once, nothing sent."""
    env = {"OPENAI_BASE_URL": silent_server.url + "/v1", "OPENAI_API_KEY": "sk-r14b"}
    if command == "workflow":
        inline = {**agent_spec(llm_config={"model": "openai:gpt-4o", "timeout": 25}), "description": "d"}
        path = tmp_path / "wf.json"
        path.write_text(json.dumps({"name": "w", "goal": "g", "inputs": [{"name": "question"}], "edges": [],
                                    "nodes": [{"name": "a", "description": "a", "inputs": [{"name": "question"}],
                                               "outputs": [{"name": "answer"}], "agents": [inline]}]}))
        args = ["workflow", "run", str(path), "-i", "question=hi", "-q", "--timeout", "1"]
    else:
        inputs = tmp_path / "in.jsonl"
        inputs.write_text(json.dumps({"id": "a", "question": "hi"}) + "\n")
        args = ["batch", str(_slow_spec(tmp_path, timeout=25)), str(inputs), "--out", str(tmp_path / "o.jsonl"), "-q"]
        env["ZAGENT_TIMEOUT"] = "1"
    done = cli(*args, cwd=tmp_path, env=env)
    no_traceback(done)
    assert "longer than the 1 s you set" in done.stderr and silent_server.requests == []


@pytest.mark.timeout(90)  # a hang guard: fails only if it never ends
def test_a_spec_timeout_shorter_than_the_users_still_applies(tmp_path, silent_server):
    """A spec may shorten the wait: ``timeout: 1`` under ``--timeout 30`` gives up after about a second."""
    spec = _slow_spec(tmp_path, timeout=1, max_retries=0)
    env = {"OPENAI_BASE_URL": silent_server.url + "/v1", "OPENAI_API_KEY": "sk-r14b"}
    done = cli("run", str(spec), "-i", "question=hi", "-q", "--timeout", "30", cwd=tmp_path, env=env)
    no_traceback(done)
    assert "did not answer in time" in done.stderr


# -- an edited run log ------------------------------------------------------------------------------------------


@pytest.fixture
def run_log(tmp_path):
    """A run log with one real run (``zagent run`` with ``ZAGENT_LOG_DB``)."""
    db = tmp_path / "logs.db"
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec()))
    env = {"ZAGENT_LOG": "1", "ZAGENT_LOG_DB": str(db)}
    done = cli("run", str(spec), "-i", "question=hi", "-q", cwd=tmp_path, env=env)
    assert done.returncode == 0 and db.exists(), done.stderr
    return db


EDITS = {
    "data-a-list": "UPDATE run_spans SET data = '[1, 2]'",
    "started-text": "UPDATE run_spans SET started = 'yesterday'",
    "duration-text": "UPDATE run_spans SET duration = 'long'",
    "tokens-text": "UPDATE run_spans SET input_tokens = 'many'",
    "started-1e300": "UPDATE run_spans SET started = 1e300",
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_run_log_is_a_clean_error_in_every_logs_command(tmp_path, run_log, edit):
    """Attack (got through, 5): a run log whose rows were edited (``data`` a JSON list, a time or a token count
    as text, a start in the year 10**292): ``logs list``, ``show``, ``show --json`` and ``search`` failed with a
    ``TypeError``/``OverflowError`` traceback and ``--json`` printed no JSON. Defence: rows are checked as they
    are read (``runlog.store.checked``): a ``ConfigError`` naming the run and column, and what to do."""
    with sqlite3.connect(run_log) as con:
        con.execute(EDITS[edit])
    for args in (["list"], ["show", "latest"], ["show", "latest", "--json"], ["search", "Answer"]):
        done = cli("logs", *args, "--db", str(run_log), cwd=tmp_path)
        if done.returncode == 0:  # this command does not read the edited column
            continue
        no_traceback(done)
        assert "edited or written by something else" in done.stderr, (args, done.stderr)
        if "--json" in args:
            assert json.loads(done.stdout)["error"]["type"] == "ConfigError"


def test_an_html_page_that_cannot_be_made_leaves_the_earlier_page_whole(tmp_path, run_log):
    """Attack (got through): ``logs show latest --html page.html`` over an edited run log truncated the earlier
    page to nothing, then failed. Defence: the page is made before the file is opened; the old one stays."""
    page = tmp_path / "page.html"
    assert cli("logs", "show", "latest", "--db", str(run_log), "--html", str(page), cwd=tmp_path).returncode == 0
    before = page.read_text()
    assert "<html" in before.lower()
    with sqlite3.connect(run_log) as con:
        con.execute(EDITS["data-a-list"])
    done = cli("logs", "show", "latest", "--db", str(run_log), "--html", str(page), cwd=tmp_path)
    no_traceback(done)
    assert page.read_text() == before


def test_an_ordinary_run_log_still_lists_and_shows(tmp_path, run_log):
    """The run log zagent writes still reads in every command (text, JSON, HTML)."""
    for args in (["list"], ["list", "--json"], ["show", "latest"], ["show", "latest", "--json"],
                 ["show", "latest", "--html", str(tmp_path / "p.html")], ["search", "Answer"]):
        done = cli("logs", *args, "--db", str(run_log), cwd=tmp_path)
        assert done.returncode == 0, (args, done.stderr)
        if "--json" in args:
            json.loads(done.stdout)


# -- a group chat waiting on a person ---------------------------------------------------------------------------


@pytest.mark.parametrize("json_out", [False, True])
def test_a_group_chat_paused_on_a_question_does_not_exit_0(tmp_path, json_out):
    """Attack (got through): a chat file whose speaker's tool asks a person (``zagent.interrupt``): ``zagent
    groupchat run`` printed "stopped by interrupt" and exited 0, so a script took the unanswered chat for a
    finished one. Defence: exit 3 (as ``workflow run``), ``"status": "paused"`` in ``--json``, and stderr saying
    the chat waits on an answer and how to give it."""
    (tmp_path / "r14bask.py").write_text("import zagent\n\n\ndef ask_person(question: str) -> str:\n"
                                         "    \"\"\"Ask the person running the chat.\"\"\"\n"
                                         "    return str(zagent.interrupt(question))\n")
    call = {"content": "", "tool_calls": [{"name": "ask_person", "arguments": {"question": "Which file?"}}]}
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps({"type": "groupchat", "name": "team", "max_rounds": 2, "agents": [
        {"type": "react", "name": "Asker", "description": "asks", "tools": ["r14bask:ask_person"],
         "llm_config": {"model": "scripted:r14b", "replies": [call, "ok"]}}]}))
    done = cli("groupchat", "run", str(chat), "-i", "task=go", "--checkpoints", str(tmp_path / "runs.db"),
               *(["--json"] if json_out else []), cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "paused waiting on a person's answer" in done.stderr and "Which file?" in done.stderr
    if json_out:
        assert json.loads(done.stdout)["status"] == "paused"


def test_a_group_chat_that_finishes_still_exits_0(tmp_path):
    """A chat that ends by its round limit (no question) exits 0, its JSON without a ``status``."""
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps({"type": "groupchat", "name": "team", "max_rounds": 1, "agents": [
        {"type": "react", "name": "Talker", "description": "talks",
         "llm_config": {"model": "scripted:r14b", "replies": ["hello"]}}]}))
    done = cli("groupchat", "run", str(chat), "-i", "task=go", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "status" not in json.loads(done.stdout)
