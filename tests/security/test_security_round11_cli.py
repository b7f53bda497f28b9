"""Attack: the ``zagent`` command run inside a folder someone else prepared, on their spec, input and case files.

Nothing in the working folder is imported or read as configuration; input values are text, never file names;
exit codes say when a run failed; Ctrl-C leaves no half-written file behind."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from .conftest import CLI_PLUGINS, agent_spec, run_cli

PLUGINS = CLI_PLUGINS + ",batch,evals"


def cli(*args, cwd=None, plugins=PLUGINS, env=None):
    """``run_cli`` with the batch and eval commands too."""
    return run_cli(*args, cwd=cwd, plugins=plugins, env=env)

MARKS = ("entry_point", "sitecustomize", "usercustomize", "sqlite3", "yaml", "dotenv")


def hostile_folder(root, mode=0o755):
    """A folder as a cloned repository or /tmp might hold it: a dist-info naming a plugin, interpreter hooks,
    modules shadowing ones zagent imports late, and configuration files naming a model, a server and plugins."""
    folder = root / "repo"
    folder.mkdir()
    marks = folder / "marks"

    def plant(name, mark):
        (folder / name).write_text(f"import os\nos.makedirs({str(marks)!r}, exist_ok=True)\n"
                                   f"open(os.path.join({str(marks)!r}, {mark!r}), 'w').write('ran')\n")

    (folder / "evil-1.0.dist-info").mkdir()
    (folder / "evil-1.0.dist-info" / "entry_points.txt").write_text("[zagent]\nevil = r11evilplug\n")
    (folder / "evil-1.0.dist-info" / "METADATA").write_text("Name: evil\nVersion: 1.0\n")
    plant("r11evilplug.py", "entry_point")
    plant("sitecustomize.py", "sitecustomize")
    plant("usercustomize.py", "usercustomize")
    plant("sqlite3.py", "sqlite3")  # imported late: by `zagent logs`, checkpoints, memory
    plant("yaml.py", "yaml")  # imported late: by a .yaml spec
    (folder / "r11evil.pth").write_text(f"import os; os.makedirs({str(marks)!r}, exist_ok=True); "
                                        f"open(os.path.join({str(marks)!r}, 'pth'), 'w').write('ran')\n")
    (folder / ".env").write_text("ZAGENT_PLUGINS=r11evilplug\nZAGENT_MODEL=openai:gpt-4o\n"
                                 "OPENAI_BASE_URL=http://127.0.0.1:9/v1\nZAGENT_STRICT=0\n")
    (folder / "zagent.toml").write_text('[zagent]\nplugins = ["r11evilplug"]\nmodel = "openai:gpt-4o"\n')
    (folder / "pyproject.toml").write_text('[tool.zagent]\nplugins = ["r11evilplug"]\n')
    (folder / "agent.yaml").write_text("name: Y\nprompt: 'Answer: {question}'\ninputs: [{name: question}]\n"
                                       "outputs: [{name: answer}]\nparse_mode: str\n")
    os.chmod(folder, mode)
    return folder, marks


def console_script(root):
    """A launcher like the installed ``zagent`` script: its own folder (not the working one) leads sys.path."""
    bin_dir = root / "bin"
    bin_dir.mkdir()
    script = bin_dir / "zagent"
    script.write_text("import sys\nfrom zagent.plugins.cli import main\nsys.exit(main())\n")
    return script


def run_script(script, *args, cwd, env=None, plugins=CLI_PLUGINS):
    env = {**os.environ, "ZAGENT_PLUGINS": plugins, "ZAGENT_LOG": "0", **(env or {})}
    env.pop("ZAGENT_MODEL", None)
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, env=env,
                          timeout=120, cwd=cwd)


def dash_m(*args, cwd):
    """``python -m zagent.plugins.cli ARGS`` with every installed plugin (no ``ZAGENT_PLUGINS``), as a user has it."""
    env = {**os.environ, "ZAGENT_LOG": "0"}
    for name in ("ZAGENT_MODEL", "ZAGENT_PLUGINS"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "zagent.plugins.cli", *args], capture_output=True, text=True,
                          env=env, timeout=120, cwd=cwd)


def ran(marks):
    return sorted(os.listdir(marks)) if marks.exists() else []


@pytest.mark.parametrize("args", [("plugins", "--json"), ("models", "--no-check", "--json"), ("tools",),
                                  ("agent", "show", "agent.yaml", "--input", "question=hi")])
def test_installed_command_in_a_hostile_folder_imports_and_reads_nothing_there(tmp_path, args):
    """The installed ``zagent`` (its script's folder leads sys.path) in a folder holding a plugin dist-info,
    sitecustomize/usercustomize, shadowing sqlite3/yaml, .env, zagent.toml and pyproject.toml: none of it runs,
    and no plugin or model they name is used."""
    folder, marks = hostile_folder(tmp_path)
    done = run_script(console_script(tmp_path), *args, cwd=folder)
    assert done.returncode == 0, done.stderr
    assert ran(marks) == []
    assert "r11evilplug" not in done.stdout + done.stderr and "9/v1" not in done.stdout + done.stderr


@pytest.mark.parametrize("args", [("plugins", "--json"), ("agent", "show", "agent.yaml", "--input", "question=hi")])
def test_python_dash_m_in_a_hostile_folder_loads_no_plugin_or_late_module_from_it(tmp_path, args):
    """``python -m zagent.plugins.cli`` puts the working folder first on sys.path: zagent must still not load
    the folder's dist-info as a plugin (its entry-point scan) nor import the folder's ``yaml.py`` for a .yaml spec."""
    folder, marks = hostile_folder(tmp_path)
    done = dash_m(*args, cwd=folder)
    assert ran(marks) == [], done.stderr
    assert "r11evilplug" not in done.stdout
    assert done.returncode == 0, done.stderr


def test_python_dash_m_in_a_world_writable_folder_loads_no_plugin_from_it(tmp_path):
    """The same from a 1777 folder (``cd /tmp``): another user's dist-info there is never a plugin."""
    folder, marks = hostile_folder(tmp_path, mode=0o1777)
    done = dash_m("plugins", "--json", cwd=folder)
    assert ran(marks) == [] and done.returncode == 0, done.stderr


def test_at_file_input_value_is_text_not_a_file(tmp_path):
    """``--input question=@/etc/passwd`` is the text ``@/etc/passwd``: no file is read into the prompt."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-R11")
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec()))
    done = cli("agent", "show", str(spec), "--input", f"question=@{secret}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"@{secret}" in done.stdout and "TOP-SECRET-R11" not in done.stdout


def test_batch_input_values_naming_files_or_images_read_nothing(tmp_path):
    """A batch inputs line whose values name a file (``@path``, ``file://``, a path) or add ``image``/``images``
    keys: the file is never read into the model's request nor into --out."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-R11")
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec()))
    inputs = tmp_path / "in.jsonl"
    lines = [{"id": "a", "question": f"@{secret}"}, {"id": "b", "question": f"file://{secret}"},
             {"id": "c", "question": "x", "image": str(secret)}, {"id": "d", "question": "x", "images": [str(secret)]}]
    inputs.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "out.jsonl"
    done = cli("batch", str(spec), str(inputs), "--out", str(out), "-q", "--model", "record:test:offline",
               cwd=tmp_path, env={"XDG_DATA_HOME": str(tmp_path / "data")})
    assert done.returncode in (0, 1), done.stderr
    recorded = b"".join(p.read_bytes() for p in (tmp_path / "data").rglob("*") if p.is_file())
    assert b"TOP-SECRET-R11" not in recorded + out.read_bytes()
    assert "TOP-SECRET-R11" not in done.stdout + done.stderr


