"""Round seven: files zagent writes, creates, truncates or replaces where a spec, a shared folder, another user
or a race picks what is at the path.

Attacks tried and whether they got through before this round's fixes:

- an eval report saved (``EvalReport.save``, ``zagent eval --report``) over another user's symlink to a 0666
  file: GOT THROUGH (``write_atomic`` gave the new report the mode of the link's target: world-readable and
  writable) -- fixed: only a regular file of the user's (through the user's own link) lends its mode, else 0600
- a saved agent spec (``CustomizeAgent.save``) or generated workflow (``WorkFlowGraph.save``, ``zagent workflow
  generate -o``) over a 0666 file another user planted in a shared folder: GOT THROUGH (same: the user's file
  became 0666) -- fixed with it
- a skills folder made on first use and its ``.index.sqlite``: GOT THROUGH (``os.makedirs`` and SQLite made them
  0755 and 0644) -- fixed: ``private_folder`` (0700) and ``touch_private`` (0600), as every zagent file
- ``.index.sqlite`` planted as another user's symlink in a shared skills folder (to the user's own SQLite file):
  GOT THROUGH (SQLite followed it and added the index tables to the user's database) -- fixed: ``SkillIndex``
  opens through ``touch_private`` (a ``ConfigError`` naming the link)
- a batch results file (``--out``) that is a hard link to a user's one-line file without a newline (an API token
  file): GOT THROUGH (the "line cut by a kill" repair ran ``os.truncate`` on the path: the token file emptied,
  before the write check refused the link) -- fixed: the cut goes through ``open_private`` (one name, the user's,
  the very file read) and ``ftruncate``
- a symlink another user plants between ``open_private``'s check (path missing) and its open: GOT THROUGH (a
  second ``islink`` look turned ``O_NOFOLLOW`` off, so the planted link to ``~/.bashrc`` was appended to) --
  fixed: only a link the check itself saw as the user's own is followed
- a hard link to the user's file swapped in between the check and a truncating open (``record:``'s first
  write, ``zagent logs show --html``, the answer key): GOT THROUGH (``O_TRUNC`` emptied the file before the
  descriptor check refused it) -- fixed: ``open_private`` truncates with ``ftruncate`` after the check
- ``cp.db-wal`` planted as another user's 0666 regular file next to a checkpoint file the user names: GOT
  THROUGH (SQLite wrote every checkpoint into the planted file) -- fixed: ``touch_private`` checks SQLite's
  side files (``-wal``, ``-shm``, ``-journal``) like the database
- ``long_term_memory`` of an agent file naming a plugin backend's path option (``index_path``) outside the
  spec's folder: GOT THROUGH (only ``path`` was checked; every other key went to the backend as it was) --
  fixed: every key named like a path (``path``, ``*_path``, ``*_file``, ``*_dir``, ``*_folder``, ``*_db``) goes
  through ``check_spec_path``, as in ``llm_config``
- an agent named ``"helper\\n"`` saved by ``AgentManager.save_all``: GOT THROUGH (``^[\\w.-]+$`` lets a newline
  after the name through: a file ``helper\\n.json``) -- fixed: ``fullmatch``
- a skill named ``"greet\\n"``: GOT THROUGH (the same ``$``: a file ``greet\\n.md``) -- fixed: ``fullmatch``
- ``trajectory_path`` with Windows separators (``..\\..\\home\\.bashrc.jsonl``): held (on POSIX one file name
  inside the spec's folder)
- ``trajectory_path`` naming a dangling symlink in the spec's folder (as a git checkout brings) pointing out of
  it: held (``realpath`` follows a dangling link too)
- ``long_term_memory.path`` naming a hard link in the spec's folder to the user's memory database: held
  (``touch_private`` refuses a file with two names)
- ``write_atomic``'s temporary name planted as another user's symlink to the user's file: held (created
  ``O_EXCL | O_NOFOLLOW``: the save fails, nothing written through)
"""

import json
import os
import sqlite3
import stat

import pytest

from zagent import ConfigError

from .conftest import agent_spec, make_kernel

root_only = pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                               reason="needs root to plant another user's file or link")


@pytest.fixture
def k():
    kernel = make_kernel(plugins=["zagent.plugins.memory", "zagent.plugins.batch", "zagent.plugins.evals",
                                  "zagent.plugins.skills"])
    yield kernel
    kernel.close()


def victim(tmp_path, text="export PATH=/usr/bin\n", name=".bashrc"):
    """A file the user cares about, outside any spec folder."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    target = home / name
    target.write_text(text)
    return target


def users_db(path):
    """An SQLite file of the user's with one table ``mine``."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE mine(x)")
    conn.commit()
    conn.close()
    return path


