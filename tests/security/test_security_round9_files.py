"""Round nine: files and persisted state that were prepared by someone else -- SQLite stores shipped with a spec or a
skills folder, checkpoint rows and data files nested past what the decoder can read, YAML alias bombs, and SQLite
paths that climb after a symlinked folder.

Attacks tried and whether they got through before this round's fixes:

- a checkpoint store (``checkpoints: "cp.db"``) shipped in the spec's folder with a trigger of its own on the
  ``checkpoints`` table: GOT THROUGH (the trigger ran on every checkpoint zagent wrote; one with a recursive query
  never ends) -- fixed: a database holding a trigger, view or virtual table zagent's schema does not make (or
  makes with other SQL) is refused untouched (``ForeignDatabase``, ``plugins/memory/schema.foreign_objects``)
- the same store with ``checkpoints`` turned into a view over another table: GOT THROUGH (restores read the view;
  a recursive view hangs the restore) -- fixed with it
- a memory database (``long_term_memory.path``) whose own trigger ``messages_ai`` was rewritten: GOT THROUGH (ran
  on every memory written) -- fixed with it
- a checkpoint row edited to 65 MiB (SQLite takes up to 1 GB a row, and a patch chain many rows): GOT THROUGH (read
  whole into memory, then decoded) -- fixed: a restore counts the bytes of the rows it would read first and refuses
  more than 64 MiB (``MAX_DATA_BYTES``, as a run state file), naming the step
- a skills folder shipped with an ``.index.sqlite`` holding a trigger: GOT THROUGH -- fixed: ``SkillIndex`` refuses
  an index with SQL it does not make
- a session, skills index or run-log path climbing after a symlinked folder (``link/../made/s.db``): GOT THROUGH
  (``abspath`` read ``..`` lexically: a stray 0700 folder ``made`` beside the link, and SQLite then failed) --
  fixed: ``privatefiles.private_parent`` reads the path as the open will
- an eval cases line nested 200,000 deep: GOT THROUGH (``RecursionError`` out of ``read_cases``, a traceback) --
  fixed: a ``ConfigError`` naming the line; likewise results, trajectory, report and MCP configuration files
- a workflow checkpoint edited to a state of the wrong shape: GOT THROUGH (msgspec's ``ValidationError`` escaped
  the restore) -- fixed: a ``CheckpointError`` naming the step; likewise a group chat's
- a YAML spec with an alias bomb (10 levels of 10 aliases): held (``ConfigError``: more than 1,000,000 values)
- a YAML spec whose alias refers to itself: held (``ConfigError``: nested deeper than 100 levels)
- ``Kernel.batch(..., out=)`` naming the inputs file itself: held (its lines are not batch results; untouched)
- a skills pack whose header names the skill ``../escaped``: held (the name must agree with the file's)
"""

import os
import sqlite3
import stat


import pytest

from zagent import ConfigError
from zagent.errors import CheckpointError, ZagentError

from .conftest import agent_spec, make_kernel, spec_folder, workflow_stopped_at_b

DEEP = "[" * 200_000 + "]" * 200_000  # past the C recursion limit of every Python (3.13 decodes 5,000)


@pytest.fixture
def k():
    kernel = make_kernel(plugins=["zagent.plugins.batch", "zagent.plugins.evals", "zagent.plugins.skills"])
    yield kernel
    kernel.close()


def zagent_store(k, path):
    """A checkpoint store zagent made at ``path`` with one checkpoint (the file an attacker starts from)."""
    store = k.memory("checkpoints", path=str(path))
    store.save("old", 0, {"a": 1})
    store.close()


def run_sql(path, *statements):
    conn = sqlite3.connect(path)
    try:
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


def rows(path, table):
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"SELECT * FROM {table}").fetchall()
    finally:
        conn.close()


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


# -- SQLite files prepared by someone else ---------------------------------------------------------------------


def test_a_shipped_checkpoint_store_with_its_own_trigger_is_refused(k, tmp_path):
    """checkpoints 'cp.db' shipped with a trigger on the checkpoints table (here it logs; a recursive query in it
    would never end): the agent's store is refused with a ZagentError naming the trigger; it never fires."""
    folder, path = spec_folder(tmp_path, type="react", name="r", tools=["word_count"], checkpoints="cp.db")
    zagent_store(k, folder / "cp.db")
    run_sql(folder / "cp.db", "CREATE TABLE spy(x)",
            "CREATE TRIGGER evil AFTER INSERT ON checkpoints BEGIN INSERT INTO spy VALUES (new.run_id); END")
    with pytest.raises(ZagentError, match="trigger 'evil'.*Delete it or point the store at a new file"):
        agent = k.agent(str(path))
        agent.llm = k.llm("scripted:r", replies=["done"])
        agent.chat("hi", use_react=True)
    assert rows(folder / "cp.db", "spy") == []


