"""Round sixteen, writes: a spec or data file that makes zagent write, truncate or create a file it should not, on the
paths next to those rounds seven to fifteen defended: the mode a save gives the file it makes, agent files that are
one file where case does not count, control characters in the names of files a spec makes, SQLite names (URIs, SQL
in a run id), wrappers and chains of wrappers naming recordings, hard links to SQLite side files, sockets and FIFOs
at a spec's paths, Windows extended paths, skill backups.

Got through before this round's fixes (each test's docstring says how): a save (``write_atomic``: a generated
workflow, an agent file, an eval report) over a downloaded link to a file of the user's outside the folder took
that file's mode, set-id bits and all (4777); a save over a hard link to such a file likewise; a save over a shipped
file unpacked 6777 kept its set-id and world-write bits; ``AgentManager.save_all`` wrote ``evil.json`` beside (on
macOS and Windows: over) ``Evil.json``, both for two held agent objects and for a file already in the folder; a
spec path holding a C1 control (``\\u009b``, CSI) or a bidi override made a file so named; ``record:``
emptied a JSONL file of the user's whose lines start with a ``model`` key (another tool's results); a legal file name of 240 bytes in 80 characters made every save fail (the
temporary name was measured in characters); a skill file's ``version: -1`` made its backup ``deploy.v-1.md``, no
backup but a skill file. Held: a dict
spec's ``checkpoints`` or ``long_term_memory.path`` written as an SQLite ``file:`` URI naming a database outside (SQLite
here reads such names as URIs); SQL in a checkpoint run id (``ATTACH``); a fallback chain entry's ``path`` out of
the folder; ``record:record:``/``record:replay:`` using the user's default recording; a hard link to ``.bashrc``
planted as a checkpoint file's ``-wal``/``-journal`` or a memory file's ``-shm``; a socket as ``checkpoints``, a
FIFO as a trajectory; the user's own link to a hard-linked file; a ``\\\\?\\C:\\`` path on POSIX; a skill
backup's name planted as a dangling link out of the skills folder. Still open (round fifteen's strict xfail, not
repeated here): a folder link on the way of a path the user typed.

Counted by attack (parametrized cases of one attack count once): 19 tried, 9 got through, 9 fixed; 10 held.
"""

import json
import os
import socket
import sqlite3
import stat

import pytest

from zagent import ConfigError
from zagent.plugins.memory.errors import StoreError

from .conftest import agent_spec, make_kernel, two_node_workflow

BASHRC = "export PATH=$HOME/bin:$PATH\n"


@pytest.fixture
def k():
    kernel = make_kernel(plugins=("zagent.plugins.fallback",))
    yield kernel
    kernel.close()


@pytest.fixture
def home(tmp_path, monkeypatch):
    """``(home, download)``: the user's home (``HOME``, ``XDG_DATA_HOME`` in it) with a ``.bashrc``, and a
    downloaded folder inside it."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / ".local" / "share"))
    for name in ("ZAGENT_RECORDINGS", "ZAGENT_MEMORY_DB", "ZAGENT_LOG_DB", "ZAGENT_SKILLS_DIR"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".bashrc").write_text(BASHRC)
    (tmp_path / "download").mkdir()
    return tmp_path, tmp_path / "download"


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def _react(folder, name="r", **over):
    """A ReAct agent file in ``folder`` with ``over`` merged in (the attack goes in ``over``)."""
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"type": "react", "name": name, "tools": ["word_count"], **over}))
    return str(path)


# -- the mode a save gives the file it makes ---------------------------------------------------------------------


def _setuid_tool(user):
    """The user's ``~/bin/tool``: set-user-id and writable by everyone (4777), a mode no save may copy."""
    (user / "bin").mkdir()
    tool = user / "bin" / "tool"
    tool.write_text("#!/bin/sh\n")
    os.chmod(tool, 0o4777)
    return tool


def test_a_save_through_a_link_out_takes_no_mode_from_the_links_target(home):
    """Attack (got through): the download ships ``wf.json -> ~/bin/tool``, a file of the user's that is set-user-id
    and writable by everyone (4777); ``zagent workflow generate -o wf.json`` replaced the link (as it should) but
    gave the new file the target's mode: a world-writable, set-user-id workflow file that any user could rewrite.
    Defence: a link out of its folder lends no mode (the new file is 0600); the target is untouched."""
    user, dl = home
    tool = _setuid_tool(user)
    os.symlink(tool, dl / "wf.json")
    two_node_workflow().save(str(dl / "wf.json"))
    assert not os.path.islink(dl / "wf.json") and _mode(dl / "wf.json") == 0o600
    assert tool.read_text() == "#!/bin/sh\n" and _mode(tool) == 0o4777


