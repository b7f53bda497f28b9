"""Round fourteen (wave two), writes: the file names zagent writes that were not spec paths -- agent names
``AgentManager.save_all`` makes files of, skill names the curating model proposes or a shared pack brings -- and
device names round thirteen's check missed (``COM¹``, ``LPT0``, ``ＣＯＮ``, ``nul:x``), a data stream of another
file (``r.json:log.jsonl``), writes into a live SQLite database's side files, links shipped as side files, and
reserved files or zagent's data named in another case or Unicode form.

Got through before this round's fixes (each test's docstring says how): a device name with a superscript digit,
a 0, look-alike letters or a ``:`` after it, as a spec path's file or folder (trajectory, live trajectory,
checkpoints, memory, ``record:`` path); a stream name in a spec path; an agent named ``CON``, ``nul.notes``,
``COM¹`` or ``ＣＯＮ`` saved by ``save_all``; a skill the curating model named ``CON``/``nul``/``Com1``; a skill
named ``aux`` registered or imported from a pack; a save (agent spec, eval report), ``logs show --html``, a batch
results file or a trajectory written over a database's ``-wal``/``-shm``/``-journal`` (an empty journal too); a
side file shipped as a link (failed with SQLite's "unable to open database file", or was deleted silently); a
caller's checkpoint store named ``CP.db`` or in decomposed form; zagent's data named ``.Local/Share/ZAGENT``.
Held: a planted link at a save's target (swapped in after the check too), a failed save's temporary file swapped
for a link, a backup name planted as a dangling link, a stored agent file linking out. The predictable
temporary name of a save: got through, fixed (a random name).

Counted by attack (parametrized cases of one attack count once): 26 tried, 22 got through, 22 fixed;
4 held.
"""

import json
import os
import sqlite3

import pytest

from zagent import ConfigError

from .conftest import agent_spec, make_kernel


@pytest.fixture
def k():
    kernel = make_kernel()
    yield kernel
    kernel.close()


def _react_file(folder, **over):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "r.json"
    path.write_text(json.dumps({"type": "react", "name": "r", "tools": ["word_count"], **over}))
    return str(path)


# -- device names round thirteen's check missed -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["COM¹.jsonl", "lpt³.jsonl", "Com².x.jsonl"])
def test_a_spec_path_named_like_a_superscript_port_is_refused(k, tmp_path, name):
    """Attack (got through): a spec's ``trajectory_path`` is ``COM¹.jsonl``. Windows reads the superscript digits
    ¹ ² ³ as digits in ``COM#``/``LPT#``, so the name opens a serial or printer port wherever it lies; round
    thirteen's check knew only ``COM1``-``COM9``. Defence: refused at load, naming the device."""
    with pytest.raises(ConfigError, match="Windows device"):
        k.agent(_react_file(tmp_path / "proj", trajectory_path=name))


@pytest.mark.parametrize("name", ["COM0.jsonl", "lpt0.jsonl"])
def test_a_spec_path_named_com0_or_lpt0_is_refused(k, tmp_path, name):
    """Attack (got through): ``COM0``/``LPT0`` are reserved device names too (Microsoft's list of names not to
    use), missed by the ``COM1``-``COM9`` set. Defence: refused at load."""
    with pytest.raises(ConfigError, match="Windows device"):
        k.agent(_react_file(tmp_path / "proj", trajectory_path=name))


def test_a_superscript_port_as_a_folder_on_the_way_is_refused(k, tmp_path):
    """Attack (got through): the device name is a folder on the way (``data/LPT³/mem.db`` as the agent's memory
    file): on Windows the folder cannot be made and the path opens the port. Defence: refused at load."""
    folder = tmp_path / "proj"
    folder.mkdir()
    path = folder / "a.json"
    path.write_text(json.dumps(agent_spec(use_long_term_memory=True,
                                          long_term_memory={"path": "data/LPT³/mem.db"})))
    with pytest.raises(ConfigError, match="Windows device"):
        k.agent(str(path))