def test_eval_cases_file_cannot_choose_where_files_are_written(tmp_path):
    """A cases file whose metadata names ``out``/``report`` paths, and ids that look like paths: only the files
    the user named are written."""
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec()))
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "../../evil-id", "inputs": {"question": "q"}, "expected": {"answer": "a"},
                                 "metadata": {"out": str(tmp_path / "planted.jsonl"),
                                              "report": str(tmp_path / "planted.json")}}) + "\n")
    before = set(os.listdir(tmp_path))
    done = cli("eval", str(cases), "--agent", str(spec), "--json", cwd=tmp_path)
    assert set(os.listdir(tmp_path)) == before, done.stderr
    json.loads(done.stdout)


def test_eval_cases_scorer_cannot_run_a_module_in_the_working_folder(tmp_path):
    """A case's ``function`` scorer naming a module in the working folder (which the CLI trusts for the user's
    own ``--scorer``): refused, not run; the user's own ``--scorer`` from that folder still works."""
    from .test_security_spec_imports import canary

    mark = canary(tmp_path, "r11scorer")
    (tmp_path / "r11scorer.py").write_text((tmp_path / "r11scorer.py").read_text()
                                           + "def score(output, expected, case):\n    return True\n")
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec()))
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "a", "inputs": {"question": "q"}, "expected": {"answer": "a"},
                                 "scorers": [{"name": "function", "fn": "r11scorer:score"}]}) + "\n")
    done = cli("eval", str(cases), "--agent", str(spec), cwd=tmp_path)
    assert done.returncode == 1 and not mark.exists()
    assert "cases file" in done.stderr and "--scorer" in done.stderr
    own = tmp_path / "own.jsonl"
    own.write_text(json.dumps({"id": "a", "inputs": {"question": "q"}, "expected": {"answer": "a"}}) + "\n")
    done = cli("eval", str(own), "--agent", str(spec), "--scorer", "function:fn=r11scorer:score", cwd=tmp_path)
    assert done.returncode == 0 and mark.exists(), done.stderr


