"""Round fifteen (wave two), writes: a symlink shipped in a downloaded folder (a git checkout, an unpacked archive)
is the user's own, so zagent followed it for every write the user named there (``--out``, ``--html``,
``--trajectory``, ``--checkpoints``, a ``record:`` path given in code): the file the user named was not the file
written. Also Windows names that differ only by trailing dots or spaces (``data./cp.db`` is ``data/cp.db`` there).

Got through before this round's fixes (each test's docstring says how): a batch results file, an eval results file,
a checkpoint database and a trajectory named through a dangling link made a file where the link pointed (outside
the folder); ``logs show --html`` through a link emptied ``~/.bashrc`` and wrote the page into it; a trajectory or
``record:`` file linked to an empty file outside the folder got runs appended; a link through a folder link out
likewise; a link in the folder to a live database's ``-wal`` was truncated; side files planted beside a linked
database's target were not checked (an unclear SQLite error); the user's own link swapped for another user's
between the check and the open was followed; a spec's checkpoints ``data./cp.db`` or ``data /cp.db`` passed the
reserved-file check of a workflow's ``data/cp.db`` (Windows drops trailing dots and spaces); a link loop at
``--out`` was a bare ``OSError``. Held: a link to a file in its own folder (still followed); saves (a workflow
file, agents saved by ``save_all``) over a link out replace the link, never write through it; a generated
agent's write paths (the generator's model output) are dropped. Open (strict
xfail): a folder on the way of a path the user typed that is a link out (``--out sub/results.jsonl``).

Counted by attack (parametrized cases of one attack count once): 17 tried, 13 got through, 13 fixed; 3 held;
1 open.
"""

import json
import os

import pytest

from zagent import ConfigError

from .conftest import agent_spec, make_kernel, run_cli

PLUGINS = "offline,parsers,actions,react,memory,manager,workflow,groupchat,rails,cli,batch,evals,runlog"


@pytest.fixture
def k():
    kernel = make_kernel(plugins=("zagent.plugins.batch", "zagent.plugins.evals"))
    yield kernel
    kernel.close()


@pytest.fixture
def home(tmp_path):
    """``(home, download)``: the user's home with a ``.bashrc``, and a downloaded folder inside it."""
    (tmp_path / ".bashrc").write_text("export PATH=$HOME/bin:$PATH\n")
    (tmp_path / "download").mkdir()
    return tmp_path, tmp_path / "download"


def _loop(k, **paths):
    from zagent.plugins.react import ReActLoop

    return ReActLoop(kernel=k, llm=k.llm("scripted:s", replies=["done"]), tools=["word_count"], **paths)


# -- a dangling link: a new file made where it points -------------------------------------------------------------


def test_a_batch_out_file_that_is_a_dangling_link_makes_no_file_outside(k, home):
    """Attack (got through): the downloaded folder ships ``results.jsonl -> ../.ssh/authorized_keys`` (missing) and
    its README says ``zagent batch ... --out results.jsonl``; the link is the user's (git made it), so the results
    were written into a new ``~/.ssh/authorized_keys``. Defence: ``open_private`` refuses to create a file through a
    link (``ConfigError`` naming the target); nothing is made."""
    user, dl = home
    os.symlink(user / ".ssh-keys", dl / "results.jsonl")
    with pytest.raises(ConfigError, match="does not exist"):
        k.batch(agent_spec(llm="test:offline"), [{"question": "hi"}], out=str(dl / "results.jsonl"))
    assert not (user / ".ssh-keys").exists()


def test_an_eval_out_file_that_is_a_dangling_link_makes_no_file_outside(k, home):
    """Attack (got through): ``zagent eval cases.jsonl --out runs.jsonl`` in a downloaded benchmark whose
    ``runs.jsonl`` is a dangling link to ``~/.config/autostart/x.desktop``: the runs were written there. Defence:
    refused before any case runs; nothing is made."""
    from zagent.plugins.evals.run import evaluate

    user, dl = home
    (dl / "cases.jsonl").write_text(json.dumps({"id": "c1", "inputs": {"question": "q"}}) + "\n")
    os.symlink(user / "autostart.desktop", dl / "runs.jsonl")
    with pytest.raises(ConfigError, match="does not exist"):
        evaluate(k, agent_spec(llm="test:offline"), str(dl / "cases.jsonl"), out=str(dl / "runs.jsonl"))
    assert not (user / "autostart.desktop").exists()


def test_a_checkpoint_file_that_is_a_dangling_link_makes_no_database_outside(k, home):
    """Attack (got through): ``--checkpoints cp.db`` where the download ships ``cp.db -> ../notes.db`` (missing):
    ``touch_private`` let the link be, and SQLite, opening by name, made the database where the link pointed.
    Defence: a dangling link is refused before SQLite opens the path; nothing is made."""
    user, dl = home
    os.symlink(user / "notes.db", dl / "cp.db")
    with pytest.raises(ConfigError, match="does not exist"):
        k.memory("checkpoints", path=str(dl / "cp.db")).save("run-1", 1, b"state")
    assert not (user / "notes.db").exists()