@pytest.mark.parametrize("key,value", [("live_trajectory_path", "Lpt².jsonl"), ("checkpoints", "COM³.db"),
                                       ("trajectory_path", "runs/com¹/t.jsonl")])
def test_every_react_path_key_refuses_a_superscript_port(k, tmp_path, key, value):
    """Attack (got through; the superscript attack on the other keys): a ReAct file's live trajectory, checkpoint
    store or a folder of its trajectory named as a superscript port. Defence: each refused at load."""
    with pytest.raises(ConfigError, match="Windows device"):
        k.agent(_react_file(tmp_path / "proj", **{key: value}))


def test_a_recording_path_named_like_a_superscript_port_is_refused(k, tmp_path):
    """Attack (got through): a declared agent records its model's exchanges (``record:``) to ``COM¹.jsonl``.
    Defence: refused at load, as every path a spec names."""
    folder = tmp_path / "proj"
    folder.mkdir()
    path = folder / "a.json"
    path.write_text(json.dumps(agent_spec(llm_config={"model": "record:test:offline", "path": "COM¹.jsonl"})))
    with pytest.raises(ConfigError, match="Windows device"):
        k.agent(str(path))


@pytest.mark.parametrize("name", ["ＣＯＮ.jsonl", "COM₁.jsonl", "ｎｕｌ.jsonl"])
def test_a_spec_path_naming_a_device_in_look_alike_letters_is_refused(k, tmp_path, name):
    """Attack (got through): a device name in full-width letters or subscript digits, which Unicode normalisation
    (NFKC, as tools that copy the project may apply) makes ``CON``/``COM1``/``NUL``. Defence: names are compared
    NFKC-normalised and case-folded; refused at load."""
    with pytest.raises(ConfigError, match="Windows device"):
        k.agent(_react_file(tmp_path / "proj", trajectory_path=name))


@pytest.mark.parametrize("name", ["r.json:log.jsonl", "notes.txt:x.jsonl", "sub/cp.db:t.jsonl"])
def test_a_spec_path_naming_a_stream_of_another_file_is_refused(k, tmp_path, name):
    """Attack (got through): ``trajectory_path: "r.json:log.jsonl"`` is a new file on POSIX, but on Windows (NTFS)
    the part after ``:`` is a data stream of ``r.json``: the run's records went into a hidden stream of the spec
    file itself (or of the user's notes, or of a checkpoint store), past round thirteen's check of the spec's own
    file. Defence: a ``:`` in the part of a spec path below its folder is refused on every platform."""
    with pytest.raises(ConfigError, match="data stream"):
        k.agent(_react_file(tmp_path / "proj", trajectory_path=name))


def test_ordinary_names_next_to_device_names_still_load(k, tmp_path):
    """Not an attack: ``console.jsonl``, ``com10.jsonl``, ``nulls.jsonl`` and ``auxiliary/t.jsonl`` are ordinary
    names and load."""
    for name in ("console.jsonl", "com10.jsonl", "nulls.jsonl", "auxiliary/t.jsonl", "lpt-1.jsonl"):
        k.agent(_react_file(tmp_path / "proj", trajectory_path=name))


# -- agent names the manager makes files of ---------------------------------------------------------------------


def _manager(k, tmp_path):
    from zagent.plugins.manager import AgentManager

    return AgentManager(kernel=k, storage=str(tmp_path / "agents"))


@pytest.mark.parametrize("name", ["CON", "nul", "Aux", "prn"])
def test_save_all_refuses_an_agent_named_like_a_windows_device(k, tmp_path, name):
    """Attack (got through): a downloaded agent file is named ``CON``; the app adds it to its manager and persists
    its agents (``save_all()``): ``CON.json`` on Windows is the console (the save waits on it or is lost), and the
    folder cannot be copied there. Defence: a ``ConfigError`` naming the device before anything is written."""
    manager = _manager(k, tmp_path)
    manager.add_agent(agent_spec(name=name), llm="scripted:x")
    with pytest.raises(ConfigError, match="Windows device"):
        manager.save_all()
    assert not (tmp_path / "agents" / f"{name}.json").exists()