def failure(stdout, status="failed"):
    """The JSON object a ``--json`` command prints on stdout when it fails: ``(type, message)`` of its error."""
    data = json.loads(stdout)
    assert set(data) == {"status", "error"} and data["status"] == status, data
    return data["error"]["type"], data["error"]["message"]


def test_run_json_failure_exits_non_zero_with_json_saying_what_failed(tmp_path):
    """``zagent run --json`` of a run that fails (a ReAct agent naming a tool that does not exist) exits 1 and
    prints, on stdout, JSON saying what failed (it printed nothing: a script's JSON parser failed instead); an
    unknown ``--input`` likewise; the error is on stderr too."""
    spec = tmp_path / "react.json"
    spec.write_text(json.dumps({"name": "R", "type": "react", "tools": ["no_such_tool_r11"]}))
    done = cli("run", str(spec), "--input", "task=hi", "--json", cwd=tmp_path)
    assert done.returncode == 1 and "no_such_tool_r11" in done.stderr
    kind, message = failure(done.stdout)
    assert kind == "ConfigError" and "no_such_tool_r11" in message
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec()))
    done = cli("run", str(spec), "--input", "nope=1", "--json", cwd=tmp_path)
    assert done.returncode == 1 and failure(done.stdout) == ("UsageError", "unknown input(s) nope; Evil takes: question")


def test_batch_where_every_item_failed_exits_non_zero(tmp_path):
    """``zagent batch`` whose every item failed (a model that does not exist) is not a success: exit 1 and a
    line saying every item failed; a batch with some items done still exits 0."""
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec()))
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("".join(json.dumps({"id": f"q{i}", "question": "x"}) + "\n" for i in range(3)))
    done = cli("batch", str(spec), str(inputs), "--out", str(tmp_path / "out.jsonl"), "-q",
               "--model", "scripted:none", cwd=tmp_path)
    assert "failed 3" in done.stdout, done.stderr
    assert done.returncode == 1 and "every item failed" in done.stderr
    ok = cli("batch", str(spec), str(inputs), "--out", str(tmp_path / "ok.jsonl"), "-q", cwd=tmp_path)
    assert ok.returncode == 0 and "done 3" in ok.stdout, ok.stderr