def tables(path):
    conn = sqlite3.connect(path)
    try:
        return sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    finally:
        conn.close()


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


# -- write_atomic: the mode of what is at the target ----------------------------------------------------------


@root_only
def test_an_eval_report_saved_over_a_foreign_symlink_gets_no_mode_from_its_target(k, tmp_path):
    """``EvalReport.save`` onto another user's symlink to a 0666 file: the link's target is untouched and the
    report is a regular file, mode 0600."""
    from zagent.plugins.evals import EvalReport

    target = victim(tmp_path, "theirs\n", "open.txt")
    os.chmod(target, 0o666)
    shared = tmp_path / "shared"
    shared.mkdir()
    link = shared / "report.json"
    link.symlink_to(target)
    os.lchown(link, 12345, 12345)
    EvalReport(agent="a", cases=[]).save(link)
    assert target.read_text() == "theirs\n"
    assert stat.S_ISREG(os.lstat(link).st_mode) and mode(link) == 0o600


@root_only
@pytest.mark.parametrize("what", ["agent", "workflow"])
def test_a_spec_saved_over_another_users_0666_file_is_the_users_alone(k, tmp_path, what):
    """A saved agent spec / generated workflow replacing a 0666 file another user planted: 0600, the user's."""
    planted = tmp_path / "out.json"
    planted.write_text("{}")
    os.chown(planted, 12345, 12345)
    os.chmod(planted, 0o666)
    if what == "agent":
        k.agent(agent_spec(llm="test:offline")).save(planted)
    else:
        from .conftest import two_node_workflow

        two_node_workflow().save(planted)
    st = os.lstat(planted)
    assert st.st_uid == os.getuid() and mode(planted) == 0o600


def test_an_own_files_mode_is_still_kept_by_a_save(k, tmp_path):
    """The user's own 0644 agent file, saved again, stays 0644 (docs: the mode of the file it replaces)."""
    path = tmp_path / "agent.json"
    path.write_text("{}")
    os.chmod(path, 0o644)
    k.agent(agent_spec(llm="test:offline")).save(path)
    assert mode(path) == 0o644


@root_only
def test_a_planted_temporary_name_of_a_save_is_not_written_through(k, tmp_path, monkeypatch):
    """``write_atomic``'s temporary name (random since round fourteen) planted anyway, as another user's symlink
    to ~/.bashrc: the save fails, the file is untouched."""
    target = victim(tmp_path)
    path = tmp_path / "agent.json"
    monkeypatch.setattr(os, "urandom", lambda n: b"\x01" * n)  # the attacker guessed the name
    tmp = tmp_path / f"agent.json.call_{'01' * 12}.tmp"
    tmp.symlink_to(target)
    os.lchown(tmp, 12345, 12345)
    with pytest.raises(OSError):
        k.agent(agent_spec(llm="test:offline")).save(path)
    assert target.read_text() == "export PATH=/usr/bin\n"
    assert not path.exists()


# -- skills folder and index ----------------------------------------------------------------------------------


def test_a_new_skills_folder_and_its_index_are_the_users_alone(k, tmp_path):
    """A skills folder made on first use (and its parent): 0700; its ``.index.sqlite`` and skill files 0600."""
    from zagent.plugins.skills import SkillRegistry

    folder = tmp_path / "data" / "skills"
    old = os.umask(0o022)
    try:
        registry = SkillRegistry(str(folder)).load()
        registry.register({"name": "greet", "description": "d", "instructions": "say hi"})
        registry.close()
    finally:
        os.umask(old)
    assert mode(folder) == 0o700 and mode(folder.parent) == 0o700
    assert mode(folder / ".index.sqlite") == 0o600 and mode(folder / "greet.md") == 0o600


@root_only
def test_a_planted_index_symlink_in_a_shared_skills_folder_is_not_followed(k, tmp_path):
    """``.index.sqlite`` as another user's link to the user's SQLite file: a ConfigError naming the link; the
    user's database gets no table."""
    from zagent.plugins.skills import SkillRegistry

    db = users_db(tmp_path / "mine.db")
    folder = tmp_path / "shared-skills"
    folder.mkdir()
    link = folder / ".index.sqlite"
    link.symlink_to(db)
    os.lchown(link, 12345, 12345)
    with pytest.raises(ConfigError, match="another user"):
        SkillRegistry(str(folder)).load()
    assert tables(db) == ["mine"]