@pytest.mark.parametrize("name", ["nul.notes", "COM¹", "lpt0", "Con.v2", "ＣＯＮ"])
def test_save_all_refuses_a_device_name_hidden_by_a_dot_or_a_superscript(k, tmp_path, name):
    """Attack (got through): the agent's name is a device with a suffix (``nul.notes`` -> ``nul.notes.json``,
    Windows ignores what follows the first dot), a superscript port or ``lpt0``. Defence: refused as above."""
    manager = _manager(k, tmp_path)
    manager.add_agent(agent_spec(name=name), llm="scripted:x")
    with pytest.raises(ConfigError, match="Windows device"):
        manager.save_all()
    assert not os.listdir(tmp_path / "agents") if (tmp_path / "agents").exists() else True


def test_save_all_still_saves_names_that_only_start_like_a_device(k, tmp_path):
    """Not an attack: ``Console``, ``nullable`` and ``COM10`` are ordinary agent names and are saved."""
    manager = _manager(k, tmp_path)
    for name in ("Console", "nullable", "COM10"):
        manager.add_agent(agent_spec(name=name), llm="scripted:x")
    assert sorted(manager.save_all()) == ["COM10", "Console", "nullable"]


def test_save_all_does_not_write_through_a_planted_link(k, tmp_path):
    """Attack (held): the storage folder (unpacked from an archive) holds ``Evil.json`` as a link of the user's own
    to their notes; the app adds an agent ``Evil`` and saves: the stored agent is loaded first and its link out of
    the folder refused, so nothing is written through it; the notes are untouched."""
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "Evil.json").symlink_to(notes)
    manager = _manager(k, tmp_path)
    try:
        manager.add_agent(agent_spec(), llm="scripted:x")  # named like the stored (linked) agent: loaded first
        manager.save_all()
    except ConfigError as exc:
        assert "links out of its folder" in str(exc)  # refused: the link is not read, nor written through
    assert notes.read_text() == "my notes\n"


# -- skill names the curating model proposes --------------------------------------------------------------------


def _curate(tmp_path, name):
    from zagent.plugins.skills.runtime import Skills

    traj = {"id": "run-1", "agent": "shop", "status": "completed", "final": "2", "questions": [],
            "conversations": [{"from": "human", "value": "count a b"}, {"from": "gpt", "value": "2"}],
            "steps": [{"step": 1, "action": "use_tool", "tool": "word_count"}, {"step": 2, "action": "direct_response"}]}
    (tmp_path / "t.jsonl").write_text(json.dumps(traj) + "\n")

    def reply(request):
        if "review a recorded run" in request.messages[-1].content:
            return json.dumps({"goal_reached": True, "steps": 2, "errors": [], "reusable": True, "summary": "ok"})
        return json.dumps({"name": name, "description": "Count words", "when_to_use": "counting",
                           "instructions": "call word_count with the text", "tool_sequence": ["word_count"]})

    k = make_kernel(plugins=["zagent.plugins.skills"], config={"skills": {"folder": str(tmp_path / "skills")}})
    skills = Skills.open(k)
    try:
        skills.curator(llm=k.llm("scripted:curator", replies=[reply] * 4)).curate_folder(str(tmp_path / "t.jsonl"))
    finally:
        skills.close()
        k.close()
    return sorted(f for f in os.listdir(tmp_path / "skills") if f.endswith(".md"))


@pytest.mark.parametrize("name", ["CON", "nul", "Com1", "LPT¹"])
def test_a_curated_skill_is_never_named_like_a_windows_device(tmp_path, name):
    """Attack (got through): the curating model (its input is a run's tool output) names the skill ``CON``: the
    curator wrote ``con.md`` into the user's skills folder, the console on Windows (a synced skills folder breaks
    there). Defence: the file name made of a model's name is never a device name (``con-skill.md``)."""
    written = _curate(tmp_path, name)
    assert len(written) == 1
    stem = written[0].split(".")[0].upper().replace("¹", "1")
    assert stem not in {"CON", "NUL", "COM1", "LPT1"}


