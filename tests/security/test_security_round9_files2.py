"""Round nine, part two: agent files naming agent files (chains, fan-outs, odd names), saved states of the wrong
shape, configuration files nested too deep, and the modes of what zagent writes for a run.

Attacks tried and whether they got through before this round's fixes:

- a chain of 300 agent files, each naming the next in ``agents``: GOT THROUGH (``RecursionError`` while building,
  a traceback instead of an error saying what to do) -- fixed: agent files name agent files at most 16 deep
  (``MAX_AGENT_FILE_DEPTH``, a ``ConfigError`` showing the chain)
- an agent file naming ``"a\\x00.json"``: GOT THROUGH (a bare ``ValueError: embedded null byte``) -- fixed: a
  ``ConfigError`` naming the entry
- a fan-out of agent files (5 levels of 10, each naming the same 10 files below: 10^5 builds from 51 files):
  held (the second build of a file meets its own tool name: a ``ConfigError`` after a few dozen loads)
- a group chat checkpoint edited to a state of the wrong shape or nested too deep: GOT THROUGH (msgspec's
  ``ValidationError``/``RecursionError`` escaped the resume) -- fixed: a ``CheckpointError`` naming the step
- an MCP configuration file (JSON or TOML) nested thousands deep: GOT THROUGH (``RecursionError``) -- fixed: a
  ``ConfigError`` saying it is not valid JSON/TOML
- ``zagent eval CASES --report CASES`` (or ``--report`` naming the agent file or ``--out``): GOT THROUGH (after
  every case ran, the report replaced the user's cases file) -- fixed: refused before any case runs
- ``zagent eval --compare r.json --report r.json`` (rolling a baseline): GOT THROUGH (the report was saved first, so
  the run was compared with itself: a regression never showed) -- fixed: the baseline is read before the save
- a ReAct spec naming ``checkpoints: "cp.db"`` and refused for another key (its ``llm_config`` path out of its
  folder): GOT THROUGH (``cp.db``, ``-wal`` and ``-shm`` were left in the folder, the store open) -- fixed: a refused
  spec closes its store and removes a store file it just made (an existing one is kept)
- the same refusal with ``long_term_memory.path``: held (the memory file is opened only when the agent runs)
- ``zagent logs show latest --db logs.db --html logs.db`` (a slip): GOT THROUGH (the page replaced the run log) --
  fixed: ``--html`` naming an SQLite file is a ``ConfigError``, the database untouched
- ``trajectory_path`` of a 300-character name: held (a ``ConfigError`` naming the path, nothing written)
- a run state saved by ``loop.save`` and a trajectory file: held (0600, whatever the umask)
"""

import json
import os
import stat


import pytest

from zagent import ConfigError
from zagent.errors import CheckpointError

from .conftest import agent_spec, make_kernel, run_cli, zagent_mcp_module

DEEP = "[" * 200_000 + "]" * 200_000  # past the C recursion limit of every Python (3.13 decodes 5,000)


@pytest.fixture
def k():
    kernel = make_kernel()
    yield kernel
    kernel.close()


def named(name, agents):
    return agent_spec(name=name, agents=agents)


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


# -- agent files naming agent files ----------------------------------------------------------------------------


def test_a_long_chain_of_agent_files_is_a_config_error(k, tmp_path):
    """300 agent files, each naming the next: a ConfigError saying how deep files may name files and showing the
    chain, not a RecursionError."""
    for i in range(300):
        (tmp_path / f"c{i}.json").write_text(json.dumps(named(f"C{i}", [f"c{i + 1}.json"] if i < 299 else [])))
    with pytest.raises(ConfigError, match=r"more than 16 deep \(c1.json -> c2.json"):
        k.agent(str(tmp_path / "c0.json"))


def test_a_short_chain_of_agent_files_still_builds(k, tmp_path):
    """Eight agent files naming the next: built as before."""
    for i in range(8):
        (tmp_path / f"c{i}.json").write_text(json.dumps(named(f"C{i}", [f"c{i + 1}.json"] if i < 7 else [])))
    assert k.agent(str(tmp_path / "c0.json")).name == "C0"


