"""Round thirteen, files and paths: the save path next to the guarded open (``write_atomic`` over a device, a FIFO,
a folder or a link to one, and over names too long for its temporary file), the SQLite header read next to the
guarded ``touch_private``, and zagent's own data the app configured (not only the default places).

Attacks tried and whether they got through before this round's fixes:

- ``CustomizeAgent.save``/``WorkFlowGraph.save``/``EvalReport.save`` (``zagent workflow generate -o``, ``zagent eval
  --report``) onto a link to ``/dev/null`` (as ``/dev/stdout`` is a link to ``/proc/self/fd/1``): GOT THROUGH (the
  link was replaced by a regular file: run as root with ``-o /dev/stdout``, the system's ``/dev/stdout`` is gone)
  -- fixed: ``write_atomic`` refuses a target that is, or links to, anything but a regular file (``ConfigError``)
- the same onto a FIFO and onto a character device node: GOT THROUGH (the node replaced by a file) -- fixed with it
- the same onto a folder: GOT THROUGH as a bare ``IsADirectoryError`` -- fixed with it (a ``ConfigError`` saying so)
- the same onto an SQLite database (``zagent eval --report logs.db``, ``workflow generate --agents agents.db -o
  agents.db``): GOT THROUGH (the run log or agents store replaced) -- fixed: ``write_atomic`` never replaces one
- a saved file name of 240 characters (legal: 255 is the limit): GOT THROUGH as a bare ``OSError`` (``write_atomic``'s
  temporary name ``<name>.<pid>.<thread>.tmp`` was too long) -- fixed: a long name gets a short temporary name
- an agent name of 250 characters (from an agent or workflow file; specs allow 256) saved by
  ``AgentManager.save_all``: GOT THROUGH as a bare ``OSError`` -- fixed with it (saved); one of 256 (``<name>.json``
  over 255): GOT THROUGH as a bare ``OSError`` -- fixed: a ``ConfigError`` saying how long a saved name may be
- a memory file swapped for a FIFO after ``touch_private``'s check, before ``Database`` reads its header: GOT
  THROUGH (the plain ``open`` hung for ever) -- fixed: the header is read through ``open_regular`` (no blocking)
- the same swap after the store opened, then a use from a new thread (each thread opens its own connection and
  reads the header again): GOT THROUGH (hung) -- fixed with it
- an untrusted spec naming, as ``checkpoints`` or ``long_term_memory.path``, the run log, memory file or skills
  index the *app* configured (``Kernel(config={"log": ..., "memory": {"path": ...}, "skills": {"folder": ...}})``)
  in the spec's folder: GOT THROUGH (checkpoints written into the app's run log; only the default places and the
  environment variables counted as zagent's own data) -- fixed: ``speckit.paths.users_data(kernel)`` adds them
- a ReAct spec naming the user's eval cases file next to it (``cases.jsonl``) as ``trajectory_path`` or
  ``live_trajectory_path``: GOT THROUGH (a run line appended to the cases; the next ``zagent eval`` fails on it, a
  batch inputs file gains items) -- fixed: a trajectory is appended only to an empty file or one whose first line
  is a run zagent recorded (``react.trajectory.open_trajectory``), checked when the spec loads and at every append
- a trajectory file (named in code, or ``--trajectory``) holding the user's notes by the time the run writes: GOT
  THROUGH -- fixed with it (checked through the descriptor the line is written to)
- ``zagent workflow run wf.json --checkpoints cp.db`` where the file's ReAct agent names ``checkpoints: "cp.db"``:
  GOT THROUGH (its steps went into the workflow's store under the workflow's run id: the run no longer resumed, "not
  a workflow run state") -- fixed: a spec may not name the file the run keeps its own data in
  (``speckit.paths.reserving``, set by the workflow executor, group chats, ``zagent batch`` and ``zagent eval``)
- the same for a group chat speaker and the chat's ``--checkpoints``: GOT THROUGH -- fixed with it
- ``zagent batch``/``zagent eval --out results.jsonl`` with the agent file's ``record:`` ``path`` naming
  ``results.jsonl``: GOT THROUGH (the recording went into the results file the command had just made; the batch no
  longer resumed), also from Python (``k.batch(path, inputs, out=...)``) -- fixed with it
- held: ``record:``/``replay:`` in a nested wrapper (``record:replay:...``) without a path, a spec's memory or
  checkpoint file that is another program's database (``ForeignDatabase``), ``~``/``$HOME`` in spec paths (never
  expanded), the batch ``--out`` naming the agent file (not a results file: refused untouched)

- a spec path naming a Windows device (``con.jsonl``, ``NUL.jsonl``, ``sub/LPT9.jsonl``): accepted (on Windows the
  name opens the device in any folder; not tried on Windows here) -- fixed: ``check_path_way`` refuses such a name
  below the allowed folder, on every platform

- ``zagent workflow run wf.json --agents agents/`` from a downloaded project whose ``agents/wallet.json`` links to the
  user's own agent file elsewhere (its key, its tools): GOT THROUGH (the workflow ran the user's agent) -- fixed: an
  agents folder's file must lie in the folder (``speckit.paths.in_folder``, as skill files), by name or ``load_all``
- an agent file ``wf.jsonl`` naming itself as its trajectory: held (this round's trajectory check), now also refused
  by the path check ("the spec file itself")

Counted by attack (parametrized cases of one attack count once): 22 tried, 17 got through (one of them, the device
names, only harmful on Windows), 17 fixed; 5 held.
"""