@pytest.mark.parametrize("name", ["aux", "com3"])
def test_a_skill_named_like_a_device_is_refused_by_the_registry(tmp_path, name):
    """Attack (got through): a skill draft named ``aux`` handed to the registry (``register``) was written as
    ``aux.md``. Defence: ``check_name``, which every skill name passes, refuses a device name."""
    from zagent.plugins.skills import SkillRegistry

    registry = SkillRegistry(str(tmp_path / "skills")).load()
    try:
        with pytest.raises(ConfigError, match="Windows device"):
            registry.register({"name": name, "description": "d", "when_to_use": "w", "instructions": "i"})
    finally:
        if hasattr(registry, "close"):
            registry.close()
    assert not (tmp_path / "skills" / f"{name}.md").exists()


def test_importing_a_shared_skill_pack_holding_a_device_name_is_refused(tmp_path):
    """Attack (got through): a shared skill pack (downloaded) holds ``aux.md``; ``import_folder`` copied it into the
    user's skills folder as ``aux.md``, the AUX device on Windows (the user's synced folder breaks there).
    Defence: refused, naming the device; nothing is written into the user's folder."""
    from zagent.plugins.skills import SkillRegistry
    from zagent.plugins.skills import markdown
    from zagent.plugins.skills.skill import Skill

    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "aux.md").write_text(markdown.render(Skill(name="aux", description="d", when_to_use="w",
                                                       instructions="i")))
    registry = SkillRegistry(str(tmp_path / "skills")).load()
    with pytest.raises(ConfigError, match="Windows device"):
        registry.import_folder(str(pack))
    assert not (tmp_path / "skills" / "aux.md").exists()


# -- saves over another kind of file ----------------------------------------------------------------------------


def _live_database(path, mode):
    """An open SQLite database at ``path`` with a committed row still in its side files (WAL mode: ``-wal`` and
    ``-shm``; PERSIST: ``-journal``)."""
    conn = sqlite3.connect(str(path))
    conn.execute(f"PRAGMA journal_mode = {mode}")
    conn.execute("CREATE TABLE runs (x)")
    conn.execute("INSERT INTO runs VALUES ('precious')")
    conn.commit()
    return conn


@pytest.mark.parametrize("side,mode", [("-wal", "WAL"), ("-shm", "WAL"), ("-journal", "PERSIST")])
def test_a_save_over_a_databases_side_file_is_refused(k, tmp_path, side, mode):
    """Attack (got through): ``agent.save("logs.db-wal")`` (or ``zagent eval --report logs.db-wal``, a name
    completed by the shell) replaced the run log's write-ahead log with JSON: rows committed but not yet checkpointed
    were lost, and SQLite later read the save as its log. Round thirteen refuses the database itself. Defence: a
    ``ConfigError`` naming the database; the side file is left as it was."""
    conn = _live_database(tmp_path / "logs.db", mode)
    try:
        side_file = tmp_path / f"logs.db{side}"
        assert side_file.exists()
        before = side_file.read_bytes()
        with pytest.raises(ConfigError, match="SQLite"):
            k.agent(agent_spec(llm="test:offline")).save(str(side_file))
        assert side_file.read_bytes() == before
    finally:
        conn.close()


def test_an_eval_report_over_a_databases_wal_is_refused(tmp_path):
    """Attack (got through): the same through ``EvalReport.save`` (``zagent eval --report``)."""
    from zagent.plugins.evals.run import EvalReport

    conn = _live_database(tmp_path / "memory.db", "WAL")
    try:
        before = (tmp_path / "memory.db-wal").read_bytes()
        with pytest.raises(ConfigError, match="SQLite"):
            EvalReport(agent="a", cases=[]).save(str(tmp_path / "memory.db-wal"))
        assert (tmp_path / "memory.db-wal").read_bytes() == before
    finally:
        conn.close()