def test_a_fan_out_of_agent_files_does_not_build_every_path(k, tmp_path, monkeypatch):
    """5 levels of 10 files, each naming the 10 files below (10^5 paths through 51 files): refused after a few
    dozen loads, never 10^5 (counted through load_spec_file)."""
    import zagent.speckit as speckit
    import zagent.speckit.files as files

    for level in range(5):
        below = [f"l{level + 1}_{m}.json" for m in range(10)] if level < 4 else []
        for j in range(10):
            (tmp_path / f"l{level}_{j}.json").write_text(json.dumps(named(f"L{level}_{j}", below)))
    (tmp_path / "top.json").write_text(json.dumps(named("top", [f"l0_{m}.json" for m in range(10)])))
    loads = []
    original = files.load_spec_file

    def counting(path):
        loads.append(path)
        assert len(loads) < 1000, "the fan-out is being built path by path"
        return original(path)

    monkeypatch.setattr(files, "load_spec_file", counting)
    monkeypatch.setattr(speckit, "load_spec_file", counting)
    with pytest.raises(ConfigError, match="registered already"):
        k.agent(str(tmp_path / "top.json"))


def test_an_agent_file_name_with_a_nul_is_a_config_error(k, tmp_path):
    """agents ['a\\x00.json']: a ConfigError naming the entry, not a bare ValueError."""
    (tmp_path / "s.json").write_text(json.dumps(named("A", ["a\x00.json"])))
    with pytest.raises(ConfigError, match="NUL character"):
        k.agent(str(tmp_path / "s.json"))


# -- saved states and configuration files ------------------------------------------------------------------------


@pytest.mark.parametrize("state", [b'{"round": "many"}', b'{"transcript": %s}' % DEEP.encode(), b"[1, 2]"])
def test_a_group_chat_checkpoint_of_the_wrong_shape_is_a_checkpoint_error(state):
    """A chat checkpoint edited to another shape, nested too deep or not an object: a CheckpointError naming the
    run and step."""
    from zagent.plugins.groupchat.state import resumed

    with pytest.raises(CheckpointError, match="checkpoint 3 of group chat run 'r1' is not a chat state"):
        resumed((3, state), None, "r1")


@pytest.fixture
def mcp_config(monkeypatch):
    yield from zagent_mcp_module(monkeypatch, "config")


@pytest.mark.parametrize("name,text", [("mcp.json", '{"mcpServers": %s}' % DEEP),
                                       ("mcp.toml", "a = " + "[" * 3000 + "]" * 3000 + "\n")])
def test_an_mcp_configuration_nested_too_deep_is_a_config_error(mcp_config, tmp_path, name, text, default_recursion_limit):
    """An MCP configuration file (JSON or TOML) nested thousands deep: a ConfigError saying it is not valid, no
    RecursionError."""
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError, match="is not valid"):
        mcp_config.read_file(str(path))


def test_a_trajectory_path_of_a_very_long_name_is_a_config_error(k, tmp_path):
    """trajectory_path of a 300-character name (past the file system's 255): a ConfigError naming it; nothing is
    written in the spec's folder."""
    (tmp_path / "agent.json").write_text(json.dumps({"type": "react", "name": "r", "tools": ["word_count"],
                                                     "trajectory_path": "a" * 300 + ".jsonl"}))
    agent = k.agent(str(tmp_path / "agent.json"))
    agent.llm = k.llm("scripted:r", replies=["done"])
    with pytest.raises(ConfigError, match="cannot use"):
        agent.chat("hi", use_react=True)
    assert os.listdir(tmp_path) == ["agent.json"]


def test_a_saved_run_state_and_a_trajectory_are_private_whatever_the_umask(k, tmp_path):
    """Under umask 0: loop.save's state file and a new trajectory file are 0600, their new folder 0700."""
    from zagent.plugins.react import ReActLoop

    old = os.umask(0)
    try:
        loop = ReActLoop(kernel=k, llm=k.llm("scripted:r", replies=["done"]), tools=["word_count"],
                         trajectory_path=str(tmp_path / "new" / "t.jsonl"))
        loop.run("count")
        loop.save(str(tmp_path / "state.json"))
    finally:
        os.umask(old)
    assert mode(tmp_path / "state.json") == 0o600
    assert mode(tmp_path / "new") == 0o700 and mode(tmp_path / "new" / "t.jsonl") == 0o600


