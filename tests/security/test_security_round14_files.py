"""Round fourteen, files and paths: the paths next to the ones earlier rounds checked -- agent files a declared
agent names through its own folder, files a ReAct run or ``zagent chat`` keeps for itself (and the same store
shared by agents of one run from Python), ``~`` read literally by zagent's readers but expanded by the check,
folder names and paths too long or holding control characters, a trajectories folder or skills folder linking
out by a hard or symbolic link, and a batched workflow building its agents after (or away from) the batch's
reservation of its files.

Got through before this round's fixes (each test's docstring says how): a declared agent's nested agent file in
zagent's data (from a ReAct file, ``CustomizeAgent.load``, ``zagent run``); a hard link in an agents folder; a
nested ReAct agent or handoff naming its caller's checkpoints (spec) and an agent tool built first sharing the
caller's store (Python); ``zagent chat --trajectory`` recorded into by the spec; ``~`` in ``ZAGENT_RECORDINGS`` /
``XDG_DATA_HOME``, in ``ZAGENT_LOG_DB`` / ``ZAGENT_MEMORY_DB``, in the app's ``memory``/``log``/``skills`` config;
long folder names and paths in a spec, a long folder in code; control characters in a spec path; a trajectories
folder linking out; a hard-linked skill file; a batched workflow's items, locally and on a worker.

Counted by attack (parametrized cases of one attack count once): 31 tried, 17 got through, 17 fixed; 14 held.
"""

import json
import os
import stat
import subprocess
import sys

import pytest

from zagent import ConfigError

from .conftest import CLI_PLUGINS, agent_spec, make_kernel, run_cli

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")

RECORDED = ('{"model": "test:offline", "stream": false, "request": {"model": "offline", "messages": [{"role": "user", '
            '"content": "my salary"}]}, "completion": {"message": {"role": "assistant", "content": "SECRET-R14"}}}\n')