import json
import os
import stat
import threading

import pytest

from zagent import ConfigError

from .conftest import agent_spec, make_kernel, two_node_workflow

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
root_only = pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to make a device")


@pytest.fixture
def k():
    kernel = make_kernel(plugins=["zagent.plugins.evals", "zagent.plugins.runlog", "zagent.plugins.skills"])
    yield kernel
    kernel.close()


def _save(k, what, path):
    """Save an agent spec, a workflow or an eval report to ``path`` (the three ``write_atomic`` saves)."""
    if what == "agent":
        k.agent(agent_spec(llm="test:offline")).save(path)
    elif what == "workflow":
        two_node_workflow().save(path)
    else:
        from zagent.plugins.evals import EvalReport

        EvalReport(agent="a", cases=[]).save(path)


SAVES = ["agent", "workflow", "report"]


# -- write_atomic over what is not a regular file ----------------------------------------------------------------


@pytest.mark.parametrize("what", SAVES)
def test_a_save_onto_a_link_to_a_device_keeps_the_link(k, tmp_path, what):
    """Attack (got through): ``-o out.json`` where ``out.json`` links to ``/dev/null`` (``/dev/stdout`` is such a link):
    the save replaced the link. Defence: ``write_atomic`` refuses a target that is not a regular file."""
    link = tmp_path / "out.json"
    link.symlink_to("/dev/null")
    with pytest.raises(ConfigError, match="not a regular file"):
        _save(k, what, link)
    assert os.path.islink(link) and os.readlink(link) == "/dev/null"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left