def test_a_checkpoints_table_turned_into_a_view_is_refused(k, tmp_path):
    """cp.db whose 'checkpoints' is a view over another table (a recursive view would hang every restore):
    refused when opened, naming the view."""
    zagent_store(k, tmp_path / "cp.db")
    run_sql(tmp_path / "cp.db", "ALTER TABLE checkpoints RENAME TO real_cp",
            "CREATE VIEW checkpoints AS SELECT * FROM real_cp")
    with pytest.raises(ZagentError, match="view 'checkpoints'"):
        k.memory("checkpoints", path=str(tmp_path / "cp.db"))


def test_a_memory_database_whose_own_trigger_was_rewritten_is_refused(k, tmp_path):
    """long_term_memory.path 'mem.db' shipped with zagent's trigger messages_ai rewritten (same name, other SQL):
    refused when the agent's memory opens; the rewritten trigger never runs."""
    folder, path = spec_folder(tmp_path, **agent_spec(use_long_term_memory=True,
                                                       long_term_memory={"path": "mem.db"}))
    zagent_store(k, folder / "mem.db")
    run_sql(folder / "mem.db", "CREATE TABLE spy(x)", "DROP TRIGGER messages_ai",
            "CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN INSERT INTO spy VALUES (new.content); END")
    with pytest.raises(ZagentError, match="trigger 'messages_ai'"):
        k.agent(str(path))(question="hi")
    assert rows(folder / "mem.db", "spy") == []


def test_a_store_zagent_made_still_opens(k, tmp_path):
    """The check refuses only SQL zagent does not make: its own memory and checkpoint file reopens and works."""
    zagent_store(k, tmp_path / "cp.db")
    store = k.memory("checkpoints", path=str(tmp_path / "cp.db"))
    try:
        assert store.latest("old")[0] == 0
    finally:
        store.close()


@pytest.mark.parametrize("read", ["latest", "load", "chain"])
def test_a_checkpoint_row_edited_to_a_huge_state_is_not_read(k, tmp_path, read):
    """A store whose latest row was edited to a 65 MiB state: latest/load/chain raise a ZagentError naming the step
    and the limit, before the row is read."""
    zagent_store(k, tmp_path / "cp.db")
    run_sql(tmp_path / "cp.db", f"UPDATE checkpoints SET state = zeroblob({65 * 2**20})")
    store = k.memory("checkpoints", path=str(tmp_path / "cp.db"))
    try:
        with pytest.raises(ZagentError, match="checkpoint 0 of run 'old' is 65 MiB.*more than the 64 MiB"):
            store.load("old", 0) if read == "load" else getattr(store, read)("old")
    finally:
        store.close()


def test_a_shipped_skills_index_with_a_trigger_is_refused(tmp_path):
    """A skills folder brought with a project, its '.index.sqlite' holding a trigger: a ConfigError naming it."""
    from zagent.plugins.skills.index import SkillIndex

    index = tmp_path / "skills" / ".index.sqlite"
    index.parent.mkdir()
    SkillIndex(str(index))._conn.close()
    run_sql(index, "CREATE TRIGGER t AFTER INSERT ON stats BEGIN DELETE FROM transitions; END")
    with pytest.raises(ConfigError, match="trigger 't'.*left untouched"):
        SkillIndex(str(index))


@pytest.mark.parametrize("what", ["session", "skills index", "run log"])
def test_an_sqlite_path_climbing_after_a_symlinked_folder_makes_no_stray_folder(tmp_path, what):
    """'link/../made/x.db' with link -> x/y: the file lies in x/made (as SQLite opens it), 0600 in a 0700 folder;
    no folder 'made' appears beside the link."""
    (tmp_path / "x" / "y").mkdir(parents=True)
    os.symlink("x/y", tmp_path / "link")
    path = str(tmp_path / "link" / ".." / "made" / "x.db")
    if what == "session":
        from zagent.plugins.memory.session import SQLiteSession

        SQLiteSession("s1", path).get_items()
    elif what == "skills index":
        from zagent.plugins.skills.index import SkillIndex

        SkillIndex(path)._conn.close()
    else:
        from zagent.plugins.runlog.store import RunLogStore

        RunLogStore.open(path).close()
    assert not (tmp_path / "made").exists()
    assert mode(tmp_path / "x" / "made") == 0o700 and mode(tmp_path / "x" / "made" / "x.db") == 0o600