@pytest.fixture
def k():
    kernel = make_kernel()
    yield kernel
    kernel.close()


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home folder holding zagent's data of the user (``.local/share/zagent``) with an agent file the user keeps
    there (``agents/wallet.json``: its key, its prompt); the download lands in the home folder itself."""
    data = tmp_path / ".local" / "share"
    (data / "zagent" / "agents").mkdir(parents=True)
    (data / "zagent" / "agents" / "wallet.json").write_text(json.dumps(agent_spec(
        name="Wallet", system_prompt="WALLET-SECRET-PROMPT", llm_config={"model": "test:offline",
                                                                         "api_key": "sk-users-own-key-1234567890"})))
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("ZAGENT_RECORDINGS", "ZAGENT_SKILLS_DIR", "ZAGENT_MEMORY_DB", "ZAGENT_LOG_DB"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


WALLET = ".local/share/zagent/agents/wallet.json"


def _write(path, spec):
    path.write_text(json.dumps(spec))
    return str(path)


# -- agent files named through an agent file's own folder -------------------------------------------------------


def test_a_nested_agent_file_cannot_load_an_agent_file_from_zagents_data(k, home):
    """Attack (got through): a ReAct file in the home folder names ``inner.json`` (a declared agent), whose
    ``agents`` names the user's agent file in zagent's data folder. The ReAct file's own ``agents`` go through the
    path check (zagent's data is refused), but a declared agent's files were checked only against its folder, so
    the user's agent (its key, its prompt) became a tool of the download. Defence: refused at load, naming zagent's
    data."""
    _write(home / "inner.json", agent_spec(name="Inner", agents=[WALLET]))
    path = _write(home / "r.json", {"type": "react", "name": "r", "tools": [], "agents": ["inner.json"]})
    with pytest.raises(ConfigError, match="zagent's own data"):
        k.agent(path)


def test_customize_agent_load_cannot_name_an_agent_file_in_zagents_data(k, home):
    """Attack (got through): the same declared agent file loaded by the app with ``CustomizeAgent.load(path, k)``
    (the Python entry point; ``k.agent(path)`` refused it). Defence: refused at load."""
    from zagent.plugins.actions import CustomizeAgent

    path = _write(home / "agent.json", agent_spec(agents=[WALLET]))
    with pytest.raises(ConfigError, match="zagent's own data"):
        CustomizeAgent.load(path, k)


def test_zagent_run_cannot_call_an_agent_file_in_zagents_data(home):
    """Attack (got through): ``zagent run agent.json`` on a downloaded declared agent naming the user's agent file
    in zagent's data: the user's agent ran as the download's tool ("[Evil] Wallet -> success"). Defence: the run
    stops before any model is asked, saying why."""
    path = _write(home / "agent.json", agent_spec(agents=[WALLET], llm_config={"model": "test:offline"}))
    done = run_cli("run", path, "--input", "question=hi", cwd=str(home),
                   env={"XDG_DATA_HOME": str(home / ".local" / "share"), "HOME": str(home)})
    assert done.returncode != 0
    assert "zagent's own data" in done.stderr
    assert "Wallet" not in done.stdout


def test_a_react_files_handoff_to_zagents_data_is_refused(k, home):
    """Attack (held: the ReAct file's ``handoffs`` go through the path check): handing over to the user's agent
    file in zagent's data."""
    path = _write(home / "r.json", {"type": "react", "name": "r", "tools": [], "handoffs": [WALLET]})
    with pytest.raises(ConfigError, match="zagent's own data"):
        k.agent(path)


def test_a_climb_after_a_link_in_a_nested_agent_file_is_refused(k, tmp_path):
    """Attack (held: ``realpath`` resolves links before ``..``): a declared agent file whose ``agents`` names
    ``sub/../wallet.json`` where ``sub`` links to the user's agents folder elsewhere, so that ``..`` climbs from
    there: lexically the file is next to the spec, really it is the user's."""
    mine = tmp_path / "mine"
    (mine / "deep").mkdir(parents=True)
    _write(mine / "wallet.json", agent_spec(name="Wallet", system_prompt="WALLET-SECRET-PROMPT"))
    folder = tmp_path / "dl"
    folder.mkdir()
    (folder / "sub").symlink_to(mine / "deep")
    path = _write(folder / "agent.json", agent_spec(agents=["sub/../wallet.json"]))
    from zagent.plugins.actions import CustomizeAgent

    with pytest.raises(ConfigError, match="outside the spec's folder|outside the folders"):
        CustomizeAgent.load(path, k)


def test_an_agents_folder_file_hard_linked_to_the_users_agent_is_refused(k, tmp_path):
    """Attack (got through): ``--agents agents/`` where ``agents/wallet.json`` is a second name (hard link) of the
    user's own agent file elsewhere: round thirteen refused a symbolic link out of the folder, not a hard one.
    Defence: a file of an agents folder with more than one name is refused, as spec paths are (round twelve)."""
    from zagent.plugins.manager import AgentManager

    mine = tmp_path / "mine"
    mine.mkdir()
    _write(mine / "wallet.json", agent_spec(name="wallet", system_prompt="WALLET-SECRET-PROMPT"))
    folder = tmp_path / "dl" / "agents"
    folder.mkdir(parents=True)
    os.link(mine / "wallet.json", folder / "wallet.json")
    with pytest.raises(ConfigError, match="hard link"):
        AgentManager(kernel=k, storage=str(folder)).add_agent("wallet")


# -- files a ReAct run or zagent chat keeps for itself --------------------------------------------------------------


def _nested(kind, folder):
    """A ReAct file whose ``kind`` (``agents`` inline, ``agents`` by file, ``handoffs``) is a ReAct agent naming the
    outer agent's own checkpoints file ``cp.db``."""
    inner = {"type": "react", "name": "n", "description": "nested", "tools": ["word_count"], "checkpoints": "cp.db"}
    if kind == "file":
        _write(folder / "inner.json", inner)
        inner = "inner.json"
    key = "handoffs" if kind == "handoffs" else "agents"
    return _write(folder / "r.json", {"type": "react", "name": "r", "tools": ["word_count"], key: [inner],
                                      "checkpoints": "cp.db"})


@pytest.mark.parametrize("kind", ["inline", "file", "handoffs"])
def test_a_nested_react_agent_cannot_checkpoint_into_its_callers_store(k, tmp_path, kind):
    """Attack (got through): a ReAct file with ``checkpoints: cp.db`` whose agent-as-tool (or handoff) names
    ``cp.db`` too: called, it saved its own steps under the caller's run id into the caller's store, so the
    caller's next checkpoint failed ("the run's latest step is 4") and its run read as completed -- it never
    resumed. Defence: a spec's nested agents may not name the file the agent keeps its checkpoints in
    (``reserving``, as a workflow's and a group chat's), refused at load."""
    path = _nested(kind, tmp_path)
    with pytest.raises(ConfigError, match="checkpoint file of agent 'r'"):
        k.agent(path)
    assert not (tmp_path / "cp.db").exists()


@pytest.mark.parametrize("alias", ["./sub/../cp.db", "alias.db", "ABSOLUTE"])
def test_the_callers_store_under_another_name_is_refused(k, tmp_path, alias):
    """Attack (a variant of the one above, got through with it; not counted apart): the nested agent names the
    caller's store as ``./sub/../cp.db``, through a link ``alias.db`` to it, or by its absolute path. Refused: the
    reserved file is compared by its real path."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "alias.db").symlink_to("cp.db")
    name = str(tmp_path / "cp.db") if alias == "ABSOLUTE" else alias
    inner = {"type": "react", "name": "n", "description": "nested", "tools": ["word_count"], "checkpoints": name}
    path = _write(tmp_path / "r.json", {"type": "react", "name": "r", "tools": ["word_count"], "agents": [inner],
                                        "checkpoints": "cp.db"})
    with pytest.raises(ConfigError, match="checkpoint file of agent 'r'"):
        k.agent(path)


def test_a_group_chat_speakers_nested_agent_cannot_checkpoint_into_the_chats_store(k, tmp_path):
    """Attack (held: the chat reserves its store while every speaker, nested agents too, is built): a speaker
    calling an inline ReAct agent that names the chat's ``--checkpoints runs.db``."""
    from zagent.plugins.groupchat.spec import load

    nested = {"type": "react", "name": "n", "description": "nested", "tools": [], "checkpoints": "runs.db"}
    chat = _write(tmp_path / "chat.json", {"name": "c", "agents": [
        {"type": "react", "name": "r", "tools": [], "agents": [nested]}, {"type": "react", "name": "s", "tools": []}],
        "selection": {"policy": "round_robin"}})
    with pytest.raises(ConfigError, match="checkpoint file of this group chat"):
        load(chat, k, checkpoints=str(tmp_path / "runs.db"))


def test_an_agent_tool_built_first_cannot_checkpoint_into_the_callers_store(k, tmp_path):
    """Attack (got through): the Python entry point of the attack above. The app builds a helper from a downloaded
    ReAct file naming ``cp.db`` (accepted: nothing was reserved yet), offers it as a tool, and runs its own
    ``ReActLoop(checkpoints=<store of cp.db>)``: the helper saved its steps under the caller's run id into the
    caller's store, and the caller's next checkpoint failed. Defence: a run's agents never share one checkpoint
    store (``react.stores``): the helper's run stops before saving anything, saying why, and the caller goes on."""
    from zagent.plugins.react import ReActLoop

    helper = k.agent(_write(tmp_path / "helper.json", {"type": "react", "name": "helper", "description": "helps",
                                                       "tools": ["word_count"], "checkpoints": "cp.db"}))
    helper.as_tool()
    store = k.memory("checkpoints", path=str(tmp_path / "cp.db"))
    llm = k.llm("scripted:caller", replies=[{"tool_calls": [{"name": "helper", "arguments": {"task": "count"}}]},
                                            "done"])
    loop = ReActLoop(kernel=k, llm=llm, tools=["word_count", "helper"], checkpoints=store)
    result = loop.run("go")
    assert result.content == "done" and result.status == "completed"
    told = llm.requests[1].messages[-1].content
    assert "checkpoint store" in told and "helper" in told
    assert {info.kind for info in store.list()} == {"react"} and len(store.list()) == 1


def test_a_nested_react_agent_with_its_own_store_still_loads(k, tmp_path):
    """Not an attack: the nested agent names its own ``inner.db``; both load."""
    inner = {"type": "react", "name": "n", "description": "nested", "tools": ["word_count"], "checkpoints": "inner.db"}
    path = _write(tmp_path / "r.json", {"type": "react", "name": "r", "tools": ["word_count"], "agents": [inner],
                                        "checkpoints": "cp.db"})
    agent = k.agent(path)
    assert "n" in agent.tools


def _chat(args, cwd, text="hello\n"):
    env = {**os.environ, "ZAGENT_PLUGINS": CLI_PLUGINS, "ZAGENT_LOG": "0"}
    env.pop("ZAGENT_MODEL", None)
    return subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "chat", *args], input=text,
                          capture_output=True, text=True, env=env, timeout=120, cwd=cwd)