def test_a_save_over_a_hard_link_takes_no_mode_from_it(k, home):
    """Attack (got through): the download's ``agent.json`` is a hard link to the user's ``~/bin/tool`` (4777): the
    agent saved over it (a new file, so ``tool`` keeps its bytes) was made 4777. Defence: a file with more than one
    name lends no mode: the save is 0600; ``tool`` keeps its content and mode."""
    user, dl = home
    tool = _setuid_tool(user)
    os.link(tool, dl / "agent.json")
    k.agent(agent_spec(llm="test:offline")).save(str(dl / "agent.json"))
    assert _mode(dl / "agent.json") == 0o600 and os.stat(dl / "agent.json").st_ino != os.stat(tool).st_ino
    assert tool.read_text() == "#!/bin/sh\n" and _mode(tool) == 0o4777


def test_a_save_over_a_shipped_set_id_world_writable_file_drops_those_bits(home):
    """Attack (got through): an archive unpacked with its modes (``tar -p``) ships ``report.json`` as 6777; ``zagent
    eval ... --report report.json`` kept the mode, so the report (the next run's ``--compare`` baseline) stayed
    writable by every user, set-id. Defence: a replaced file lends only its owner's and group's bits: 0775 here."""
    from zagent.plugins.evals.run import EvalReport

    _, dl = home
    report = dl / "report.json"
    report.write_text("{}")
    os.chmod(report, 0o6777)
    EvalReport(agent="a", cases=[]).save(str(report))
    assert _mode(report) == 0o775 and json.loads(report.read_text())["agent"] == "a"


def test_a_legal_long_name_in_many_bytes_is_saved(k, tmp_path):
    """Attack (got through as a bare ``OSError``): an agent named with 80 CJK characters (240 bytes, ``<name>.json``
    a legal 245-byte file name) saved by ``save_all``: round thirteen gave a long name a short temporary file, but
    measured the name in characters, so the temporary name was over 255 bytes and the save failed with "File name
    too long" after the work. Defence: measured in bytes; the save succeeds and leaves no temporary file."""
    from zagent.plugins.manager import AgentManager

    name = "\u667a" * 80
    manager = AgentManager(kernel=k)
    manager.add_agent(agent_spec(name=name, llm="test:offline"))
    assert manager.save_all(str(tmp_path / "agents")) == [name]
    assert os.listdir(tmp_path / "agents") == [name + ".json"]


# -- agent files that are one file where case does not count ----------------------------------------------------


def test_two_agents_named_alike_but_for_case_are_not_saved_over_each_other(k, tmp_path):
    """Attack (got through): an app adds agent objects to its manager: its own ``Evil`` and one built from a
    downloaded file that names itself ``evil`` (inline dicts named alike are refused already; objects
    were not). ``save_all`` wrote ``Evil.json`` and ``evil.json``, one file on macOS and Windows: the hostile spec
    replaced the user's agent file, and loaded from the user's agents folder it gains that folder's trust.
    Defence: a ``ConfigError`` naming both before anything is written."""
    from zagent.plugins.manager import AgentManager

    manager = AgentManager(kernel=k)
    manager.add_agent(k.agent(agent_spec(llm="test:offline")))
    manager.add_agent(k.agent(agent_spec(name="evil", llm="test:offline", prompt="Obey: {question}")))
    assert sorted(manager.names) == ["Evil", "evil"]
    with pytest.raises(ConfigError, match="'evil.json', the same file as 'Evil.json'"):
        manager.save_all(str(tmp_path / "agents"))
    assert not (tmp_path / "agents").exists() or os.listdir(tmp_path / "agents") == []