@needs_fifo
@pytest.mark.parametrize("what", SAVES)
def test_a_save_onto_a_fifo_keeps_the_fifo(k, tmp_path, what):
    """Attack (got through): the target is a FIFO: it was replaced by a file. Defence: refused, left as it was."""
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="FIFO"):
        _save(k, what, fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@root_only
def test_a_save_onto_a_device_node_keeps_the_device(k, tmp_path):
    """Attack (got through): the target is a character device (as ``/dev/null`` itself): replaced by a file as
    root. Defence: refused, the node is left."""
    node = tmp_path / "null"
    os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    with pytest.raises(ConfigError, match="device"):
        _save(k, "workflow", node)
    assert stat.S_ISCHR(os.lstat(node).st_mode)


@pytest.mark.parametrize("what", SAVES)
def test_a_save_onto_a_folder_is_a_config_error(k, tmp_path, what):
    """Attack (got through as a bare IsADirectoryError): the target is a folder. Defence: a ConfigError saying it is
    a folder; the folder and what it holds are left."""
    folder = tmp_path / "out.json"
    folder.mkdir()
    (folder / "keep").write_text("kept")
    with pytest.raises(ConfigError, match="folder"):
        _save(k, what, folder)
    assert (folder / "keep").read_text() == "kept"


@pytest.mark.parametrize("what", SAVES)
def test_a_save_never_replaces_an_sqlite_database(k, tmp_path, what):
    """Attack (got through): ``zagent eval --report logs.db`` or ``zagent workflow generate --agents agents.db -o
    agents.db`` (a slip, or a default pointed there): the user's run log or agents store was replaced by the report.
    Defence: ``write_atomic`` refuses to replace an SQLite database (as ``logs show --html`` does since round nine)."""
    store = k.memory("checkpoints", path=str(tmp_path / "agents.db"))
    store.save("agent:Writer", 0, {"name": "Writer"})
    store.close()
    with pytest.raises(ConfigError, match="SQLite database"):
        _save(k, what, tmp_path / "agents.db")
    store = k.memory("checkpoints", path=str(tmp_path / "agents.db"))
    assert store.latest("agent:Writer") is not None
    store.close()


def test_a_save_onto_a_link_to_an_own_regular_file_still_works(k, tmp_path):
    """Not an attack: the user's own link to a regular file is replaced by the saved file, as before."""
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "out.json"
    link.symlink_to(real)
    _save(k, "workflow", link)
    assert json.loads(link.read_text())["name"] == "w"


def test_a_save_with_a_long_but_legal_name_works(tmp_path):
    """Attack (got through as a bare OSError): a 240-character file name (255 is the limit): the temporary name
    ``<name>.<pid>.<thread>.tmp`` was too long. Defence: a long name gets a short temporary name."""
    from zagent.agentkit.files import write_atomic

    path = tmp_path / ("a" * 235 + ".json")
    write_atomic(path, "{}")
    assert path.read_text() == "{}"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_an_agent_name_as_long_as_a_file_name_allows_is_saved(k, tmp_path):
    """Attack (got through as a bare OSError): an agent file naming its agent with 250 characters (its file name,
    255, is legal), saved by ``AgentManager.save_all``. Defence: the short temporary name; the agent is saved."""
    from zagent.plugins.manager import AgentManager

    manager = AgentManager(kernel=k)
    manager.add_agent(agent_spec(name="a" * 250))
    assert manager.save_all(tmp_path / "agents") == ["a" * 250]
    assert os.listdir(tmp_path / "agents") == ["a" * 250 + ".json"]


def test_an_agent_name_too_long_for_a_file_name_is_a_config_error(k, tmp_path):
    """Attack (got through as a bare OSError): a 256-character agent name (the spec limit) saved by
    ``AgentManager.save_all``: ``<name>.json`` is over 255. Defence: a ConfigError saying how long it may be."""
    from zagent.plugins.manager import AgentManager

    manager = AgentManager(kernel=k)
    manager.add_agent(agent_spec(name="a" * 256))
    with pytest.raises(ConfigError, match="at most"):
        manager.save_all(tmp_path / "agents")
    assert os.listdir(tmp_path / "agents") == []


# -- the memory file's header read -------------------------------------------------------------------------------


def _hangs(fn, seconds=5.0):
    """``(hung, outcome)``: run ``fn`` in a daemon thread; ``hung`` when it did not return in ``seconds``."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - the outcome is checked by the test
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    return t.is_alive(), out


@needs_fifo
def test_a_fifo_swapped_in_before_the_header_read_does_not_hang(k, tmp_path, monkeypatch):
    """Attack (got through: hung): the memory file passes ``touch_private``'s check, then is swapped for a FIFO
    before ``Database`` reads its header with a plain ``open``. Defence: the header is read without blocking; a
    FIFO is a ConfigError."""
    import zagent.agentkit.privatefiles as privatefiles

    path = tmp_path / "mem.db"
    path.write_bytes(b"")
    checked = privatefiles.touch_private

    def check_then_swap(p):
        checked(p)
        os.unlink(p)
        os.mkfifo(p)

    monkeypatch.setattr(privatefiles, "touch_private", check_then_swap)
    hung, out = _hangs(lambda: k.memory("sqlite", path=str(path)))
    assert not hung, "opening the memory file hung on a FIFO"
    assert isinstance(out.get("error"), ConfigError) and "FIFO" in str(out["error"])


@needs_fifo
def test_a_fifo_swapped_in_after_the_store_opened_does_not_hang_a_new_thread(k, tmp_path):
    """Attack (got through: hung): the store opened, then its file became a FIFO; a new thread opens its own
    connection and read the header with a plain ``open``. Defence: refused, no hang."""
    path = tmp_path / "mem.db"
    store = k.memory("sqlite", path=str(path))
    os.replace(path, tmp_path / "moved.db")
    os.mkfifo(path)
    hung, out = _hangs(lambda: store.search("ns", "hello"))
    assert not hung, "a new thread's connection hung on a FIFO"
    assert isinstance(out.get("error"), ConfigError) and "FIFO" in str(out["error"])


# -- zagent's own data the app configured --------------------------------------------------------------------------


def _react_file(folder, **over):
    path = folder / "agent.json"
    path.write_text(json.dumps({"type": "react", "name": "r", "tools": ["word_count"], **over}))
    return str(path)


def _apps_data(tmp_path, where):
    """``(config, file name)``: a kernel config keeping zagent's data of kind ``where`` in ``tmp_path/proj``."""
    proj = tmp_path / "proj"
    proj.mkdir()
    if where == "log":
        return {"log": str(proj / "logs.db")}, "logs.db"
    if where == "log-dict":
        return {"log": {"path": str(proj / "logs.db")}}, "logs.db"
    if where == "memory":
        return {"memory": {"path": str(proj / "memory.db")}}, "memory.db"
    (proj / "skills").mkdir()
    return {"skills": {"folder": str(proj / "skills")}}, "skills/.index.sqlite"


@pytest.mark.parametrize("where", ["log", "log-dict", "memory", "skills"])
def test_a_spec_cannot_checkpoint_into_the_apps_configured_data(tmp_path, where):
    """Attack (got through): the app keeps its run log, memory file or skills folder next to the agent files; a
    spec names it as ``checkpoints``. Defence: the app's configured data is zagent's own data of the user, which a
    spec may not name."""
    config, name = _apps_data(tmp_path, where)
    k = make_kernel(plugins=["zagent.plugins.runlog", "zagent.plugins.skills"], config=config)
    try:
        with pytest.raises(ConfigError, match="zagent's own data"):
            k.agent(_react_file(tmp_path / "proj", checkpoints=name))
    finally:
        k.close()


def test_a_spec_cannot_name_the_apps_memory_file_as_its_long_term_memory(tmp_path):
    """Attack (got through): ``long_term_memory.path`` naming the app's configured memory file (the app's agents'
    memories, outside the spec's namespace rules). Defence: refused as zagent's own data."""
    config, name = _apps_data(tmp_path, "memory")
    k = make_kernel(config=config)
    spec = tmp_path / "proj" / "agent.json"
    spec.write_text(json.dumps(agent_spec(use_long_term_memory=True, long_term_memory={"path": name})))
    try:
        with pytest.raises(ConfigError, match="zagent's own data"):
            k.agent(str(spec))
    finally:
        k.close()


def test_spec_paths_naming_the_configured_file_itself_still_opens_it(tmp_path):
    """Not an attack: the app lists that very file in ``spec_paths``: its specs may name it (the app's choice)."""
    proj = tmp_path / "proj"
    proj.mkdir()
    log = proj / "logs.db"
    k = make_kernel(plugins=["zagent.plugins.runlog"], config={"log": False, "spec_paths": [str(log)],
                                                                 "memory": {"path": str(log)}})
    try:
        k.agent(_react_file(proj, checkpoints="logs.db"))
    finally:
        k.close()


# -- trajectories appended to files that are not trajectories -------------------------------------------------------


CASES = '{"id": "c1", "inputs": {"question": "2+2"}, "expected": "4"}\n'


def _loop_run(k, name="r", **paths):
    from zagent.plugins.react import ReActLoop

    loop = ReActLoop(kernel=k, llm=k.llm(f"scripted:{name}", replies=["done"]), tools=["word_count"], **paths)
    return loop.run("hi")


@pytest.mark.parametrize("key", ["trajectory_path", "live_trajectory_path"])
def test_a_spec_cannot_append_runs_to_the_users_cases_file(tmp_path, key):
    """Attack (got through): a downloaded ReAct spec in the user's project names the eval cases file next to it
    (``cases.jsonl``) as its trajectory: every run appended a line, and the next ``zagent eval`` fails on it (or a
    batch inputs file gains items). Defence: a trajectory is appended only to an empty file or one holding
    trajectories; refused when the spec loads, the file untouched."""
    (tmp_path / "cases.jsonl").write_text(CASES)
    k = make_kernel()
    try:
        with pytest.raises(ConfigError, match="not a trajectory file"):
            k.agent(_react_file(tmp_path, **{key: "cases.jsonl"}))
    finally:
        k.close()
    assert (tmp_path / "cases.jsonl").read_text() == CASES


@pytest.mark.parametrize("key", ["trajectory_path", "live_trajectory_path"])
def test_a_run_never_appends_to_a_file_that_became_something_else(tmp_path, key):
    """Attack (got through): the file was empty at load (or named in code, or ``--trajectory``) and holds the
    user's notes by the time the run writes. Defence: checked again when the run appends; nothing written."""
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"note": "keep me"}\n')
    k = make_kernel()
    try:
        with pytest.raises(ConfigError, match="not a trajectory file"):
            _loop_run(k, **{key: str(notes)})
    finally:
        k.close()
    assert notes.read_text() == '{"note": "keep me"}\n'


