"""Round eight: files a hostile spec (and the files shipped with it), a mistaken option or a race makes zagent
write, empty, create or chmod where it should not.

A spec downloaded with its folder (a git checkout, an archive unpacked into a project) brings symlinks that are
the user's own once unpacked, so "another user's link" checks do not stop them. Attacks tried and whether they got
through before this round's fixes:

- ``trajectory_path`` "sub/../../../made/t.jsonl", ``sub`` a link three folders deep into the spec's folder: GOT
  THROUGH (the real path is inside, so the check passed, but ``private_folder`` read the path lexically and made
  the folder ``made`` two levels above the spec's folder) -- fixed: ``check_spec_path`` returns the real path
- ``trajectory_path`` "t.jsonl", a link shipped in the spec's folder to the user's ``.env`` there: GOT THROUGH (run
  records appended to ``.env``; ``record:`` would empty it) -- fixed: the real path must end in the suffix too
- ``record:`` naming the user's ``notes.jsonl`` next to the spec: GOT THROUGH (emptied at the first call) -- fixed:
  ``record:`` refuses to start afresh over a file that is not a recording
- ``Kernel.batch(..., out=)`` (``zagent batch --out``) naming a one-line file without a newline (the inputs file,
  by mistake): GOT THROUGH (emptied as "a line cut by a kill") -- fixed: only the start of a result line is cut
- ``AgentManager.save_all`` into a new folder: GOT THROUGH (made 0755, readable by every user) -- fixed: 0700
- a database path with ``..`` after a symlinked folder (``--checkpoints link/../real/cp.db``): GOT THROUGH
  (``touch_private`` read the folder lexically as missing, so SQLite made the file 0644, then failed) -- fixed:
  ``privatefiles`` makes paths absolute without ``abspath``'s lexical ``..``
- ``long_term_memory`` of a plugin backend, and ``llm_config`` of a provider wrapper, naming a path with a bare
  ``file``/``dir``/``db``/``filename``/``directory``/``database`` option: GOT THROUGH (only ``path`` and ``*_path``-like
  names were checked) -- fixed: those whole names are paths too
- a folder ``private_folder`` just made swapped for a link before its ``chmod``: GOT THROUGH (the link's target
  became 0700) -- fixed: the mode is set through a descriptor opened without following links
- a FIFO swapped in between ``open_private``'s check and a write open: GOT THROUGH (the open hung until a reader
  came) -- fixed: opened without blocking, a FIFO is a ``ConfigError``
- links shipped as ``cp.db-wal``/``-shm``/``-journal`` to the user's file, next to a spec's ``checkpoints``: held
  (SQLite does not write through them)
- ``~``, ``$HOME`` and ``file://`` in ``trajectory_path``: held (never expanded: a name inside the spec's folder)
- a FIFO planted as ``long_term_memory.path``, a folder as ``checkpoints``: held (``ConfigError``, no hang)
- an agent file a spec names (``agents``) that is a link shipped in its folder to a spec elsewhere: held
- ``trajectory_path``/``checkpoints`` '../' in an inline speaker of a group chat file or a workflow node: held
"""

import contextlib
import json
import os
import stat
import threading

import pytest

from zagent import ConfigError
from zagent.errors import ZagentError

from .conftest import agent_spec, make_kernel, spec_folder

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
ENV = "API_KEY=sk-the-users-key\n"


@pytest.fixture
def k():
    kernel = make_kernel(plugins=["zagent.plugins.batch"])
    yield kernel
    kernel.close()


def react(**over):
    return {"type": "react", "name": "r", "tools": ["word_count"], **over}


def run_react(kernel, path):
    agent = kernel.agent(str(path))
    agent.llm = kernel.llm("scripted:r", replies=["done"])
    agent.chat("hi", use_react=True)


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def unblock_later(path):
    """Open FIFO ``path`` for reading after a while, so a writer stuck in its open returns (the test then fails
    instead of hanging)."""
    def run():
        import time

        time.sleep(1.5)
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))

    threading.Thread(target=run, daemon=True).start()


# -- what the spec's folder brings ----------------------------------------------------------------------------


def test_a_climb_after_a_symlinked_subfolder_makes_no_folder_outside(k, tmp_path):
    """trajectory_path 'sub/../../../made/t.jsonl' with sub -> x/y/z: the real path (proj/made) is used;
    nothing is made next to the spec's folder's parents."""
    folder, path = spec_folder(tmp_path, **react(trajectory_path="sub/../../../made/t.jsonl"))
    (folder / "x" / "y" / "z").mkdir(parents=True)
    os.symlink("x/y/z", folder / "sub")
    with contextlib.suppress(OSError):  # before the fix the write failed, after the folder outside was made
        run_react(k, path)
    assert not (tmp_path / "made").exists()
    assert (folder / "made" / "t.jsonl").is_file()