def test_a_trajectory_file_that_is_a_dangling_link_makes_no_file_outside(k, home):
    """Attack (got through): ``zagent chat --trajectory t.jsonl`` with ``t.jsonl`` a dangling link out of the
    download: the runs were written into a new file there. Defence: refused; nothing is made."""
    user, dl = home
    os.symlink(user / "made.jsonl", dl / "t.jsonl")
    with pytest.raises(ConfigError, match="does not exist"):
        _loop(k, trajectory_path=str(dl / "t.jsonl")).run("hi")
    assert not (user / "made.jsonl").exists()


# -- a link to a file of the user's outside the folder ------------------------------------------------------------


def test_an_html_page_through_a_link_out_leaves_the_bashrc_whole(home):
    """Attack (got through): ``zagent logs show latest --html page.html`` in a download whose ``page.html`` links
    to ``~/.bashrc``: the truncating open followed the user's own link, emptied ``.bashrc`` and wrote the page into
    it. Defence: zagent writes through a link only to a file in the link's own folder: a ``ConfigError`` (exit 1,
    no traceback); ``.bashrc`` is unchanged."""
    user, dl = home
    db = dl / "logs.db"
    (dl / "agent.json").write_text(json.dumps(agent_spec()))
    env = {"ZAGENT_LOG": "1", "ZAGENT_LOG_DB": str(db)}
    ran = run_cli("run", str(dl / "agent.json"), "-i", "question=hi", "-q", cwd=dl, plugins=PLUGINS, env=env)
    assert ran.returncode == 0 and db.exists(), ran.stderr
    os.symlink(user / ".bashrc", dl / "page.html")
    done = run_cli("logs", "show", "latest", "--db", str(db), "--html", "page.html", cwd=dl, plugins=PLUGINS)
    assert done.returncode == 1 and "outside its folder" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert (user / ".bashrc").read_text() == "export PATH=$HOME/bin:$PATH\n"


def test_a_trajectory_linked_to_an_empty_file_outside_gets_no_runs(k, home):
    """Attack (got through): ``t.jsonl`` links to an empty file of the user's outside the download (an empty
    ``~/.ssh/authorized_keys``, a fresh config): round thirteen's check lets a trajectory go into an empty file, so
    runs were appended there. Defence: refused (the link points out of its folder); the file stays empty."""
    user, dl = home
    (user / "empty.conf").write_text("")
    os.symlink(user / "empty.conf", dl / "t.jsonl")
    with pytest.raises(ConfigError, match="outside its folder"):
        _loop(k, trajectory_path=str(dl / "t.jsonl")).run("hi")
    assert (user / "empty.conf").read_text() == ""


def test_a_recording_linked_to_an_empty_file_outside_gets_no_calls(k, home):
    """Attack (got through): an app records to ``run.jsonl`` in a checked-out folder where it is a link to an empty
    file outside: ``record:`` found it empty (a recording may start there) and appended the calls. Defence: refused
    at the first call; the file stays empty."""
    user, dl = home
    (user / "empty.log").write_text("")
    os.symlink(user / "empty.log", dl / "run.jsonl")
    llm = k.llm("record:test:offline", path=str(dl / "run.jsonl"))
    with pytest.raises(ConfigError, match="outside its folder"):
        llm.complete("hi")
    assert (user / "empty.log").read_text() == ""


@pytest.mark.parametrize("side", ["-journal", "-wal"])
def test_a_side_file_beside_a_linked_databases_target_is_refused_by_name(k, home, side):
    """Attack (got through as an unclear error): ``--checkpoints cp.db`` where the download's ``cp.db`` links to
    ``data/state.db`` and ``data/state.db-journal`` links to ``~/.bashrc``. SQLite keeps its side files next to the
    link's target, which ``touch_private`` did not look at: SQLite refused the link itself and the run failed with
    "unable to open database file". Defence: the side files of the target are checked too: a ``ConfigError``
    naming the planted link; ``.bashrc`` is whole."""
    user, dl = home
    (dl / "data").mkdir()
    (dl / "data" / "state.db").write_bytes(b"")
    os.symlink("data/state.db", dl / "cp.db")
    os.symlink(user / ".bashrc", dl / "data" / f"state.db{side}")
    with pytest.raises(ConfigError, match=f"state.db{side}.* is a symlink"):
        k.memory("checkpoints", path=str(dl / "cp.db")).save("run-1", 1, b"state")
    assert (user / ".bashrc").read_text() == "export PATH=$HOME/bin:$PATH\n"