def test_zagent_chat_keeps_its_trajectory_file(tmp_path):
    """Attack (got through): ``zagent chat r.json --trajectory t.jsonl`` where the downloaded ReAct file records its
    model to ``t.jsonl`` (``record:``): the recording went into the user's trajectory file first, so every run's
    trajectory was refused ("not a trajectory file") and the runs were never kept. Defence: the spec may not name
    the ``--trajectory`` file (``reserving``); the command says why before any model is asked."""
    path = _write(tmp_path / "r.json", {"type": "react", "name": "r", "tools": [],
                                        "llm_config": {"model": "record:test:offline", "path": "t.jsonl"}})
    done = _chat([path, "--trajectory", str(tmp_path / "t.jsonl")], str(tmp_path))
    assert "your --trajectory file" in done.stdout + done.stderr
    text = (tmp_path / "t.jsonl").read_text() if (tmp_path / "t.jsonl").exists() else ""
    assert '"request"' not in text


def test_zagent_chat_trajectory_naming_the_agent_file_leaves_it_whole(tmp_path):
    """Attack (held: a trajectory is appended only to an empty file or a trajectory file): ``zagent chat r.json
    --trajectory r.json``, a slip that would append runs to the agent file."""
    path = _write(tmp_path / "r.json", {"type": "react", "name": "r", "tools": [], "llm": "test:offline"})
    before = (tmp_path / "r.json").read_text()
    done = _chat([path, "--trajectory", path], str(tmp_path))
    assert "not a trajectory file" in done.stdout + done.stderr
    assert (tmp_path / "r.json").read_text() == before