def test_eval_where_every_case_errored_exits_non_zero(tmp_path):
    """``zagent eval`` whose every case errored (the model failed each run), or whose every case's scorer failed,
    exits 1 (valid ``--json`` holding each case's error) and says so on stderr; cases that ran and were scored
    (failing or not) exit 0."""
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec()))
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({"id": f"c{i}", "inputs": {"question": "q"}, "expected": {"answer": "a"}})
                             + "\n" for i in range(2)))
    done = cli("eval", str(cases), "--agent", str(spec), "--json", "--model", "scripted:none", cwd=tmp_path)
    data = json.loads(done.stdout)
    assert all(r.get("error") for r in data["cases"]), data
    assert done.returncode == 1 and "every case failed to run or to be scored" in done.stderr
    judged = tmp_path / "judged.jsonl"  # the runs work, but the cases' own judge fails each time
    judged.write_text("".join(json.dumps({"id": f"c{i}", "inputs": {"question": "q"}, "expected": {"answer": "a"},
                                          "scorers": [{"name": "llm_judge", "model": "scripted:none"}]}) + "\n"
                              for i in range(2)))
    done = cli("eval", str(judged), "--agent", str(spec), cwd=tmp_path)
    assert "the scorer failed" in done.stdout, done.stderr
    assert done.returncode == 1 and "nothing was measured" in done.stderr
    ok = cli("eval", str(cases), "--agent", str(spec), cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr


# -- Ctrl-C ------------------------------------------------------------------------------------------------


def _sigint_default():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _slow_folder(tmp_path):
    (tmp_path / "r11slow.py").write_text("import time\n\ndef nap(text: str) -> str:\n    \"\"\"Nap.\"\"\"\n"
                                         "    time.sleep(0.2)\n    return text\n")
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec(tools=["r11slow:nap"])))
    return spec


def _start(args, cwd):
    env = {**os.environ, "ZAGENT_PLUGINS": PLUGINS, "ZAGENT_LOG": "0"}
    env.pop("ZAGENT_MODEL", None)
    return subprocess.Popen([sys.executable, "-m", "zagent.plugins.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=cwd, preexec_fn=_sigint_default)


def _wait_lines(path, n, proc, limit=60.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.01)
    pytest.fail(f"{path} did not get {n} lines (exit {proc.poll()})")


def test_ctrl_c_during_eval_leaves_whole_lines_and_no_report(tmp_path):
    """SIGINT during ``zagent eval --out --report``: exit 130, every --out line whole JSON, no half report
    (none, or none at all), no temporary file left, and the same command then finishes."""
    spec = _slow_folder(tmp_path)
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({"id": f"c{i}", "inputs": {"question": "q"}, "expected": {"answer": "a"}})
                             + "\n" for i in range(40)))
    out, report = tmp_path / "runs.jsonl", tmp_path / "report.json"
    args = ["eval", str(cases), "--agent", str(spec), "--out", str(out), "--report", str(report), "-c", "2"]
    proc = _start(args, tmp_path)
    _wait_lines(out, 3, proc)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert not report.exists()
    for line in out.read_text().splitlines():
        json.loads(line)
    assert sorted(os.listdir(tmp_path)) == sorted(["r11slow.py", "agent.json", "cases.jsonl", "runs.jsonl",
                                                   "__pycache__"][: 5 if (tmp_path / "__pycache__").exists() else 4])
    again = _start(args, tmp_path)
    stdout, stderr = again.communicate(timeout=120)
    assert again.returncode == 0, stderr
    assert json.loads(report.read_text())["cases"]