def test_an_agent_named_like_a_file_already_saved_but_for_case_is_refused(k, tmp_path):
    """Attack (got through): the user's agents folder holds ``Evil.json``; a session holding only the hostile
    ``evil`` saves into it: ``evil.json`` replaces ``Evil.json`` on macOS and Windows. Defence: refused, naming the
    file already there; ``Evil.json`` is untouched."""
    from zagent.plugins.manager import AgentManager

    (tmp_path / "Evil.json").write_text("{}\n")
    manager = AgentManager(kernel=k)
    manager.add_agent(agent_spec(name="evil", llm="test:offline"))
    with pytest.raises(ConfigError, match="move 'Evil.json' out of the folder"):
        manager.save_all(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["Evil.json"] and (tmp_path / "Evil.json").read_text() == "{}\n"


# -- SQLite names ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["checkpoints", "long_term_memory"])
def test_an_sqlite_uri_in_a_dict_specs_path_opens_no_database_outside(k, home, monkeypatch, key):
    """Attack (held): an app lists its working folder in ``spec_paths`` and builds agents from dicts; one names
    ``file:/home/me/notes.db?x=.db``. It is relative (so inside the folder, ending ``.db``), and this SQLite reads
    every name starting ``file:`` as a URI (checked first): passed on as written, the agent's store would be the
    user's ``notes.db``. Defence: ``check_spec_path`` hands on the real path (``<cwd>/file:/...``), never the text:
    ``notes.db`` gains no table."""
    user, dl = home
    victim = user / "notes.db"
    with sqlite3.connect(str(victim)) as conn:
        conn.execute("CREATE TABLE notes (x)")
    uri = f"file:{victim}?x=.db"
    with sqlite3.connect(uri) as probe:  # the library reads the name as a URI: without the defence this is the attack
        assert probe.execute("SELECT name FROM sqlite_master").fetchall() == [("notes",)]
    k.config["spec_paths"] = [str(dl)]
    monkeypatch.chdir(dl)
    if key == "checkpoints":
        spec = {"type": "react", "name": "r", "tools": ["word_count"], "checkpoints": uri}
    else:
        spec = agent_spec(llm="test:offline", use_long_term_memory=True, long_term_memory={"path": uri})
    try:
        agent = k.agent(spec)
        if key == "long_term_memory":
            agent(question="remember this")
    except (ConfigError, StoreError):
        pass  # refused or unopenable (no such folder): either way not the user's database
    with sqlite3.connect(str(victim)) as conn:
        assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("notes",)]


def test_sql_in_a_checkpoint_run_id_attaches_no_database(k, home):
    """Attack (held): a run id (from a resumed run's file, a batch item id) holding ``'); ATTACH DATABASE
    '~/x.db' AS v; --``: were it formatted into SQL, SQLite would create ``x.db``. Defence: run ids are bound
    parameters: saved, listed and deleted as text; no file is made."""
    user, dl = home
    victim = user / "attached.db"
    run_id = f"x'); ATTACH DATABASE '{victim}' AS v; CREATE TABLE v.t(x); --"
    store = k.memory("checkpoints", path=str(dl / "cp.db"))
    store.save(run_id, 1, b"state")
    assert store.latest(run_id)[0] == 1 and run_id in [r.run_id for r in store.list()]
    assert store.delete(run_id) == 1
    assert not victim.exists()


# -- wrappers and chains naming recordings -----------------------------------------------------------------------


def test_a_fallback_chain_entry_cannot_record_out_of_the_folder(k, home):
    """Attack (held): the chain's own options are checked, but an entry's (``models: [{"model":
    "record:test:offline", "path": "~/.bashrc.jsonl"}]``) are given to the wrapper inside. Defence: every model the
    chain makes has its options checked as the spec's: refused at load; nothing is made."""
    user, dl = home
    spec = agent_spec(llm_config={"model": "fallback:x", "models": [
        {"model": "record:test:offline", "path": str(user / "out.jsonl")}]})
    (dl / "a.json").write_text(json.dumps(spec))
    with pytest.raises(ConfigError, match="outside the folders"):
        k.agent(str(dl / "a.json"))
    assert not (user / "out.jsonl").exists()


@pytest.mark.parametrize("inner", ["record:test:offline", "replay:test:offline"])
def test_a_wrapper_inside_a_wrapper_cannot_use_the_users_recording(k, home, inner):
    """Attack (held): ``record:record:test:offline`` with ``path`` in the folder: the outer wrapper's file is the
    spec's, but the inner ``record:`` (or ``replay:``) gets no path and would use the user's own recording of that
    model. Defence: the inner model is made under the spec's check too, and leaves its path out: refused."""
    user, dl = home
    spec = agent_spec(llm_config={"model": f"record:{inner}", "path": "run.jsonl"})
    (dl / "a.json").write_text(json.dumps(spec))
    with pytest.raises(ConfigError, match="gives no 'path'"):
        k.agent(str(dl / "a.json"))
    assert not (user / ".local" / "share" / "zagent" / "recordings").exists()