def test_a_skill_name_ending_in_a_newline_is_refused(k, tmp_path):
    """A skill named ``"greet\\n"``: a ConfigError naming the rule; no file written."""
    from zagent.plugins.skills import SkillRegistry

    registry = SkillRegistry(str(tmp_path / "skills"), index=False)
    with pytest.raises(ConfigError, match="invalid skill name"):
        registry.register({"name": "greet\n", "description": "d", "instructions": "say hi"})
    assert not (tmp_path / "skills").exists() or os.listdir(tmp_path / "skills") == []


# -- batch results file ---------------------------------------------------------------------------------------


def test_a_batch_results_file_hard_linked_to_a_users_file_is_not_cut(k, tmp_path):
    """``--out`` a hard link to a one-line token file with no newline: a ConfigError; the token is whole."""
    token = victim(tmp_path, "sk-THE-USERS-TOKEN", "token")
    out = tmp_path / "out.jsonl"
    os.link(token, out)
    with pytest.raises(ConfigError, match="hard links"):
        k.batch(agent_spec(llm="test:offline"), [{"question": "hi"}], out=str(out))
    assert token.read_text() == "sk-THE-USERS-TOKEN"


# -- open_private: what changes between the check and the open ------------------------------------------------


@root_only
def test_a_symlink_planted_between_the_check_and_the_open_is_not_followed(k, tmp_path, monkeypatch):
    """A trajectory file missing at the check, then planted as another user's link to ~/.bashrc before the
    open: a ConfigError saying it became a symlink; ~/.bashrc unchanged."""
    from zagent.agentkit import privatefiles
    from zagent.plugins.react.state import ReActState
    from zagent.plugins.react.trajectory import append_trajectory

    target = victim(tmp_path)
    path = tmp_path / "t.jsonl"
    checked = privatefiles.check_private

    def racing(p, **kw):
        found = checked(p, **kw)
        if os.fspath(p) == str(path) and not os.path.lexists(path):  # the attacker wins the race
            path.symlink_to(target)
            os.lchown(path, 12345, 12345)
        return found

    monkeypatch.setattr(privatefiles, "check_private", racing)
    with pytest.raises(ConfigError, match="became a symlink"):
        append_trajectory(str(path), ReActState(run_id="r", agent="a", task="t"))
    assert target.read_text() == "export PATH=/usr/bin\n"


def test_a_hard_link_swapped_in_before_a_truncating_open_leaves_the_file_whole(k, tmp_path, monkeypatch):
    """``record:``'s first write (``O_TRUNC``) with the path swapped for a hard link to ~/.bashrc after the
    check: a ConfigError; ~/.bashrc is whole."""
    from zagent.agentkit import privatefiles

    target = victim(tmp_path)
    path = tmp_path / "run.jsonl"
    checked = privatefiles.check_private

    def racing(p, **kw):
        found = checked(p, **kw)
        if os.fspath(p) == str(path):  # the attacker swaps the file for another name of the user's
            if os.path.lexists(path):
                path.unlink()
            os.link(target, path)
        return found

    monkeypatch.setattr(privatefiles, "check_private", racing)
    with pytest.raises(ConfigError, match="one name"):
        k.llm("record:test:offline", path=str(path)).complete("hi")
    assert target.read_text() == "export PATH=/usr/bin\n"


# -- SQLite files ---------------------------------------------------------------------------------------------


@root_only
def test_a_planted_wal_file_of_another_user_gets_no_checkpoint(k, tmp_path):
    """``cp.db-wal`` planted (0666, another user's, kept open by them) next to the checkpoint file the user
    names: a ConfigError naming it; nothing of the run reaches the planted file."""
    shared = tmp_path / "shared"
    shared.mkdir()
    wal = shared / "cp.db-wal"
    wal.write_bytes(b"")
    os.chown(wal, 12345, 12345)
    os.chmod(wal, 0o666)
    spy = os.open(wal, os.O_RDONLY)  # the other user keeps reading it
    try:
        with pytest.raises(ConfigError, match="cp.db-wal"):
            store = k.memory("checkpoints", path=str(shared / "cp.db"))
            store.save("run-1", 1, b"THE-USERS-CHECKPOINT-SECRET")
        os.lseek(spy, 0, os.SEEK_SET)
        assert b"SECRET" not in os.read(spy, 1 << 20)
    finally:
        os.close(spy)


def test_a_long_term_memory_path_hard_linked_to_the_users_memory_db_is_refused(k, tmp_path):
    """``long_term_memory.path`` 'mem.db' in the spec's folder, a hard link to the user's memory database: a
    ConfigError naming the hard links; the user's database gets no table."""
    (tmp_path / "home").mkdir()
    db = users_db(tmp_path / "home" / "memory.db")
    specs = tmp_path / "specs"
    specs.mkdir()
    os.link(db, specs / "mem.db")
    spec = specs / "qa.json"
    spec.write_text(json.dumps(agent_spec(llm="test:offline", use_long_term_memory=True,
                                          long_term_memory={"name": "sqlite", "path": "mem.db"})))
    with pytest.raises(ConfigError, match="hard links"):
        k.agent(str(spec))(question="hi")
    assert tables(db) == ["mine"]