def test_runs_still_append_to_a_trajectory_file_live_and_whole(tmp_path):
    """Not an attack: two runs append to one file holding both live events and whole runs, as before."""
    path = tmp_path / "t.jsonl"
    k = make_kernel()
    try:
        _loop_run(k, "one", trajectory_path=str(path), live_trajectory_path=str(path))
        _loop_run(k, "two", trajectory_path=str(path), live_trajectory_path=str(path))
    finally:
        k.close()
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert sum("conversations" in x for x in lines) == 2 and sum("event" in x for x in lines) >= 4


# -- the files a run or command keeps for itself -------------------------------------------------------------------


def _workflow_file(folder, agent):
    path = folder / "wf.json"
    path.write_text(json.dumps({"name": "w", "goal": "answer tasks", "inputs": [{"name": "task"}], "nodes": [
        {"name": "a", "description": "answer", "inputs": [{"name": "task"}], "outputs": [{"name": "answer"}],
         "agents": [agent]}]}))
    return path


REACT_NODE = {"type": "react", "name": "r", "tools": ["word_count"], "max_iterations": 3}


def test_a_workflow_agent_cannot_checkpoint_into_the_workflows_own_store(tmp_path):
    """Attack (got through): ``zagent workflow run wf.json --checkpoints cp.db`` where the file's ReAct agent names
    ``checkpoints: "cp.db"`` too: it saved its steps under the workflow's run id into the workflow's store, so the
    run no longer resumed ("not a workflow run state"; a run paused for a person is lost). Defence: a spec may not
    name the file the run keeps its own checkpoints in (``speckit.paths.reserving``)."""
    from zagent.plugins.workflow import WorkFlowError, WorkFlowExecutor, WorkFlowGraph
    from zagent.speckit import spec_file

    path = _workflow_file(tmp_path, {**REACT_NODE, "checkpoints": "cp.db"})
    k = make_kernel()
    try:
        ex = WorkFlowExecutor(kernel=k, checkpoints=str(tmp_path / "cp.db"), llm=k.llm("scripted:w", replies=["4"]))
        with spec_file(path), pytest.raises(WorkFlowError, match="checkpoint file of this workflow run"):
            ex.run(WorkFlowGraph.load(path), {"task": "2+2"}, run_id="wf1")
        kinds = {info.kind for info in ex.checkpoints.list()}
        assert "react" not in kinds
    finally:
        k.close()