# -- data nested past what the decoder reads ---------------------------------------------------------------------


def test_an_eval_cases_line_nested_too_deep_is_a_config_error(tmp_path, default_recursion_limit):
    """A cases file line nested 200,000 deep: a ConfigError naming the line, not a RecursionError traceback."""
    from zagent.plugins.evals.run import read_cases

    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"question": %s}\n' % DEEP)
    with pytest.raises(ConfigError, match="line 1"):
        read_cases(str(cases))


def test_an_eval_report_nested_too_deep_is_a_config_error(tmp_path, default_recursion_limit):
    """A report.json nested 200,000 deep: a ConfigError saying it is not an eval report."""
    from zagent.plugins.evals.run import EvalReport

    report = tmp_path / "report.json"
    report.write_text('{"agent": "a", "cases": [], "totals": {"x": %s}}' % DEEP)
    with pytest.raises(ConfigError, match="not an eval report"):
        EvalReport.load(str(report))


def test_a_trajectory_line_nested_too_deep_is_a_value_error(tmp_path, default_recursion_limit):
    """A trajectory file line nested 200,000 deep: the reader's ValueError naming the line."""
    from zagent.plugins.react.trajectory import read_trajectories

    path = tmp_path / "t.jsonl"
    path.write_text(DEEP + "\n")
    with pytest.raises(ValueError, match="t.jsonl:1 is not a trajectory line"):
        list(read_trajectories(str(path)))


@pytest.mark.parametrize("state", [b'{"values": 5}', b'{"values": {"x": %s}}' % DEEP.encode()])
def test_a_workflow_checkpoint_of_the_wrong_shape_is_a_checkpoint_error(k, tmp_path, state):
    """An unsigned workflow store whose checkpoint was edited to another shape (or nested too deep): a
    CheckpointError naming the step, not a msgspec or recursion error."""
    db = k.memory("checkpoints", path=str(tmp_path / "cp.db"))
    ex, graph = workflow_stopped_at_b(k, db)
    run_sql(tmp_path / "cp.db", "DELETE FROM checkpoints WHERE step < (SELECT max(step) FROM checkpoints)")
    conn = sqlite3.connect(tmp_path / "cp.db")
    conn.execute("UPDATE checkpoints SET state = ?, patch = 0", (state,))
    conn.commit()
    conn.close()
    with pytest.raises(CheckpointError, match="is not a workflow run state"):
        ex.run(graph, run_id="wf")


# -- YAML and data files -------------------------------------------------------------------------------------


def test_a_yaml_alias_bomb_is_refused(tmp_path):
    """Ten levels of ten aliases (10^10 values once expanded): a ConfigError about the count, read in well under
    the values it would expand to (no timing asserted: a hang would fail the suite)."""
    pytest.importorskip("yaml")
    from zagent.speckit import load_spec_file

    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match="more than 1,000,000 values"):
        load_spec_file(str(path))


def test_a_yaml_alias_referring_to_itself_is_refused(tmp_path):
    """'a: &a [1, *a]' (a list that holds itself): a ConfigError about the depth, no endless walk."""
    pytest.importorskip("yaml")
    from zagent.speckit import load_spec_file

    path = tmp_path / "loop.yaml"
    path.write_text("a: &a [1, *a]\n")
    with pytest.raises(ConfigError, match="nested deeper than"):
        load_spec_file(str(path))


def test_a_batch_out_naming_its_own_inputs_file_leaves_it_whole(k, tmp_path):
    """out= the inputs file itself (a slip on the command line): refused before any item runs (its lines are not
    results); the inputs are untouched and never read back as results or inputs."""
    inputs = tmp_path / "in.jsonl"
    text = '{"question": "a"}\n{"question": "b"}\n'
    inputs.write_text(text)
    spec = agent_spec(llm_config={"model": "test:offline"})
    with pytest.raises(ConfigError, match="not a batch result"):
        k.batch(spec, str(inputs), out=str(inputs))
    assert inputs.read_text() == text


def test_a_skills_pack_naming_a_skill_out_of_the_folder_writes_nothing_outside(tmp_path):
    """A shared pack's skill whose header says name '../escaped': refused (the name must match the file);
    nothing is written beside the skills folder."""
    from zagent.plugins.skills.registry import SkillRegistry

    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "a.md").write_text('---\nname: "../escaped"\ndescription: x\n---\nDo things\n')
    with pytest.raises(ConfigError, match="make them agree"):
        SkillRegistry(str(tmp_path / "skills")).import_folder(str(pack))
    assert sorted(os.listdir(tmp_path)) == ["pack", "skills"]