def test_a_batch_results_file_naming_an_empty_journal_is_refused(tmp_path):
    """Attack (got through): ``zagent batch ... --out app.db-journal`` (completion's slip) where the database keeps
    its journal truncated to 0 bytes (``journal_mode=TRUNCATE``): the empty file passed as a new results file and
    every result was appended into the database's rollback journal. Defence: ``open_private``, which every file
    zagent writes passes, refuses a side file of an SQLite database beside it; nothing is appended."""
    from zagent.plugins.batch.files import ResultsFile

    conn = _live_database(tmp_path / "app.db", "TRUNCATE")
    try:
        journal = tmp_path / "app.db-journal"
        assert journal.exists() and journal.stat().st_size == 0
        with pytest.raises(ConfigError, match="SQLite"):
            ResultsFile(str(journal)).close()
        assert journal.stat().st_size == 0
    finally:
        conn.close()


def test_a_trajectory_naming_an_empty_journal_is_refused(k, tmp_path):
    """Attack (got through): the same for a run's trajectory (``zagent chat --trajectory app.db-journal``, or the
    app's ``trajectory_path``): an empty journal passed as an empty trajectory file. Defence: refused, nothing
    appended."""
    from zagent.plugins.react.loop import ReActLoop

    conn = _live_database(tmp_path / "app.db", "TRUNCATE")
    try:
        journal = tmp_path / "app.db-journal"
        loop = ReActLoop(kernel=k, llm=k.llm("scripted:m", replies=["done"]), tools=[],
                         trajectory_path=str(journal))
        with pytest.raises(ConfigError, match="SQLite"):
            loop.run("go")
        assert journal.stat().st_size == 0
    finally:
        conn.close()


@pytest.mark.parametrize("name", ["logs.db-WAL", "logs.db-Journal"])
def test_a_save_over_a_side_file_named_in_another_case_is_refused(k, tmp_path, name):
    """Attack (a variant of the one above, got through with it; not counted apart): ``logs.db-WAL`` is the run log's
    ``-wal`` on macOS and Windows (case-insensitive file systems). Defence: side-file names are matched case-folded."""
    conn = _live_database(tmp_path / "logs.db", "WAL")
    try:
        with pytest.raises(ConfigError, match="SQLite"):
            k.agent(agent_spec(llm="test:offline")).save(str(tmp_path / name))
    finally:
        conn.close()


def test_a_save_to_a_name_ending_like_a_side_file_without_a_database_is_allowed(k, tmp_path):
    """Not an attack: ``notes-wal`` with no database beside it is an ordinary file name and is saved."""
    k.agent(agent_spec(llm="test:offline")).save(str(tmp_path / "notes-wal"))
    assert json.loads((tmp_path / "notes-wal").read_text())["name"] == "Evil"


# -- links SQLite would write through ---------------------------------------------------------------------------


@pytest.mark.parametrize("side", ["-wal", "-shm", "-journal"])
@pytest.mark.parametrize("key", ["checkpoints", "memory"])
def test_a_side_file_shipped_as_a_link_is_refused_saying_so(k, tmp_path, side, key):
    """Attack (got through as an unclear failure): a downloaded project ships ``x.db-shm`` (``-wal``, ``-journal``)
    as a link (the user's own, made by unpacking) to a file of the user's; its spec keeps checkpoints or memory in
    ``x.db``. SQLite wrote nothing through it (round eight), but a ``-shm`` link failed the run with SQLite's
    "unable to open database file; check the path", naming neither the link nor the fix, and a ``-wal`` link was
    silently deleted. Defence: a ``ConfigError`` naming the link before SQLite opens the database; the user's file
    unchanged."""
    victim = tmp_path / "victim.txt"
    victim.write_text("DO NOT TOUCH\n")
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / f"x.db{side}").symlink_to(victim)
    if key == "checkpoints":
        spec = _react_file(folder, checkpoints="x.db", llm="scripted:x")
    else:
        (folder / "a.json").write_text(json.dumps(agent_spec(llm="test:offline", use_long_term_memory=True,
                                                             long_term_memory={"path": "x.db"})))
        spec = str(folder / "a.json")
    with pytest.raises(ConfigError, match=f"x.db{side}' is a symlink"):
        agent = k.agent(spec)  # a checkpoint store opens at load, a memory file at the first run
        agent(question="hi") if key == "memory" else agent.loop().run("count a b")
    assert victim.read_text() == "DO NOT TOUCH\n"
    assert (folder / f"x.db{side}").is_symlink()