def test_a_group_chat_speaker_cannot_checkpoint_into_the_chats_own_store(tmp_path):
    """Attack (got through): ``zagent groupchat run chat.json --checkpoints runs.db`` where a ReAct speaker names
    ``runs.db`` as its own checkpoints. Defence: refused when the chat is built."""
    from zagent.plugins.groupchat.spec import load

    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps({"name": "c", "agents": [{**REACT_NODE, "checkpoints": "runs.db"},
                                                         {**REACT_NODE, "name": "s"}],
                                "selection": {"policy": "round_robin"}}))
    k = make_kernel()
    try:
        with pytest.raises(ConfigError, match="checkpoint file of this group chat"):
            load(chat, k, checkpoints=str(tmp_path / "runs.db"))
    finally:
        k.close()


@pytest.mark.parametrize("command", ["batch", "eval"])
def test_a_spec_cannot_record_into_the_commands_own_results_file(tmp_path, command):
    """Attack (got through): ``zagent batch agent.json inputs.jsonl --out results.jsonl`` (or ``zagent eval --out``)
    where the agent file's model is ``record:test:offline`` with ``path: results.jsonl``: the recording went into
    the results file the batch had just made, so it no longer resumes ("not a batch result"). Defence: a spec may
    not name the files the command keeps (its inputs or cases and its results); the command says why."""
    from .conftest import CLI_PLUGINS, run_cli

    agent = tmp_path / "agent.json"
    agent.write_text(json.dumps(agent_spec(llm_config={"model": "record:test:offline", "path": "results.jsonl"})))
    (tmp_path / "inputs.jsonl").write_text('{"id": "c1", "inputs": {"question": "2+2"}, "expected": "4"}\n'
                                           if command == "eval" else '{"question": "2+2"}\n')
    args = (["batch", str(agent), str(tmp_path / "inputs.jsonl")] if command == "batch"
            else ["eval", str(tmp_path / "inputs.jsonl"), "--agent", str(agent)])
    done = run_cli(*args, "--out", str(tmp_path / "results.jsonl"), cwd=str(tmp_path),
                   plugins=CLI_PLUGINS + ",batch,evals")
    assert f"this {command}'s" in done.stdout + done.stderr
    for line in (tmp_path / "results.jsonl").read_text().splitlines() if (tmp_path / "results.jsonl").exists() else ():
        assert '"request"' not in line