def test_a_trajectory_link_to_the_users_env_file_is_refused(k, tmp_path):
    """trajectory_path 't.jsonl', shipped as a link to '.env' in the same folder: a ConfigError at load saying
    what it links to; '.env' is untouched."""
    folder, path = spec_folder(tmp_path, **react(trajectory_path="t.jsonl"))
    (folder / ".env").write_text(ENV)
    os.symlink(".env", folder / "t.jsonl")
    with pytest.raises(ConfigError, match="is a link to .*does not end in"):
        run_react(k, path)
    assert (folder / ".env").read_text() == ENV


def test_record_does_not_empty_a_file_that_is_not_a_recording(k, tmp_path):
    """llm_config record: with path 'notes.jsonl', the user's own data next to the spec: a ConfigError saying it
    is not a recording; the notes are whole."""
    folder, path = spec_folder(tmp_path, **agent_spec(llm_config={"model": "record:test:offline",
                                                                   "path": "notes.jsonl"}))
    (folder / "notes.jsonl").write_text('{"note": "the users own data"}\n')
    with pytest.raises(ConfigError, match="not a recording"):
        k.agent(str(path))(question="hi")
    assert (folder / "notes.jsonl").read_text() == '{"note": "the users own data"}\n'


def test_record_still_starts_an_earlier_recording_afresh(tmp_path):
    """Recording twice to one file (two processes, as two test runs): the second recording replaces the first."""
    out = tmp_path / "rec.jsonl"
    for text in ("first", "second"):
        kernel = make_kernel()
        kernel.llm("record:test:offline", path=str(out)).complete(text)
        kernel.close()
    lines = out.read_text().splitlines()
    assert len(lines) == 1 and "second" in lines[0] and "first" not in lines[0]


def test_a_bare_file_option_of_a_plugin_memory_backend_is_checked(tmp_path):
    """long_term_memory {"name": "vec", "file": ~/.bashrc}: a ConfigError at load; the backend never gets it."""
    seen = {}

    class Backend:
        def zagent_register_memory(self, register, kernel):
            def make(**options):
                seen.update(options)
                from zagent.plugins.memory.inprocess import InProcessMemory

                return InProcessMemory()
            register("vec", make)

    victim = tmp_path / "home" / ".bashrc"
    _, path = spec_folder(tmp_path, **agent_spec(llm="test:offline", use_long_term_memory=True,
                                                 long_term_memory={"name": "vec", "file": str(victim)}))
    kernel = make_kernel()
    kernel.add_plugin(Backend(), name="r8-vec-backend")
    try:
        with pytest.raises(ConfigError, match="long_term_memory.file"):
            kernel.agent(str(path))(question="hi")
    finally:
        kernel.close()
    assert seen == {}


@pytest.mark.parametrize("option", ["file", "dir", "db", "filename", "directory", "database"])
def test_a_bare_path_option_of_a_provider_wrapper_is_checked(tmp_path, option):
    """llm_config {"model": "mywrap:x", OPTION: ~/.bashrc}: a ConfigError when the model is made; the wrapper's
    factory never runs."""
    seen = []

    class Wrapper:
        def zagent_register_providers(self, register, kernel):
            def factory(model, **options):
                seen.append(options)
                return kernel.llm("test:offline")
            register("mywrap", factory)

    _, path = spec_folder(tmp_path, **agent_spec(llm_config={"model": "mywrap:x",
                                                             option: str(tmp_path / "home" / ".bashrc")}))
    kernel = make_kernel()
    kernel.add_plugin(Wrapper(), name="r8-wrapper")
    try:
        with pytest.raises(ConfigError, match="outside the folders"):
            kernel.agent(str(path))(question="hi")
    finally:
        kernel.close()
    assert seen == []


@pytest.mark.parametrize("side", ["-wal", "-shm", "-journal"])
def test_shipped_links_as_sqlite_side_files_never_write_the_users_file(k, tmp_path, side):
    """cp.db-wal (-shm, -journal) shipped as a link to the user's file, next to the spec's checkpoints 'cp.db':
    whatever the run does, the user's file is byte for byte the same."""
    folder, path = spec_folder(tmp_path, **react(checkpoints="cp.db"))
    victim = tmp_path / "home" / ".bashrc"
    victim.parent.mkdir()
    victim.write_text("export PATH=/usr/bin\n" * 3)
    os.symlink(victim, folder / f"cp.db{side}")
    with contextlib.suppress(ZagentError):
        run_react(k, path)
    assert victim.read_text() == "export PATH=/usr/bin\n" * 3