def test_zagent_chat_with_a_spec_trajectory_elsewhere_still_records(tmp_path):
    """Not an attack: the spec records to ``rec.jsonl`` and the user keeps ``--trajectory t.jsonl``: both written."""
    path = _write(tmp_path / "r.json", {"type": "react", "name": "r", "tools": [],
                                        "llm_config": {"model": "record:test:offline", "path": "rec.jsonl"}})
    done = _chat([path, "--trajectory", str(tmp_path / "t.jsonl")], str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert '"conversations"' in (tmp_path / "t.jsonl").read_text()
    assert '"request"' in (tmp_path / "rec.jsonl").read_text()


CASES = '{"id": "c1", "inputs": {"question": "2+2"}, "expected": "4"}\n'


def test_evaluate_from_python_keeps_its_cases_file(tmp_path):
    """Attack (held: ``record:`` never writes into a file holding something else than a recording):
    ``evaluate(k, "agent.json", "cases.jsonl")`` (the Python entry point of ``zagent eval``, which does not reserve
    the cases file as the command does) with the agent file recording its model to ``cases.jsonl``: the case fails
    saying why, the cases file untouched."""
    from zagent.plugins.evals import evaluate

    (tmp_path / "cases.jsonl").write_text(CASES)
    agent = _write(tmp_path / "agent.json", agent_spec(llm_config={"model": "record:test:offline",
                                                                   "path": "cases.jsonl"}))
    k = make_kernel(plugins=["zagent.plugins.batch", "zagent.plugins.evals"])
    try:
        report = evaluate(k, agent, str(tmp_path / "cases.jsonl"))
        assert "already holds something" in str(report.cases[0].error)
    finally:
        k.close()
    assert (tmp_path / "cases.jsonl").read_text() == CASES


@pytest.mark.parametrize("command", ["batch", "eval"])
def test_the_out_file_naming_the_inputs_is_refused_untouched(tmp_path, command):
    """Attack (held: the results file must hold results): ``zagent batch agent.json inputs.jsonl --out
    inputs.jsonl`` (``zagent eval cases.jsonl --out cases.jsonl``), a slip that would append results to the inputs."""
    agent = _write(tmp_path / "agent.json", agent_spec(llm_config={"model": "test:offline"}))
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text(CASES if command == "eval" else '{"question": "2+2"}\n')
    before = inputs.read_text()
    args = (["batch", agent, str(inputs)] if command == "batch" else ["eval", str(inputs), "--agent", agent])
    done = run_cli(*args, "--out", str(inputs), cwd=str(tmp_path), plugins=CLI_PLUGINS + ",batch,evals")
    assert done.returncode != 0 and "not a batch result" in done.stderr
    assert inputs.read_text() == before


def test_workflow_checkpoints_naming_the_workflow_file_is_refused_untouched(tmp_path):
    """Attack (held: the store checks the SQLite header): ``zagent workflow run wf.json --checkpoints wf.json``."""
    wf = {"name": "w", "goal": "answer", "inputs": [{"name": "task"}], "nodes": [
        {"name": "a", "description": "answer", "inputs": [{"name": "task"}], "outputs": [{"name": "answer"}],
         "agents": [{"type": "react", "name": "r", "tools": [], "max_iterations": 3}]}]}
    path = _write(tmp_path / "wf.json", wf)
    before = (tmp_path / "wf.json").read_text()
    done = run_cli("workflow", "run", path, "--checkpoints", path, "--model", "test:offline", "--input", "task=hi",
                   cwd=str(tmp_path))
    assert done.returncode != 0 and "not an SQLite database" in done.stderr
    assert (tmp_path / "wf.json").read_text() == before


# -- ~ read literally by zagent, expanded by the check -----------------------------------------------------------


@pytest.fixture
def project(tmp_path, monkeypatch):
    """The user's project (the working folder), where the download's spec lands; ``HOME`` elsewhere."""
    proj = tmp_path / "proj"
    proj.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home" / ".local" / "share"))
    for name in ("ZAGENT_RECORDINGS", "ZAGENT_SKILLS_DIR", "ZAGENT_MEMORY_DB", "ZAGENT_LOG_DB"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(proj)
    return proj


@pytest.mark.parametrize("env", ["ZAGENT_RECORDINGS", "XDG_DATA_HOME"])
def test_a_recordings_folder_named_with_a_tilde_is_still_the_users(k, project, monkeypatch, env):
    """Attack (got through): ``ZAGENT_RECORDINGS="~/rec"`` (quoted in a service file or ``.env``, so no shell
    expanded it): zagent's recorder reads the value as it is, so ``--model record:...`` records into
    ``./~/rec/`` of the working folder, while the path check expanded ``~`` and guarded ``$HOME/rec``. A spec in
    the project naming ``~/rec/test-offline.jsonl`` replayed the user's recording. Defence: zagent's own data counts
    under both readings of a value, and since round sixteen zagent expands the ``~`` itself (the home's folder)."""
    value = "~/rec" if env == "ZAGENT_RECORDINGS" else "~/data"
    monkeypatch.setenv(env, value)
    from zagent.plugins.offline.record import default_path

    recording = default_path("test:offline")
    assert recording.startswith(str(project.parent / "home" / value[2:]))
    os.makedirs(os.path.dirname(os.path.abspath(recording)))
    with open(recording, "w") as f:
        f.write(RECORDED)
    rel = os.path.relpath(os.path.abspath(recording), project)
    path = _write(project / "agent.json", agent_spec(llm_config={"model": "replay:test:offline", "path": rel,
                                                                 "match": "order"}))
    # the user's recording is now in the home, out of the project: the folder rule refuses it first
    with pytest.raises(ConfigError, match="zagent's own data|outside the folders a spec may name"):
        out = k.agent(path)(question="my salary")
        assert "SECRET-R14" not in str(out)


@pytest.mark.parametrize("env", ["ZAGENT_LOG_DB", "ZAGENT_MEMORY_DB"])
def test_a_log_or_memory_file_named_with_a_tilde_is_still_the_users(k, project, monkeypatch, env):
    """Attack (got through): ``ZAGENT_LOG_DB="~/logs.db"`` (or ``ZAGENT_MEMORY_DB``) read literally by zagent
    (``./~/logs.db``); a spec in the project checkpointing into ``~/logs.db`` wrote into the user's run log.
    Defence: refused at load."""
    monkeypatch.setenv(env, "~/z.db")
    (project / "~").mkdir(mode=0o700)  # where zagent keeps the user's file (the value read as it is)
    path = _write(project / "r.json", {"type": "react", "name": "r", "tools": [], "checkpoints": "~/z.db"})
    with pytest.raises(ConfigError, match="zagent's own data"):
        k.agent(path)
    assert not (project / "~" / "z.db").exists()


@pytest.mark.parametrize("config", [{"memory": {"path": "~/m.db"}}, {"log": "~/m.db"},
                                    {"skills": {"folder": "~"}}], ids=["memory", "log", "skills"])
def test_an_apps_data_path_with_a_tilde_is_still_the_users(project, config):
    """Attack (got through): ``Kernel(config={"memory": {"path": "~/m.db"}})`` (or ``log``, ``skills.folder``): the
    plugin opens ``./~/m.db`` as written, the check guarded ``$HOME/m.db``; a spec's ``long_term_memory.path:
    "~/m.db"`` was accepted. Defence: refused at load."""
    (project / "~").mkdir(mode=0o700)
    k = make_kernel(config=config, plugins=["zagent.plugins.runlog", "zagent.plugins.skills"])
    try:
        with pytest.raises(ConfigError, match="zagent's own data"):
            k.agent(_write(project / "a.json", agent_spec(use_long_term_memory=True,
                                                          long_term_memory={"path": "~/m.db"})))
    finally:
        k.close()


def test_a_dollar_home_in_a_data_variable_is_read_alike_everywhere(k, project, monkeypatch):
    """Attack (held: neither zagent's readers nor the check expand variables): ``ZAGENT_LOG_DB='$HOME/logs.db'``
    names ``./$HOME/logs.db`` for both, so a spec's ``checkpoints: "$HOME/logs.db"`` is refused."""
    monkeypatch.setenv("ZAGENT_LOG_DB", "$HOME/logs.db")
    (project / "$HOME").mkdir(mode=0o700)
    with pytest.raises(ConfigError, match="zagent's own data"):
        k.agent(_write(project / "r.json", {"type": "react", "name": "r", "tools": [],
                                            "checkpoints": "$HOME/logs.db"}))


def test_a_tilde_in_a_spec_path_is_never_expanded(k, project):
    """Attack (held): a spec naming ``~/.bashrc.jsonl`` as its trajectory: a file below the spec's folder, never the
    user's home."""
    agent = k.agent(_write(project / "r.json", {"type": "react", "name": "r", "tools": [],
                                                "trajectory_path": "~/.bashrc.jsonl"}))
    assert agent.trajectory_path == os.path.realpath(project / "~" / ".bashrc.jsonl")


# -- names: control characters, long folders, long paths ---------------------------------------------------------


@pytest.mark.parametrize("key", ["trajectory_path", "live_trajectory_path"])
@pytest.mark.parametrize("value", ["d" * 300 + "/t.jsonl", "d/" * 2100 + "t.jsonl"], ids=["long-folder", "long-path"])
def test_a_spec_path_too_long_for_the_file_system_is_refused_at_load(k, tmp_path, key, value):
    """Attack (got through as a bare ``OSError`` after the run's work): a ReAct file whose trajectory lies below a
    300-character folder name (round twelve tried a long file name) or is a 6,300-byte path. Defence: refused when
    the spec loads, saying how long a name and a path may be."""
    path = _write(tmp_path / "r.json", {"type": "react", "name": "r", "tools": [], key: value})
    with pytest.raises(ConfigError, match="over the 4095 bytes a path and 255 a name may have"):
        k.agent(path)


def test_a_trajectory_below_a_long_folder_named_in_code_is_a_config_error(k, tmp_path):
    """Attack (got through as a bare ``OSError`` after the run): the same path named in code
    (``ReActLoop(trajectory_path=...)``, or ``zagent chat --trajectory``). Defence: a ``ConfigError`` saying the
    name is too long when the folder is made."""
    from zagent.plugins.react import ReActLoop

    loop = ReActLoop(kernel=k, llm=k.llm("scripted:long", replies=["done"]), tools=["word_count"],
                     trajectory_path=str(tmp_path / ("d" * 300) / "t.jsonl"))
    with pytest.raises(ConfigError, match="too long for the file system"):
        loop.run("hi")


@pytest.mark.parametrize("value", ["runs\n/t.jsonl", "t\x1b]0;pwned\x07.jsonl", "t\r.jsonl"])
def test_a_spec_path_with_a_control_character_is_refused(k, tmp_path, value):
    """Attack (got through: the file was made): a trajectory named with a newline or a terminal escape sequence (a
    listing of the folder, a log line naming the file, then shows what the name says). Defence: refused at load,
    nothing made."""
    path = _write(tmp_path / "r.json", {"type": "react", "name": "r", "tools": [], "trajectory_path": value})
    with pytest.raises(ConfigError, match="control character"):
        k.agent(path)
    assert sorted(os.listdir(tmp_path)) == ["r.json"]


# -- a trajectories folder linking out ------------------------------------------------------------------------------


def _curator(tmp_path, replies):
    k = make_kernel(plugins=["zagent.plugins.skills"], config={"skills": {"folder": str(tmp_path / "skills")}})
    from zagent.plugins.skills.runtime import Skills

    skills = Skills.open(k)
    llm = k.llm("scripted:curator", replies=replies)
    return k, skills, llm


def _private_run(k, path):
    from zagent.plugins.react import ReActLoop

    loop = ReActLoop(kernel=k, llm=k.llm("scripted:mine", replies=["PRIVATE-RUN-ANSWER"]), tools=["word_count"],
                     trajectory_path=str(path))
    loop.run("PRIVATE-TASK of mine")


@pytest.mark.parametrize("how", ["symlink", "hardlink"])
def test_a_trajectories_folder_cannot_link_to_the_users_runs(tmp_path, how):
    """Attack (got through): ``zagent skills curate traj/`` on a downloaded folder whose ``leak.jsonl`` links to the
    user's own trajectory file elsewhere (its tasks and tool results): the runs were sent to the curating model and
    learnt into the user's skills. Defence: a trajectory file of the folder must lie in it (as skill and agent
    files do); refused before any file is read."""
    k, skills, llm = _curator(tmp_path, ['{"goal_reached": true}'] * 3)
    try:
        (tmp_path / "mine").mkdir()
        _private_run(k, tmp_path / "mine" / "runs.jsonl")
        (tmp_path / "traj").mkdir()
        if how == "symlink":
            (tmp_path / "traj" / "leak.jsonl").symlink_to(tmp_path / "mine" / "runs.jsonl")
        else:
            os.link(tmp_path / "mine" / "runs.jsonl", tmp_path / "traj" / "leak.jsonl")
        with pytest.raises(ConfigError, match="links out of its folder|hard links"):
            skills.curator(llm=llm).curate_folder(str(tmp_path / "traj"))
        assert not any("PRIVATE-TASK" in str(r.messages) for r in llm.requests)
    finally:
        skills.close()
        k.close()


def test_a_skill_file_hard_linked_to_the_users_notes_is_not_read(tmp_path, caplog):
    """Attack (got through): a skills folder (a pack the user points ``skills.folder`` at) whose ``notes.md`` is a
    second name (hard link) of the user's own notes elsewhere: the folder check compared real paths only, so the
    notes became a skill and went into prompts. Defence: a skill file with more than one name is skipped with a
    warning (as a link out of the folder is), never read."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "skills").mkdir()
    (tmp_path / "mine" / "notes.md").write_text("---\nname: notes\ndescription: deploy the service\n---\n"
                                                "MY-PRIVATE-NOTES password=hunter2\n")
    os.link(tmp_path / "mine" / "notes.md", tmp_path / "skills" / "notes.md")
    k = make_kernel(plugins=["zagent.plugins.skills"], config={"skills": {"folder": str(tmp_path / "skills")}})
    from zagent.plugins.skills.runtime import Skills

    skills = Skills.open(k)
    try:
        assert skills.registry.get("notes") is None
        assert "hard link" in caplog.text
    finally:
        skills.close()
        k.close()


def test_a_curated_skill_named_like_a_path_stays_in_the_folder(tmp_path):
    """Attack (held: the curator makes a file name of the skill's name): the curating model (its input is a run's
    tool output) names the skill ``../../outside``: the file is written in the skills folder."""
    traj = {"id": "run-1", "agent": "shop", "status": "completed", "final": "2", "questions": [],
            "conversations": [{"from": "human", "value": "count a b"}, {"from": "gpt", "value": "2"}],
            "steps": [{"step": 1, "action": "use_tool", "tool": "word_count"}, {"step": 2, "action": "direct_response"}]}
    (tmp_path / "t.jsonl").write_text(json.dumps(traj) + "\n")

    def reply(request):
        if "review a recorded run" in request.messages[-1].content:
            return json.dumps({"goal_reached": True, "steps": 2, "errors": [], "reusable": True, "summary": "ok"})
        return json.dumps({"name": "../../outside", "description": "Count words", "when_to_use": "counting",
                           "instructions": "call word_count with the text", "tool_sequence": ["word_count"]})

    k, skills, llm = _curator(tmp_path, [reply] * 4)
    try:
        skills.curator(llm=llm).curate_folder(str(tmp_path / "t.jsonl"))
    finally:
        skills.close()
        k.close()
    assert not (tmp_path / "outside.md").exists() and not (tmp_path.parent / "outside.md").exists()
    assert [f for f in os.listdir(tmp_path / "skills") if f.endswith(".md")] == ["outside.md"]


@needs_fifo
def test_a_fifo_in_a_trajectories_folder_does_not_hang(tmp_path):
    """Attack (held: ``open_regular``): ``traj/x.jsonl`` is a FIFO: a ConfigError, no hang."""
    k, skills, llm = _curator(tmp_path, [])
    try:
        (tmp_path / "traj").mkdir()
        os.mkfifo(tmp_path / "traj" / "x.jsonl")
        with pytest.raises(ConfigError):
            skills.curator(llm=llm).curate_folder(str(tmp_path / "traj"))
    finally:
        skills.close()
        k.close()


# -- modes of the files a run makes --------------------------------------------------------------------------------


def test_a_checkpoint_store_and_its_side_files_are_private_under_a_loose_umask(k, tmp_path):
    """Attack (held): under umask 022 a checkpoint store (it holds tool results) and SQLite's ``-wal``/``-shm`` are
    0600."""
    from zagent.plugins.react import ReActLoop

    (tmp_path / "new").mkdir()
    old = os.umask(0o022)
    try:
        store = k.memory("checkpoints", path=str(tmp_path / "new" / "cp.db"))
        ReActLoop(kernel=k, llm=k.llm("scripted:c", replies=["done"]), tools=["word_count"],
                  checkpoints=store).run("hi")
    finally:
        os.umask(old)
    for name in os.listdir(tmp_path / "new"):
        assert stat.S_IMODE(os.stat(tmp_path / "new" / name).st_mode) == 0o600, name


def test_a_batch_results_file_in_a_new_folder_is_private(tmp_path):
    """Attack (held): ``zagent batch ... --out new/sub/out.jsonl`` under umask 022: the results (every output) are
    0600 in folders made 0700."""
    agent = _write(tmp_path / "agent.json", agent_spec(llm_config={"model": "test:offline"}))
    (tmp_path / "in.jsonl").write_text('{"question": "2+2"}\n')
    out = tmp_path / "new" / "sub" / "out.jsonl"
    old = os.umask(0o022)
    try:
        k = make_kernel(plugins=["zagent.plugins.batch"])
        try:
            k.batch(agent, str(tmp_path / "in.jsonl"), out=str(out))
        finally:
            k.close()
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) == 0o700


# -- a workflow batched: the batch's files on a worker and item by item ---------------------------------------------


class Round14FarWorker:
    """An executor whose units run as on a remote worker: through JSON, on a worker kernel of their own, in a thread
    of their own (a worker process shares nothing of the driver's context, only the payload)."""

    name = "far"
    in_process = False
    concurrency = 1

    async def submit(self, unit):
        import asyncio
        import threading

        import msgspec
        from zagent import Kernel
        from zagent.agentkit.units import run_unit

        from .conftest import PLUGINS

        runner, payload = unit.remote_parts(self.name)
        wire = msgspec.json.decode(msgspec.json.encode(payload))
        out = {}

        def work():
            worker = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
            try:
                out["result"] = asyncio.run(run_unit(worker, runner, wire))
            except BaseException as exc:  # handed back to the driver, as a worker's failure
                out["error"] = exc
            finally:
                worker.close()

        thread = threading.Thread(target=work)
        thread.start()
        await asyncio.get_running_loop().run_in_executor(None, thread.join)
        if "error" in out:
            raise out["error"]
        return msgspec.json.decode(msgspec.json.encode(out["result"]))

    async def aclose(self):
        pass


class Round14FarWorkerPlugin:
    """Registers the ``far`` executor."""

    def zagent_register_executors(self, register):
        register("far", lambda **options: Round14FarWorker())


def _recording_workflow(folder):
    """A workflow file whose inline agent records its model to ``out.jsonl`` (the batch's results file)."""
    inline = agent_spec(name="Rec", llm_config={"model": "record:test:offline", "path": "out.jsonl"})
    return _write(folder / "wf.json", {"name": "w", "goal": "answer", "inputs": [{"name": "question"}], "nodes": [
        {"name": "a", "description": "answer", "inputs": [{"name": "question"}], "outputs": [{"name": "answer"}],
         "agents": [inline]}]})


@pytest.mark.parametrize("executor", ["local", "far"])
def test_a_batched_workflow_cannot_record_into_the_batchs_results_file(tmp_path, executor):
    """Attack (got through): ``k.batch(WorkFlowGraph.load("wf.json"), "in.jsonl", out="out.jsonl")`` (or ``zagent
    batch wf.json ... --executor ray``) where the workflow's inline agent records to ``out.jsonl``: the batch
    reserved its files only while it made the job, and a workflow builds its agents per item (locally, after that;
    on a worker, with nothing of the driver's context), so the recording went into the results file and the batch
    no longer resumed. Defence: the reserved files travel with the job (``shipped_trust``) and hold for each item."""
    from zagent.plugins.workflow import WorkFlowGraph

    graph = WorkFlowGraph.load(_recording_workflow(tmp_path))
    (tmp_path / "in.jsonl").write_text('{"question": "2+2"}\n')
    k = make_kernel(plugins=["zagent.plugins.batch", Round14FarWorkerPlugin()])
    try:
        report = k.batch(graph, str(tmp_path / "in.jsonl"), out=str(tmp_path / "out.jsonl"), executor=executor)
    finally:
        k.close()
    text = (tmp_path / "out.jsonl").read_text()
    assert report.summary.failed == 1 and "this batch's results file" in text  # the item failed, saying why
    assert '"request"' not in text


def test_a_workflow_node_on_a_worker_cannot_checkpoint_into_the_workflows_store(tmp_path):
    """Attack (held: the driver builds every node's agents under its reservation before a unit is shipped): the
    workflow runs its nodes on a remote executor, and a node's inline ReAct agent names the workflow's own
    ``checkpoints`` file."""
    from zagent.plugins.workflow import WorkFlowError, WorkFlowExecutor, WorkFlowGraph
    from zagent.speckit import spec_file

    path = _write(tmp_path / "wf.json", {"name": "w", "goal": "answer", "inputs": [{"name": "task"}], "nodes": [
        {"name": "a", "description": "answer", "inputs": [{"name": "task"}], "outputs": [{"name": "answer"}],
         "agents": [{"type": "react", "name": "r", "tools": ["word_count"], "checkpoints": "cp.db"}]}]})
    k = make_kernel(plugins=[Round14FarWorkerPlugin()])
    try:
        ex = WorkFlowExecutor(kernel=k, checkpoints=str(tmp_path / "cp.db"), executor="far",
                              llm=k.llm("scripted:w", replies=["4"]))
        with spec_file(path), pytest.raises(WorkFlowError, match="checkpoint file of this workflow run"):
            ex.run(WorkFlowGraph.load(path), {"task": "2+2"}, run_id="wf1")
        assert "react" not in {info.kind for info in ex.checkpoints.list()}
    finally:
        k.close()