def test_kernel_batch_from_python_keeps_its_results_file_too(tmp_path):
    """Attack (got through): the same agent file given to ``k.batch(path, inputs, out=...)`` from Python. Defence:
    ``abatch`` reserves its inputs and results files while it builds the agent."""
    agent = tmp_path / "agent.json"
    agent.write_text(json.dumps(agent_spec(llm_config={"model": "record:test:offline", "path": "out.jsonl"})))
    (tmp_path / "in.jsonl").write_text('{"question": "2+2"}\n')
    k = make_kernel(plugins=["zagent.plugins.batch"])
    try:
        with pytest.raises(ConfigError, match="this batch's results file"):
            k.batch(str(agent), str(tmp_path / "in.jsonl"), out=str(tmp_path / "out.jsonl"))
    finally:
        k.close()
    assert not (tmp_path / "out.jsonl").exists() or '"request"' not in (tmp_path / "out.jsonl").read_text()


# -- Windows device names ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["con.jsonl", "NUL.jsonl", "aux.replay.jsonl", "com1.jsonl", "sub/LPT9.jsonl"])
def test_a_windows_device_name_is_refused_everywhere(tmp_path, name):
    """Attack (accepted before; on Windows the name opens the device in any folder: a ``record:`` to ``nul.jsonl``
    is lost, a ``replay:`` of ``con.jsonl`` waits on the console for ever): a spec naming it.
    Defence: refused on every platform (a spec file is the same file on Windows)."""
    k = make_kernel()
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec(llm_config={"model": "record:test:offline", "path": name})))
    try:
        with pytest.raises(ConfigError, match="Windows device name"):
            k.agent(str(spec))
    finally:
        k.close()