@pytest.mark.parametrize("existing", [False, True])
def test_a_refused_react_spec_leaves_no_store_file_it_made(k, tmp_path, existing):
    """checkpoints 'cp.db' with llm_config's path out of the folder: a ConfigError; no cp.db (or side file) is left
    behind, and a store that was there already is kept with its checkpoints."""
    if existing:
        store = k.memory("checkpoints", path=str(tmp_path / "cp.db"))
        store.save("old", 0, {"a": 1})
        store.close()
    (tmp_path / "agent.json").write_text(json.dumps({
        "type": "react", "name": "r", "tools": ["word_count"], "checkpoints": "cp.db",
        "llm_config": {"model": "record:test:offline", "path": "/etc/x.jsonl"}}))
    with pytest.raises(ConfigError, match="refused"):
        k.agent(str(tmp_path / "agent.json"))
    if existing:
        store = k.memory("checkpoints", path=str(tmp_path / "cp.db"))
        assert store.latest("old")[0] == 0
        store.close()
    else:
        assert sorted(os.listdir(tmp_path)) == ["agent.json"]


def test_a_refused_memory_spec_leaves_no_memory_file(k, tmp_path):
    """long_term_memory.path 'mem.db' with llm_config's path out of the folder: refused; no mem.db is made."""
    (tmp_path / "agent.json").write_text(json.dumps(agent_spec(
        use_long_term_memory=True, long_term_memory={"path": "mem.db"},
        llm_config={"model": "record:test:offline", "path": "/etc/x.jsonl"})))
    with pytest.raises(ConfigError, match="refused"):
        k.agent(str(tmp_path / "agent.json"))(question="hi")
    assert sorted(os.listdir(tmp_path)) == ["agent.json"]


# -- command-line files that name each other -------------------------------------------------------------------


def eval_files(tmp_path, ids=("c1", "c2")):
    agent = tmp_path / "agent.json"
    agent.write_text(json.dumps(agent_spec(llm_config={"model": "test:offline"})))
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({"id": i, "inputs": {"question": i}, "expected": i}) + "\n" for i in ids))
    return agent, cases


@pytest.mark.parametrize("which", ["cases", "agent"])
def test_an_eval_report_naming_the_cases_or_agent_file_is_refused_before_running(tmp_path, which):
    """zagent eval cases.jsonl --agent agent.json --report <cases or agent file>: exit with an error saying so,
    before any case runs; the file is untouched."""
    agent, cases = eval_files(tmp_path)
    target = cases if which == "cases" else agent
    before = target.read_text()
    proc = run_cli("eval", str(cases), "--agent", str(agent), "--report", str(target), plugins="offline,parsers,"
                   "actions,evals,batch,cli")
    assert proc.returncode != 0 and "writing the report there would replace it" in proc.stderr
    assert target.read_text() == before


def test_a_report_replacing_its_own_baseline_is_compared_with_the_old_one(tmp_path):
    """--compare r.json --report r.json: the run is compared with the earlier report (a case it no longer has
    shows as removed), then r.json holds the new report."""
    agent, cases = eval_files(tmp_path)
    report = tmp_path / "r.json"
    plugins = "offline,parsers,actions,evals,batch,cli"
    assert run_cli("eval", str(cases), "--agent", str(agent), "--report", str(report), plugins=plugins).returncode == 0
    fewer = tmp_path / "fewer.jsonl"
    fewer.write_text(cases.read_text().splitlines()[0] + "\n")
    proc = run_cli("eval", str(fewer), "--agent", str(agent), "--compare", str(report), "--report", str(report),
                   "--json", plugins=plugins)
    assert json.loads(proc.stdout)["comparison"]["removed"] == ["c2"]
    assert [r["id"] for r in json.loads(report.read_text())["cases"]] == ["c1"]


def test_an_html_page_naming_the_run_log_itself_is_refused(tmp_path, capsys):
    """zagent logs show latest --db logs.db --html logs.db: an error saying it is an SQLite database; the run log
    keeps its runs."""
    from zagent.plugins.cli import main
    from zagent.plugins.react import ReActLoop

    db = str(tmp_path / "logs.db")
    k = make_kernel(config={"log": db}, plugins=["zagent.plugins.runlog", "zagent.plugins.cli"])
    try:
        ReActLoop(kernel=k, llm=k.llm("scripted:r", replies=["done"]), tools=["word_count"]).run("count")
    finally:
        k.close()
    k = make_kernel(plugins=["zagent.plugins.runlog", "zagent.plugins.cli"])
    try:
        assert main(["logs", "show", "latest", "--db", db, "--html", db], kernel=k) != 0
        assert "is an SQLite database" in capsys.readouterr().err
        assert main(["logs", "show", "latest", "--db", db, "--json"], kernel=k) == 0
    finally:
        k.close()