def test_ctrl_c_during_workflow_run_exits_130_and_keeps_checkpoints_usable(tmp_path):
    """SIGINT during ``zagent workflow run --checkpoints``: exit 130, the SQLite file opens and passes
    ``PRAGMA integrity_check``, and no stray output file appears."""
    import sqlite3

    _slow_folder(tmp_path)
    flow = tmp_path / "flow.json"
    node = {"description": "d", "inputs": [{"name": "question"}], "outputs": [{"name": "answer"}],
            "agents": [{"name": "a", "prompt": "Answer: {question}", "inputs": [{"name": "question"}],
                        "outputs": [{"name": "answer"}], "parse_mode": "str", "tools": ["r11slow:nap"]}]}
    flow.write_text(json.dumps({"name": "f", "goal": "g", "inputs": [{"name": "question"}],
                                "nodes": [{**node, "name": "n1"}], "edges": []}))
    db = tmp_path / "cp.db"
    proc = _start(["workflow", "run", str(flow), "-i", "question=q", "--checkpoints", str(db), "-q"], tmp_path)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not db.exists() and proc.poll() is None:
        time.sleep(0.01)
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode in (0, 130), stderr
    if db.exists():
        with sqlite3.connect(db) as con:
            assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_piped_chat_whose_run_failed_exits_non_zero_with_a_masked_error(tmp_path):
    """``echo hi | zagent chat`` whose run fails exits 1 (it exited 0, so a script saw success), and the error
    goes through the CLI's masking as every other command's (a secret-named variable's value is not printed);
    a piped chat that answered exits 0."""
    secret = "tok-r11-abcdef123456"
    env = {"R11_SERVICE_TOKEN": secret}
    done = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "chat", "--model", f"scripted:{secret}"],
                          input="hi\n", capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "ZAGENT_PLUGINS": PLUGINS, "ZAGENT_LOG": "0", **env})
    assert done.returncode == 1 and "error: " in done.stderr
    assert secret not in done.stdout + done.stderr
    ok = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "chat", "--model", "test:offline"],
                        input="hi\n", capture_output=True, text=True, timeout=120, cwd=tmp_path,
                        env={**os.environ, "ZAGENT_PLUGINS": PLUGINS, "ZAGENT_LOG": "0"})
    assert ok.returncode == 0, ok.stderr


def test_failed_workflow_and_group_chat_runs_exit_non_zero(tmp_path):
    """``zagent workflow run --json`` and ``zagent groupchat run --json`` whose model fails exit 1 with the error
    on stderr and JSON saying what failed on stdout (never a result)."""
    flow = tmp_path / "flow.json"
    flow.write_text(json.dumps({"name": "f", "goal": "g", "inputs": [{"name": "question"}], "nodes": [{
        "name": "n1", "description": "d", "inputs": [{"name": "question"}], "outputs": [{"name": "answer"}],
        "agents": [agent_spec(name="a")]}], "edges": []}))
    done = cli("workflow", "run", str(flow), "-i", "question=q", "--json", "-q", "--model", "scripted:none",
               cwd=tmp_path)
    assert done.returncode == 1 and "scripted" in done.stderr, done.stderr
    assert "scripted" in failure(done.stdout)[1]
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps({"type": "groupchat", "name": "g", "agents": [
        {"name": "A", "description": "answers", "prompt": "Task: {task}\n{transcript}",
         "inputs": [{"name": "task"}, {"name": "transcript"}], "outputs": [{"name": "reply"}], "parse_mode": "str"},
        {"name": "B", "description": "answers too", "prompt": "Task: {task}\n{transcript}",
         "inputs": [{"name": "task"}, {"name": "transcript"}], "outputs": [{"name": "reply"}], "parse_mode": "str"}],
        "max_rounds": 2}))
    done = cli("groupchat", "run", str(chat), "-i", "task=do it", "--json", "-q", "--model", "scripted:none", cwd=tmp_path)
    assert done.returncode == 1 and "scripted" in failure(done.stdout)[1], (done.stdout, done.stderr)