@pytest.mark.parametrize("name", ["~/t.jsonl", "$HOME/t.jsonl", "file://{home}/t.jsonl"])
def test_home_variables_and_file_urls_in_a_trajectory_path_stay_in_the_folder(k, tmp_path, monkeypatch, name):
    """trajectory_path '~/t.jsonl', '$HOME/t.jsonl' or a file:// URL into the user's home: never expanded; the
    run writes inside the spec's folder and nothing in the home folder."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    folder, path = spec_folder(tmp_path, **react(trajectory_path=name.format(home=home)))
    run_react(k, path)
    assert os.listdir(home) == []
    assert any("t.jsonl" in files for _, _, files in os.walk(folder))


@needs_fifo
def test_a_fifo_planted_as_the_memory_database_is_refused_without_hanging(k, tmp_path):
    """long_term_memory.path 'mem.db', a FIFO in the spec's folder: a ConfigError saying it is not a regular
    file, no hang."""
    folder, path = spec_folder(tmp_path, **agent_spec(llm="test:offline", use_long_term_memory=True,
                                                      long_term_memory={"path": "mem.db"}))
    os.mkfifo(folder / "mem.db")
    unblock_later(str(folder / "mem.db"))
    with pytest.raises(ConfigError, match="not a regular file"):
        k.agent(str(path))(question="hi")


def test_a_folder_planted_as_the_checkpoints_file_is_refused(k, tmp_path):
    """checkpoints 'cp.db' that is a folder in the spec's folder: a ConfigError when the agent is built."""
    folder, path = spec_folder(tmp_path, **react(checkpoints="cp.db"))
    (folder / "cp.db").mkdir()
    with pytest.raises(ConfigError, match="not a regular file"):
        k.agent(str(path))


def test_an_agent_file_link_out_of_the_spec_folder_is_refused(k, tmp_path):
    """agents ['helper.json'], shipped as a link to an agent file outside the spec's folder: a ConfigError."""
    folder, path = spec_folder(tmp_path, **agent_spec(llm="test:offline", agents=["helper.json"]))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "helper.json").write_text(json.dumps(agent_spec(name="helper", llm="test:offline")))
    os.symlink(elsewhere / "helper.json", folder / "helper.json")
    with pytest.raises(ConfigError, match="outside"):
        k.agent(str(path))


def test_a_group_chat_speakers_trajectory_out_of_the_chat_folder_is_refused(k, tmp_path):
    """A group chat file whose inline ReAct speaker names trajectory_path '../out.jsonl': a ConfigError when the
    chat is loaded; nothing is written next to the chat's folder."""
    from zagent.plugins.groupchat.spec import load

    folder = tmp_path / "dl" / "proj"
    folder.mkdir(parents=True)
    (folder / "chat.json").write_text(json.dumps({"name": "c", "max_rounds": 1, "agents": [
        react(trajectory_path="../out.jsonl"), react(name="s")]}))
    with pytest.raises(ConfigError, match="outside the folders"):
        load(str(folder / "chat.json"), k)
    assert not (folder.parent / "out.jsonl").exists()


def test_a_workflow_nodes_checkpoints_out_of_the_workflow_folder_are_refused(k, tmp_path):
    """A workflow file whose node's inline ReAct agent names checkpoints '../cp.db': the run fails saying so;
    no database is made next to the workflow's folder."""
    from zagent.plugins.workflow.executor import WorkFlowExecutor
    from zagent.plugins.workflow.graph import WorkFlowGraph

    folder = tmp_path / "dl" / "proj"
    folder.mkdir(parents=True)
    (folder / "wf.json").write_text(json.dumps({"goal": "g", "name": "w", "inputs": [{"name": "q"}], "nodes": [
        {"name": "n", "description": "d", "inputs": [{"name": "q"}], "outputs": [{"name": "a"}],
         "agents": [react(checkpoints="../cp.db")]}]}))
    executor = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:x", replies=["done"] * 5))
    with pytest.raises(ZagentError, match="outside the folders"):
        executor.run(WorkFlowGraph.load(str(folder / "wf.json")), {"q": "hi"})
    assert not (folder.parent / "cp.db").exists()