def test_a_skill_backup_name_planted_as_a_dangling_link_creates_nothing_outside(tmp_path):
    """Attack (held): the skills folder (synced from elsewhere) holds ``count.v1.md`` as a dangling link to
    ``../outside.md``; a person's edit is backed up before the curator's update: the link is replaced, nothing is
    made outside the folder."""
    from zagent.plugins.skills.skill import Skill
    from zagent.plugins.skills.writer import SkillWriter

    folder = tmp_path / "skills"
    writer = SkillWriter(str(folder))
    writer.write(Skill(name="count", description="d", when_to_use="w", instructions="i"))
    (folder / "count.v1.md").symlink_to(tmp_path / "outside.md")
    writer.write(Skill(name="count", description="d2", when_to_use="w", instructions="i2"), keep_previous=True)
    assert not (tmp_path / "outside.md").exists()


def test_logs_show_html_over_a_databases_wal_is_refused(tmp_path, capsys):
    """Attack (got through): ``zagent logs show latest --html memory.db-wal`` (a slip of the shell's completion) wrote
    the page over the memory database's write-ahead log: its rows not yet checkpointed were lost. Round nine refused
    only a file that starts like a database. Defence: a ``ConfigError`` naming the database; the log untouched."""
    from zagent import Kernel
    from zagent.plugins.cli import main
    from zagent.plugins.react.loop import ReActLoop

    plugins = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
               "zagent.plugins.runlog", "zagent.plugins.cli"]
    log = str(tmp_path / "logs.db")
    with Kernel(plugins, entry_points=False, strict=True, config={"log": log}) as k:
        ReActLoop(kernel=k, llm=k.llm("scripted:m", replies=["done"]), tools=[]).run("go")
    conn = _live_database(tmp_path / "memory.db", "WAL")
    try:
        wal = tmp_path / "memory.db-wal"
        before = wal.read_bytes()
        with Kernel(plugins, entry_points=False, strict=True) as k:
            try:
                code = main(["logs", "show", "latest", "--db", log, "--html", str(wal)], kernel=k)
            except ConfigError as exc:
                code, err = 1, str(exc)
            else:
                err = capsys.readouterr().err
        assert code != 0 and "SQLite" in err
        assert wal.read_bytes() == before
    finally:
        conn.close()


@pytest.mark.parametrize("name", ["nul:x.jsonl", "CON :log.jsonl"])
def test_a_spec_path_naming_a_device_before_a_colon_is_refused(k, tmp_path, name):
    """Attack (got through): ``nul:x.jsonl`` is an ordinary name on POSIX; Windows ends a device name at ``:`` as
    at ``.`` (``NUL:`` is the device), so the trajectory went to the null device there. Defence: refused at load."""
    with pytest.raises(ConfigError, match="Windows device"):
        k.agent(_react_file(tmp_path / "proj", trajectory_path=name))