# -- paths a spec names ---------------------------------------------------------------------------------------


class NotesBackend:
    """An app's plugin: memory backend ``notes`` whose ``index_path`` option names a file it writes."""

    def __init__(self):
        self.made = []

    def zagent_register_memory(self, register):
        def make(**options):
            self.made.append(options)
            from zagent.plugins.memory.inprocess import InProcessMemory

            return InProcessMemory()

        register("notes", make)


def test_a_path_named_long_term_memory_option_of_a_plugin_backend_is_checked(k, tmp_path):
    """``long_term_memory: {"name": "notes", "index_path": "<outside>"}`` in an agent file: a ConfigError
    naming the key at load; the backend never gets the path."""
    backend = NotesBackend()
    k.add_plugin(backend, name="notes-backend")
    outside = victim(tmp_path, "", "index.db")
    specs = tmp_path / "specs"
    specs.mkdir()
    spec = specs / "qa.json"
    spec.write_text(json.dumps(agent_spec(llm="test:offline", use_long_term_memory=True,
                                          long_term_memory={"name": "notes", "index_path": str(outside)})))
    with pytest.raises(ConfigError, match="long_term_memory.index_path"):
        k.agent(str(spec))(question="hi")
    assert backend.made == []


def test_a_path_named_long_term_memory_option_inside_the_folder_lies_next_to_the_spec(k, tmp_path,
                                                                                        monkeypatch):
    """``index_path: "notes.db"`` relative, in an agent file in A (cwd B): the backend gets A/notes.db."""
    backend = NotesBackend()
    k.add_plugin(backend, name="notes-backend")
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    monkeypatch.chdir(b)
    spec = a / "qa.json"
    spec.write_text(json.dumps(agent_spec(llm="test:offline", use_long_term_memory=True,
                                          long_term_memory={"name": "notes", "index_path": "notes.db"})))
    k.agent(str(spec))(question="hi")
    assert backend.made == [{"index_path": str(a / "notes.db")}]


def test_an_agent_name_ending_in_a_newline_is_not_a_saved_file_name(k, tmp_path):
    """``AgentManager.save_all`` of an agent named ``"helper\\n"``: a ConfigError; no file written."""
    from zagent.plugins.manager import AgentManager

    manager = AgentManager(kernel=k)
    manager.add_agent(k.agent(agent_spec(name="helper\n", llm="test:offline")))
    folder = tmp_path / "agents"
    with pytest.raises(ConfigError, match="cannot be a file name"):
        manager.save_all(str(folder))
    assert not folder.exists() or os.listdir(folder) == []


def test_a_windows_style_climb_in_a_trajectory_path_stays_in_the_spec_folder(k, tmp_path):
    """``trajectory_path: "..\\\\..\\\\home\\\\.bashrc.jsonl"`` in a spec file: on POSIX one file name in the spec's
    folder, nothing written elsewhere."""
    if os.sep == "\\":
        pytest.skip("a POSIX file name")
    specs = tmp_path / "specs"
    specs.mkdir()
    spec = specs / "r.json"
    spec.write_text(json.dumps({"type": "react", "name": "r", "tools": ["word_count"],
                                "trajectory_path": "..\\..\\home\\.bashrc.jsonl"}))
    agent = k.agent(str(spec))
    assert os.path.dirname(os.path.realpath(agent.trajectory_path)) == str(specs)
    agent.llm = k.llm("scripted:r", replies=["done"])
    agent.chat("hi", use_react=True)
    assert sorted(os.listdir(specs)) == ["..\\..\\home\\.bashrc.jsonl", "r.json"]
    assert sorted(os.listdir(tmp_path)) == ["specs"]


def test_a_dangling_symlink_in_the_spec_folder_pointing_out_is_refused(k, tmp_path):
    """``trajectory_path: "t.jsonl"``, a dangling link in the spec's folder to a new file in ~: refused as
    outside the folder; nothing created."""
    home = tmp_path / "home"
    home.mkdir()
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "t.jsonl").symlink_to(home / ".history.jsonl")
    spec = specs / "r.json"
    spec.write_text(json.dumps({"type": "react", "name": "r", "tools": ["word_count"],
                                "trajectory_path": "t.jsonl"}))
    with pytest.raises(ConfigError, match="outside"):
        k.agent(str(spec))
    assert os.listdir(home) == []