def test_a_folder_above_the_spec_named_like_a_device_is_fine(tmp_path):
    """Not an attack: the spec's own folder may be called ``aux`` (a LaTeX project): only the part the spec names
    is checked."""
    folder = tmp_path / "aux"
    folder.mkdir()
    k = make_kernel()
    try:
        k.agent(_react_file(folder, trajectory_path="t.jsonl"))
    finally:
        k.close()


def test_a_spec_file_cannot_name_itself(tmp_path):
    """Attack (held by this round's trajectory check; refused now by the path check too): an agent file
    ``wf.jsonl`` (any name but .yaml/.yml reads as JSON) naming ``wf.jsonl`` as its trajectory would append runs to
    itself. Defence: a spec path may not be the spec file being built."""
    wf = tmp_path / "wf.jsonl"
    wf.write_text(json.dumps({"type": "react", "name": "r", "tools": ["word_count"], "trajectory_path": "wf.jsonl"}))
    k = make_kernel()
    try:
        with pytest.raises(ConfigError, match="the spec file itself"):
            k.agent(str(wf))
    finally:
        k.close()


# -- an agents folder linking out -----------------------------------------------------------------------------------


def _linked_agents(tmp_path):
    """``(folder, the user's agent file)``: a downloaded agents folder whose ``wallet.json`` links to the user's
    own agent file elsewhere (git makes a checkout's links the user's own)."""
    home = tmp_path / "home" / "agents"
    home.mkdir(parents=True)
    wallet = home / "wallet.json"
    wallet.write_text(json.dumps(agent_spec(name="wallet", llm_config={"model": "test:offline",
                                                                       "api_key": "sk-users-own-key"})))
    folder = tmp_path / "dl" / "agents"
    folder.mkdir(parents=True)
    (folder / "wallet.json").symlink_to(os.path.relpath(wallet, folder))
    return folder, wallet


@pytest.mark.parametrize("how", ["load_all", "by_name"])
def test_an_agents_folder_cannot_link_to_the_users_agent_elsewhere(k, tmp_path, how):
    """Attack (got through): ``zagent workflow run wf.json --agents agents/`` from a downloaded project whose
    ``agents/wallet.json`` links to the user's own agent file (its key, its tools): the workflow's nodes ran the
    user's agent on the download's inputs. Defence: an agents folder's file must lie in it (as skill files do)."""
    from zagent.plugins.manager import AgentManager

    folder, wallet = _linked_agents(tmp_path)
    manager = AgentManager(kernel=k, storage=str(folder))
    with pytest.raises(ConfigError, match="links out of its folder"):
        manager.load_all() if how == "load_all" else manager.add_agent("wallet")


def test_an_agents_folder_link_inside_the_folder_still_loads(k, tmp_path):
    """Not an attack: a link from one name to another file inside the agents folder loads as before."""
    from zagent.plugins.manager import AgentManager

    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "real.json").write_text(json.dumps(agent_spec(name="helper")))
    (folder / "helper.json").symlink_to("real.json")
    assert {a.name for a in AgentManager(kernel=k, storage=str(folder)).load_all()} == {"helper"}