# -- options and saves ------------------------------------------------------------------------------------------


def test_a_batch_out_naming_a_one_line_file_without_a_newline_is_not_emptied(k, tmp_path):
    """out= the inputs file itself, one line with no newline: a ConfigError saying it is not a batch result;
    the file is whole."""
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text('{"question": "hi"}')
    with pytest.raises(ConfigError, match="not a batch result"):
        k.batch(agent_spec(llm="test:offline"), str(inputs), out=str(inputs))
    assert inputs.read_text() == '{"question": "hi"}'


def test_a_results_line_cut_by_a_kill_is_still_cut(k, tmp_path):
    """A results file whose last line is a result cut short: the batch cuts it and runs that item again."""
    from zagent.plugins.batch.identity import inputs_digest

    spec = agent_spec(llm="test:offline")
    made_by = k.batch(spec, []).summary.made_by  # the batch's own record, as a kill left it
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({"line": 1, "ok": True, "attempts": 1, "duration": 0.1, "output": {"answer": "x"},
                               "made_by": made_by, "inputs_digest": inputs_digest({"question": "a"})})
                   + '\n{"line":2,"ok":tr')
    report = k.batch(spec, [{"question": "a"}, {"question": "b"}], out=str(out))
    assert report.summary.done == 1
    assert len(out.read_text().splitlines()) == 2


def test_agents_saved_into_a_new_folder_are_in_a_private_folder(k, tmp_path):
    """AgentManager.save_all into a folder it makes: the folder is 0700 (its files 0600)."""
    from zagent.plugins.manager import AgentManager

    manager = AgentManager(kernel=k)
    manager.add_agent(agent_spec(name="helper", llm="test:offline"))
    manager.save_all(tmp_path / "agents")
    assert mode(tmp_path / "agents") == 0o700


def test_a_database_path_climbing_after_a_symlinked_folder_is_created_private(k, tmp_path):
    """checkpoints at 'link/../real/cp.db', link -> a/b (a --checkpoints flag, Python code): whether SQLite then
    takes the path or not, the file made where the open lands (a/real/cp.db) is 0600, never the umask's 0644."""
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "real").mkdir()
    os.symlink("a/b", tmp_path / "link")
    with contextlib.suppress(ZagentError):  # SQLite reads '..' lexically and may not open it
        k.memory("checkpoints", path=os.path.join(str(tmp_path), "link", "..", "real", "cp.db")).save("r", 1, b"x")
    assert mode(tmp_path / "a" / "real" / "cp.db") == 0o600


# -- races ------------------------------------------------------------------------------------------------------


def test_a_folder_swapped_for_a_link_after_it_is_made_does_not_chmod_the_target(tmp_path, monkeypatch):
    """private_folder makes 'shared/new', which is then swapped for a link to a 0644 file before its mode is
    set: a ConfigError saying it was replaced; the file keeps 0644."""
    from zagent.agentkit import privatefiles

    victim = tmp_path / "victim"
    victim.write_text("x")
    os.chmod(victim, 0o644)
    (tmp_path / "shared").mkdir()
    new = tmp_path / "shared" / "new"
    made = os.mkdir

    def racing(p, *args, **kwargs):
        made(p, *args, **kwargs)
        if os.fspath(p) == str(new):  # the other user wins the race
            os.rmdir(p)
            os.symlink(victim, p)

    monkeypatch.setattr(privatefiles.os, "mkdir", racing)
    with pytest.raises(ConfigError, match="was replaced"):
        privatefiles.private_folder(str(new))
    assert mode(victim) == 0o644


@needs_fifo
def test_a_fifo_swapped_in_before_a_write_open_does_not_hang(k, tmp_path, monkeypatch):
    """A trajectory file missing at the check, a FIFO by the open: a ConfigError saying it is a FIFO, never an
    open waiting for a reader."""
    from zagent.agentkit import privatefiles
    from zagent.plugins.react.state import ReActState
    from zagent.plugins.react.trajectory import append_trajectory

    path = tmp_path / "t.jsonl"
    checked = privatefiles.check_private

    def racing(p, **kw):
        found = checked(p, **kw)
        if os.fspath(p) == str(path) and not os.path.lexists(path):
            os.mkfifo(path)
            unblock_later(str(path))
        return found

    monkeypatch.setattr(privatefiles, "check_private", racing)
    with pytest.raises(ConfigError, match="FIFO"):
        append_trajectory(str(path), ReActState(run_id="r", agent="a", task="t"))