def test_a_link_in_the_folder_to_a_live_databases_wal_is_not_truncated(home):
    """Attack (got through): ``logs show --html page.html`` where ``page.html`` links to ``app.db-wal`` beside it
    (in the folder, so the link rule lets it be): the side-file check read only the name ``page.html``, and the
    truncating open emptied the write-ahead log, losing the rows committed there. Defence: the link's target is
    checked as a side file too: a ``ConfigError``; the rows are still there."""
    import sqlite3

    from zagent.agentkit.privatefiles import open_private

    _, dl = home
    conn = sqlite3.connect(str(dl / "app.db"))
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("INSERT INTO t VALUES ('kept')")
    conn.commit()
    os.symlink("app.db-wal", dl / "page.html")
    try:
        with pytest.raises(ConfigError, match="-wal file of the SQLite database"):
            open_private(str(dl / "page.html"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        assert os.path.getsize(dl / "app.db-wal") > 0
        assert conn.execute("SELECT x FROM t").fetchall() == [("kept",)]
    finally:
        conn.close()


def test_a_link_through_a_folder_link_out_is_refused(k, home):
    """Attack (got through): ``results.jsonl -> keys/notes`` where the download's ``keys`` links to a folder of the
    user's: the link's own target name lies in the folder, the real file does not; results were appended to the
    user's file. Defence: the link is judged by its real path (every link on the way resolved): refused."""
    user, dl = home
    (user / "private").mkdir()
    (user / "private" / "notes").write_text("")
    os.symlink(user / "private", dl / "keys")
    os.symlink("keys/notes", dl / "results.jsonl")
    with pytest.raises(ConfigError, match="outside its folder"):
        k.batch(agent_spec(llm="test:offline"), [{"question": "hi"}], out=str(dl / "results.jsonl"))
    assert (user / "private" / "notes").read_text() == ""


# -- a race: the user's own link swapped after the check ----------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to plant another user's link")
@pytest.mark.parametrize("when", ["check_private", "_check_link_out"])
def test_an_own_link_swapped_for_another_users_link_after_the_check_is_not_followed(k, home, monkeypatch, when):
    """Attack (got through): in a folder others can write (group-shared, not sticky) the user's own link
    ``results.jsonl -> runs/2026.jsonl`` passes the check; another user swaps in their link to ``~/.bashrc`` before
    the open, which followed it (``.bashrc`` is the user's, one name: the descriptor check passed). Defence: the
    link is read again and its checked target opened itself with ``O_NOFOLLOW``: a swap before that is refused,
    one after changes nothing; ``.bashrc`` is whole."""
    from zagent.agentkit import privatefiles

    user, dl = home
    (dl / "runs").mkdir()
    (dl / "runs" / "2026.jsonl").write_text("")
    link = dl / "results.jsonl"
    os.symlink("runs/2026.jsonl", link)
    checked, calls = getattr(privatefiles, when), []

    def racing(p, *args, **kw):
        found = checked(p, *args, **kw)
        calls.append(p)  # _check_link_out runs in the check and again before the open: the race is after the last
        last = when == "check_private" or len(calls) == 2
        if last and os.fspath(p) == str(link) and os.readlink(link) == "runs/2026.jsonl":  # the other user wins
            os.unlink(link)
            os.symlink(user / ".bashrc", link)
            os.lchown(link, 12345, 12345)
        return found

    monkeypatch.setattr(privatefiles, when, racing)
    try:
        fd = privatefiles.open_private(str(link), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    except ConfigError as exc:
        assert when == "check_private" and "outside its folder" in str(exc)
    else:
        os.write(fd, b'{"id": "x"}\n')
        os.close(fd)
        assert (dl / "runs" / "2026.jsonl").read_text() == '{"id": "x"}\n'
    assert (user / ".bashrc").read_text() == "export PATH=$HOME/bin:$PATH\n"


# -- Windows: trailing dots and spaces -----------------------------------------------------------------------------


@pytest.mark.parametrize("alias", ["data./cp.db", "data /cp.db", "data. ./cp.db"])
def test_a_reserved_checkpoint_file_named_with_a_trailing_dot_or_space_is_refused(k, tmp_path, alias):
    """Attack (got through): a workflow keeps its run in ``proj/data/cp.db``; an inline agent's spec names
    ``data./cp.db``, which Windows opens as ``data/cp.db`` (it drops a name's trailing dots and spaces): the agent's
    saves would overwrite the workflow's. Defence: reserved files are compared without trailing dots and spaces too
    (``speckit.paths._folded``), so the spec is refused at load."""
    from zagent.speckit.paths import reserving, spec_file

    proj = tmp_path / "proj"
    (proj / "data").mkdir(parents=True)
    spec = proj / "r.json"
    spec.write_text(json.dumps({"type": "react", "name": "r", "tools": ["word_count"], "checkpoints": alias}))
    with reserving({str(proj / "data" / "cp.db"): "the checkpoint file of this workflow run"}), spec_file(str(spec)):
        with pytest.raises(ConfigError, match="the checkpoint file of this workflow run"):
            k.agent(str(spec))


# -- held --------------------------------------------------------------------------------------------------------


def test_a_link_to_a_file_in_its_own_folder_is_still_written_through(k, tmp_path):
    """Held (not an attack): ``results.jsonl -> runs/2026.jsonl`` in the user's own folder is followed as before;
    the results land in ``runs/2026.jsonl``."""
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "2026.jsonl").write_text("")
    os.symlink("runs/2026.jsonl", tmp_path / "results.jsonl")
    k.batch(agent_spec(llm="test:offline"), [{"question": "hi"}], out=str(tmp_path / "results.jsonl"))
    assert os.path.islink(tmp_path / "results.jsonl")
    assert (tmp_path / "runs" / "2026.jsonl").read_text().count("\n") == 1


def test_saves_over_a_link_out_replace_the_link_not_the_target(k, home):
    """Held: ``zagent workflow generate -o wf.json`` and ``AgentManager.save_all`` into a download whose
    ``wf.json`` and ``Evil.json`` link to ``~/.bashrc``: the saves replace the links with files (``write_atomic``);
    ``.bashrc`` is unchanged."""
    from zagent.plugins.manager import AgentManager

    from .conftest import two_node_workflow

    user, dl = home
    os.symlink(user / ".bashrc", dl / "wf.json")
    two_node_workflow().save(str(dl / "wf.json"))
    (dl / "agents").mkdir()
    os.symlink(user / ".bashrc", dl / "agents" / "Evil.json")
    manager = AgentManager(kernel=k)
    manager.add_agent(agent_spec(llm="test:offline"))
    manager.save_all(str(dl / "agents"))
    assert (user / ".bashrc").read_text() == "export PATH=$HOME/bin:$PATH\n"
    assert not os.path.islink(dl / "wf.json") and not os.path.islink(dl / "agents" / "Evil.json")


def test_a_link_loop_at_the_out_path_is_a_clear_error(k, tmp_path):
    """Attack (got through): ``results.jsonl -> results.jsonl`` (a loop) shipped in a download failed the batch with
    a bare ``OSError`` (too many levels of symbolic links). Defence: a ``ConfigError`` naming the loop."""
    os.symlink("results.jsonl", tmp_path / "results.jsonl")
    with pytest.raises(ConfigError, match="loop"):
        k.batch(agent_spec(llm="test:offline"), [{"question": "hi"}], out=str(tmp_path / "results.jsonl"))


def test_a_generated_agent_cannot_choose_where_it_writes():
    """Held: the workflow generator's model proposes an agent with ``trajectory_path``, ``checkpoints``,
    ``long_term_memory.path`` and a ``record:`` model with ``path`` pointing at ``~/.bashrc``: the repaired spec
    (what ``zagent workflow generate`` saves) keeps only the fixed keys, so none of them reaches a file."""
    from zagent.plugins.workflow.agents import repair_spec
    from zagent.plugins.workflow.graph import WorkFlowNode
    from zagent.types import Field

    node = WorkFlowNode(name="n", description="d", inputs=[Field(name="x")], outputs=[Field(name="y")])
    evil = {"name": "w", "prompt": "Do {x}", "trajectory_path": "/root/.bashrc", "checkpoints": "/root/.bashrc",
            "long_term_memory": {"path": "/root/.bashrc"}, "use_long_term_memory": True,
            "llm_config": {"model": "record:test:offline", "path": "/root/.bashrc"}}
    spec = repair_spec(evil, node, set())
    assert set(spec) == {"type", "name", "description", "prompt", "inputs", "outputs", "tools", "parse_mode"}
    assert ".bashrc" not in json.dumps(spec)


# -- open ----------------------------------------------------------------------------------------------------------


@pytest.mark.xfail(strict=True, reason="open: a folder on the way of a path the user typed may be a link (data -> "
                   "/mnt/data is common); only the last name is checked")
def test_a_folder_link_on_the_way_of_an_out_path_is_refused(k, home):
    """Attack (open): ``--out sub/results.jsonl`` where the download's ``sub`` links to a folder of the user's
    outside it: the results are written there. Defence wanted: refuse a folder link out of the named folder."""
    user, dl = home
    (user / "private").mkdir()
    os.symlink(user / "private", dl / "sub")
    with pytest.raises(ConfigError):
        k.batch(agent_spec(llm="test:offline"), [{"question": "hi"}], out=str(dl / "sub" / "results.jsonl"))
    assert not (user / "private" / "results.jsonl").exists()