def test_record_does_not_empty_a_jsonl_file_whose_lines_start_with_a_model_key(k, home):
    """Attack (got through): the user's project holds ``scores.jsonl``, another tool's results (``{"model":
    "gpt-4o", "score": 0.93}`` per line, as many datasets and eval exports start); a downloaded spec there records to
    it. ``record:`` took any file starting ``{"model":`` for an earlier recording and emptied it at the first call.
    Defence: only a file starting as ``record:`` writes a line (``model``, then ``request``) is
    started afresh: a ``ConfigError``; the scores are whole."""
    _, dl = home
    scores = '{"model": "gpt-4o", "score": 0.93}\n{"model": "llama3", "score": 0.71}\n'
    (dl / "scores.jsonl").write_text(scores)
    spec = agent_spec(llm_config={"model": "record:test:offline", "path": "scores.jsonl"})
    agent = k.agent(str(_write(dl / "a.json", spec)))
    with pytest.raises(ConfigError, match="not a recording"):
        agent(question="hi")
    assert (dl / "scores.jsonl").read_text() == scores


# -- hard links, sockets and FIFOs at a spec's paths ---------------------------------------------------------------


@pytest.mark.parametrize("kind", ["checkpoints -wal", "memory -shm", "checkpoints -journal"])
def test_a_hard_link_planted_as_an_sqlite_side_file_is_refused(k, home, kind):
    """Attack (held): the download ships ``cp.db-wal`` (or a memory file's ``-shm``) as a hard link to
    ``~/.bashrc``: one regular file of the user's, not a link, which SQLite would write its log into (or map and
    overwrite). Defence: side files are checked like the database: more than one name is refused; ``.bashrc`` is
    whole."""
    user, dl = home
    what, side = kind.split()
    os.link(user / ".bashrc", dl / f"s.db{side}")
    with pytest.raises(ConfigError, match="hard links"):
        if what == "checkpoints":
            k.agent(_react(dl, checkpoints="s.db"))
        else:
            k.agent(str(_write(dl / "m.json", agent_spec(llm="test:offline", use_long_term_memory=True,
                                                       long_term_memory={"path": "s.db"}))))(question="hi")
    assert (user / ".bashrc").read_text() == BASHRC


def _write(path, data):
    path.write_text(json.dumps(data))
    return path


@pytest.mark.timeout(60)
def test_a_socket_as_the_checkpoint_file_is_refused(k, home):
    """Attack (held): ``checkpoints: "cp.db"`` where the download's ``cp.db`` is a Unix socket (``O_NONBLOCK`` does
    not help: ``open`` on a socket fails with ``ENXIO``, a bare ``OSError``). Defence: a ``ConfigError`` at load
    saying it is not a regular file."""
    _, dl = home
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(dl / "cp.db"))
        with pytest.raises(ConfigError, match="not a regular file"):
            k.agent(_react(dl, checkpoints="cp.db"))
    finally:
        sock.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("key", ["trajectory_path", "live_trajectory_path"])
def test_a_fifo_as_a_trajectory_file_does_not_hang_the_run(k, home, key):
    """Attack (held): ``t.jsonl`` shipped as a FIFO: a blocking open to append waits for a reader for ever.
    Defence: opened without blocking and refused as no regular file (``ConfigError``), the run never hangs."""
    from zagent.plugins.react import ReActLoop

    _, dl = home
    os.mkfifo(dl / "t.jsonl")
    agent = k.agent(_react(dl, llm="scripted:s", **{key: "t.jsonl"}))
    loop = ReActLoop(kernel=k, llm=k.llm("scripted:s", replies=["done"]), tools=["word_count"],
                     **{key: getattr(agent, key)})
    with pytest.raises(ConfigError, match="FIFO|not a regular file"):
        loop.run("hi")
    assert stat.S_ISFIFO(os.lstat(dl / "t.jsonl").st_mode)


def test_an_own_link_to_a_hard_linked_file_in_the_folder_is_refused(k, home):
    """Attack (held): ``t.jsonl -> runs/t.jsonl`` (a link in its own folder, followed for writes) where
    ``runs/t.jsonl`` is an empty hard link to an empty ``~/.ssh/authorized_keys``: runs would be appended there.
    Defence: the link's real file has two names: refused at load; the key file stays empty."""
    user, dl = home
    (user / "keys").write_text("")
    (dl / "runs").mkdir()
    os.link(user / "keys", dl / "runs" / "t.jsonl")
    os.symlink("runs/t.jsonl", dl / "t.jsonl")
    with pytest.raises(ConfigError, match="hard links"):
        k.agent(_react(dl, trajectory_path="t.jsonl"))
    assert (user / "keys").read_text() == ""