def test_commands_write_nothing_into_the_working_folder(tmp_path):
    """Run from a working folder (``cd repo``) with the spec, cases and inputs elsewhere and every output named
    elsewhere: ``run``, ``agent show``, ``batch``, ``eval``, ``workflow run``, ``chat``, ``models``, ``tools`` and
    ``plugins`` leave the working folder exactly as it was (no log, cache, recording or results file)."""
    work, data = tmp_path / "work", tmp_path / "data"
    work.mkdir()
    data.mkdir()
    spec = data / "agent.json"
    spec.write_text(json.dumps(agent_spec()))
    (data / "in.jsonl").write_text(json.dumps({"question": "q"}) + "\n")
    (data / "cases.jsonl").write_text(json.dumps({"id": "a", "inputs": {"question": "q"}}) + "\n")
    flow = data / "flow.json"
    flow.write_text(json.dumps({"name": "f", "goal": "g", "inputs": [{"name": "question"}], "nodes": [{
        "name": "n1", "description": "d", "inputs": [{"name": "question"}], "outputs": [{"name": "answer"}],
        "agents": [agent_spec(name="a")]}], "edges": []}))
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")}
    runs = [("run", str(spec), "-i", "question=q", "--json"), ("agent", "show", str(spec), "-i", "question=q"),
            ("batch", str(spec), str(data / "in.jsonl"), "--out", str(data / "out.jsonl"), "-q"),
            ("eval", str(data / "cases.jsonl"), "--agent", str(spec), "--report", str(data / "r.json")),
            ("workflow", "run", str(flow), "-i", "question=q", "-q"), ("models", "--no-check"), ("tools",),
            ("plugins",), ("run", str(spec), "-i", "question=q", "--model", "record:test:offline")]
    for args in runs:
        done = cli(*args, cwd=work, env={**env, "ZAGENT_LOG": "1"})
        assert done.returncode == 0, (args, done.stderr)
        assert os.listdir(work) == [], (args, os.listdir(work))


def test_ctrl_c_during_run_exits_130_and_leaves_the_run_log_readable(tmp_path):
    """SIGINT during ``zagent run --json`` with the run log on: exit 130, JSON saying it was interrupted on
    stdout (no half result), and the log database passes ``PRAGMA integrity_check`` and ``zagent logs list``
    still reads it."""
    import sqlite3

    spec = _slow_folder(tmp_path)
    env = {**os.environ, "ZAGENT_PLUGINS": PLUGINS + ",runlog", "XDG_DATA_HOME": str(tmp_path / "xdg")}
    for name in ("ZAGENT_MODEL", "ZAGENT_LOG"):
        env.pop(name, None)
    proc = subprocess.Popen([sys.executable, "-m", "zagent.plugins.cli", "run", str(spec), "-i", "question=q",
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=tmp_path, preexec_fn=_sigint_default)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        line = proc.stderr.readline()
        if "step" in line or "->" in line or "nap" in line:
            break
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert failure(stdout, "interrupted")[0] == "KeyboardInterrupt"
    dbs = list((tmp_path / "xdg").rglob("*.db"))
    for db in dbs:
        with sqlite3.connect(db) as con:
            assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    listed = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "logs", "list"], capture_output=True,
                            text=True, env=env, timeout=120, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr


def test_listing_commands_contact_no_server_a_folder_or_spec_names(tmp_path):
    """A real server on 127.0.0.1 named by the folder's .env, zagent.toml and pyproject.toml and by a spec's
    ``llm_config.base_url``: ``zagent models`` (which checks servers), ``plugins``, ``tools`` and ``agent show``
    run in that folder send it nothing (models checks only the servers the environment names)."""
    from tests.servers.loopback import LoopbackServer, Reply

    with LoopbackServer(lambda request: Reply(body=b'{"data": [{"id": "planted"}]}')) as server:
        folder, marks = hostile_folder(tmp_path)
        for name in (".env", "zagent.toml", "pyproject.toml"):
            (folder / name).write_text((folder / name).read_text().replace("http://127.0.0.1:9/v1", server.url)
                                       + f"\nOPENAI_BASE_URL={server.url}/v1\nbase_url = \"{server.url}\"\n")
        spec = folder / "agent.json"
        spec.write_text(json.dumps(agent_spec(llm_config={"model": "openai:gpt-x", "base_url": server.url})))
        script = console_script(tmp_path)
        env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OLLAMA_HOST": "http://127.0.0.1:9"}
        for args in (("models", "--timeout", "2"), ("plugins",), ("tools",),
                     ("agent", "show", "agent.json", "-i", "question=q")):
            done = run_script(script, *args, cwd=folder, env=env, plugins=CLI_PLUGINS + ",openai,ollama")
            assert done.returncode == 0, (args, done.stderr)
            assert "planted" not in done.stdout
        assert server.requests == [] and ran(marks) == []