def test_a_save_renames_onto_a_link_swapped_in_after_its_check_not_through_it(k, tmp_path, monkeypatch):
    """Attack (held): after ``write_atomic`` checked ``agent.json`` (a regular file) and made its temporary file,
    the file is swapped for a link to the user's notes; the rename replaces the link itself, the notes keep their
    text."""
    from zagent.agentkit import files

    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    target = tmp_path / "agent.json"
    target.write_text("{}\n")
    made = files._create

    def swapping(tmp, dest):
        fd = made(tmp, dest)
        os.unlink(dest)
        os.symlink(notes, dest)
        return fd

    monkeypatch.setattr(files, "_create", swapping)
    k.agent(agent_spec(llm="test:offline")).save(str(target))
    assert notes.read_text() == "my notes\n"
    assert not target.is_symlink() and json.loads(target.read_text())["name"] == "Evil"


def test_a_failed_save_removes_its_temporary_file_not_a_link_swapped_in(k, tmp_path, monkeypatch):
    """Attack (held): the save's temporary file is swapped for a link to the user's notes and the write then fails
    (a full disk): the clean-up removes the link, never the notes."""
    from zagent.agentkit import files

    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    made = files._create

    def swapping(tmp, dest):
        fd = made(tmp, dest)
        os.unlink(tmp)
        os.symlink(notes, tmp)
        return fd

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files, "_create", swapping)
    monkeypatch.setattr(files.os, "fsync", full)
    with pytest.raises(OSError):
        k.agent(agent_spec(llm="test:offline")).save(str(tmp_path / "agent.json"))
    assert notes.read_text() == "my notes\n"
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_a_planted_temporary_name_does_not_lose_the_save(k, tmp_path):
    """Attack (got through): another user in a shared folder (``zagent eval --report /tmp/r.json``) plants a link
    at the save's predictable temporary name (the process id is public): the save failed with a bare
    ``FileExistsError`` after the whole run, and the report was lost. Defence: the temporary name is random; the
    save succeeds, the link untouched."""
    import threading

    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    (tmp_path / f"r.json.{os.getpid()}.{threading.get_ident()}.tmp").symlink_to(notes)
    k.agent(agent_spec(llm="test:offline")).save(str(tmp_path / "r.json"))
    assert json.loads((tmp_path / "r.json").read_text())["name"] == "Evil"
    assert notes.read_text() == "my notes\n"


# -- names alike but for case or normalisation ----------------------------------------------------------------------


@pytest.mark.parametrize("alias", ["CP.db", "Cp.DB", "cafe\u0301.db"])
def test_the_callers_store_named_in_another_case_is_refused(k, tmp_path, alias):
    """Attack (got through): a nested agent names its caller's checkpoint store ``CP.db`` (or the decomposed
    ``café.db`` for a store named in composed form). On macOS and Windows (case- and normalisation-insensitive file
    systems) that is the caller's own store; the reserved files were compared by their exact real path, so the
    nested agent's steps went into it and the caller's run no longer resumed. Defence: reserved files are
    compared case-folded and NFC-normalised too (refused on every platform)."""
    own = "caf\u00e9.db" if "\u0301" in alias else "cp.db"
    inner = {"type": "react", "name": "n", "description": "nested", "tools": ["word_count"], "checkpoints": alias}
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"type": "react", "name": "r", "tools": ["word_count"], "agents": [inner],
                                "checkpoints": own}))
    with pytest.raises(ConfigError, match="checkpoint file of agent 'r'"):
        k.agent(str(path))


def test_a_spec_in_the_home_folder_naming_zagents_data_in_another_case_is_refused(k, tmp_path, monkeypatch):
    """Attack (got through): a ReAct file downloaded into the home folder keeps its trajectory in
    ``.Local/Share/ZAGENT/runs.jsonl``. On macOS and Windows that is zagent's own data of the user (round eleven
    refuses ``.local/share/zagent``), compared by exact path, so the spec wrote among the user's recordings and
    memory. Defence: zagent's data is matched case-folded and NFC-normalised (refused on every platform)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / ".local" / "share"))
    (tmp_path / ".local" / "share" / "zagent").mkdir(parents=True)
    with pytest.raises(ConfigError, match="zagent's own data"):
        k.agent(_react_file(tmp_path, trajectory_path=".Local/Share/ZAGENT/runs.jsonl"))