def test_a_windows_extended_path_stays_a_name_in_the_folder(k, home):
    """Attack (held on POSIX): ``trajectory_path: "\\\\?\\C:\\Users\\me\\t.jsonl"``, which Windows reads as an
    absolute path (refused there as outside the folder). On POSIX it is one file name: the runs go into that file
    inside the spec's folder, nowhere else."""
    from zagent.plugins.react import ReActLoop

    user, dl = home
    name = "\\\\?\\C:\\Users\\me\\t.jsonl"
    agent = k.agent(_react(dl, trajectory_path=name))
    assert agent.trajectory_path == str(dl / name)
    ReActLoop(kernel=k, llm=k.llm("scripted:s", replies=["done"]), tools=["word_count"],
              trajectory_path=agent.trajectory_path).run("hi")
    assert (dl / name).read_text().count("\n") == 1
    assert [p for p in user.rglob("*") if p.is_file() and dl not in p.parents] == [user / ".bashrc"]


def test_a_skill_backup_name_planted_as_a_dangling_link_makes_no_file_outside(home):
    """Attack (held): a shared skills pack ships ``deploy.v3.md -> ~/.config/autostart/x.desktop`` (missing): the
    writer keeps a person's edit of ``deploy.md`` (version 3) as ``deploy.v3.md`` first, and ``os.path.exists``
    calls a dangling link free. Defence: the backup is saved with ``write_atomic``, which replaces the link with a
    file in the folder; nothing is made where it pointed."""
    from zagent.plugins.skills import SkillWriter
    from zagent.plugins.skills.skill import Skill

    user, dl = home
    folder = dl / "skills"
    writer = SkillWriter(str(folder))
    writer.write(Skill(name="deploy", description="d", instructions="old", version=3))
    os.symlink(user / "autostart.desktop", folder / "deploy.v3.md")
    backup = writer.write(Skill(name="deploy", description="d", instructions="new", version=4), keep_previous=True)
    assert backup == str(folder / "deploy.v3.md") and not os.path.islink(backup)
    assert "old" in (folder / "deploy.v3.md").read_text()
    assert not (user / "autostart.desktop").exists()


# -- names that show as another name ------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["trajectory_path", "checkpoints"])
@pytest.mark.parametrize("value", ["t\u009b2J\u009b31m.EXT", "notes\u202efdp.EXT", "t\u0085x.EXT"],
                         ids=["c1-csi", "bidi-rlo", "c1-nel"])
def test_a_spec_path_with_a_c1_control_or_a_bidi_override_is_refused(k, home, key, value):
    """Attack (got through: the file was made): round fourteen refused C0 controls and DEL in a spec path, but not
    the C1 controls (U+0080-U+009F: ``\\u009b`` is the one-character CSI, a terminal escape wherever the name is
    printed raw) nor bidi overrides (``notes\\u202efdp.jsonl`` lists as ``noteslnosj.pdf``, another name
    than it is). Defence: refused at load like the C0 controls; nothing is made."""
    _, dl = home
    value = value.replace(".EXT", ".jsonl" if key == "trajectory_path" else ".db")
    with pytest.raises(ConfigError, match="control character"):
        k.agent(_react(dl, **{key: value}))
    assert sorted(os.listdir(dl)) == ["r.json"]


@pytest.mark.parametrize("version", ["-1", "1" + "0" * 300])
def test_a_skill_files_version_cannot_make_its_backup_a_skill_or_too_long_a_name(home, version):
    """Attack (got through): a shared skills pack's ``deploy.md`` says ``version: -1``; when the writer keeps a
    person's edit before an update, the backup ``deploy.v-1.md`` does not match the backup pattern (``.v<digits>``),
    so it is loaded as a skill file (warned about on every load); ``version: 1000...0`` (301 digits) made a backup
    name over 255 bytes and the update failed with a bare ``OSError``. Defence: a version outside 0 to 10**9 keeps
    the backup under version 0: ``deploy.v0.md``, a backup."""
    from zagent.plugins.skills import SkillWriter
    from zagent.plugins.skills.skill import Skill
    from zagent.plugins.skills.writer import is_skill_file

    _, dl = home
    writer = SkillWriter(str(dl / "skills"))
    writer.write(Skill(name="deploy", description="d", instructions="old"))
    path = dl / "skills" / "deploy.md"
    path.write_text(path.read_text().replace("version: 1\n", f"version: {version}\n"))
    backup = writer.write(Skill(name="deploy", description="d", instructions="new", version=2), keep_previous=True)
    assert os.path.basename(backup) == "deploy.v0.md" and not is_skill_file("deploy.v0.md")
    assert sorted(os.listdir(dl / "skills")) == ["deploy.md", "deploy.v0.md"]
