"""``zagent memory list|search|clear``: the handlers, called as the CLI would call them."""

import argparse

import pytest

from zagent import Message
from zagent.plugins.memory import cli


def args(**fields):
    base = {"db": None, "checkpoints": False, "namespace": None, "limit": 10, "agent": None, "session": None,
            "role": None, "json": False}
    return argparse.Namespace(**{**base, **fields})


@pytest.fixture
def filled(kernel, db_path):
    mem = kernel.memory("sqlite", path=db_path)
    mem.add("alice/s1", [Message.user("plan the garden"), Message.assistant("plant tomatoes")])
    mem.add("bob/s1", Message.user("fix the bike"))
    mem.close()
    return db_path


class FakeCLI:
    """The cli object's API (group/command returning argparse parsers), as plugins/cli.py provides it."""

    def __init__(self, parser=None):
        self.parser = parser or argparse.ArgumentParser(prog="zagent")
        self.sub = self.parser.add_subparsers(dest="cmd")

    def group(self, name, help=""):
        return FakeCLI(self.sub.add_parser(name, help=help))

    def command(self, name, handler, help=""):
        p = self.sub.add_parser(name, help=help)
        p.set_defaults(handler=handler)
        return p


def test_commands_register_under_memory(kernel, filled, capsys):
    """zagent memory search parses its arguments and runs the search handler."""
    fake = FakeCLI()
    cli.register_commands(fake, kernel)
    parsed = fake.parser.parse_args(["memory", "search", "garden", "--db", filled, "--limit", "1"])
    assert parsed.handler(parsed, kernel) == 0
    assert capsys.readouterr().out == "user: plan the garden\n"


def test_list_prints_namespaces_with_counts(kernel, filled, capsys):
    """memory list prints each namespace and how many messages it holds."""
    assert cli.list_command(args(db=filled), kernel) == 0
    assert capsys.readouterr().out.splitlines() == ["alice/s1\t2", "bob/s1\t1"]


def test_list_shows_checkpointed_runs_when_asked(kernel, filled, capsys):
    """memory list --checkpoints also lists runs saved in the same file."""
    kernel.memory("checkpoints", path=filled).save("run-7", 3, b"s", kind="react")
    assert cli.list_command(args(db=filled, checkpoints=True), kernel) == 0
    assert "run run-7\treact\tstep 3" in capsys.readouterr().out


def test_search_filters_by_agent(kernel, filled, capsys):
    """memory search --agent keeps only that agent's namespaces."""
    assert cli.search_command(args(db=filled, text="the", agent="bob"), kernel) == 0
    assert capsys.readouterr().out == "user: fix the bike\n"


def test_search_json_prints_messages(kernel, filled, capsys):
    """memory search --json prints one JSON message per line."""
    assert cli.search_command(args(db=filled, text="tomatoes", json=True), kernel) == 0
    assert capsys.readouterr().out == '{"role":"assistant","content":"plant tomatoes"}\n'


def test_clear_deletes_a_namespace(kernel, filled, capsys):
    """memory clear NS deletes that namespace and says how many messages went."""
    assert cli.clear_command(args(db=filled, namespaces=["alice/s1"]), kernel) == 0
    assert capsys.readouterr().out == "alice/s1: 2 message(s) deleted\n"
    assert kernel.memory("sqlite", path=filled).namespaces() == ["bob/s1"]


def test_missing_file_is_reported_not_created(kernel, tmp_path, capsys):
    """Pointing the commands at a missing file fails with exit 1 and creates nothing."""
    missing = tmp_path / "nope.db"
    assert cli.list_command(args(db=str(missing)), kernel) == 1
    assert "no memory file" in capsys.readouterr().err
    assert not missing.exists()


def test_bad_file_is_reported(kernel, tmp_path, capsys):
    """A non-SQLite file gives exit 1 and the store's explanation."""
    bad = tmp_path / "bad.db"
    bad.write_text("hello")
    assert cli.search_command(args(db=str(bad), text="x"), kernel) == 1
    assert "not an SQLite database" in capsys.readouterr().err


def test_default_file_comes_from_kernel_config_then_environment(kernel, tmp_path, monkeypatch):
    """Without --db: kernel.config['memory']['path'], else $ZAGENT_MEMORY_DB."""
    monkeypatch.setenv("ZAGENT_MEMORY_DB", str(tmp_path / "env.db"))
    assert cli.default_path(kernel) == str(tmp_path / "env.db")
    kernel.config["memory"] = {"path": str(tmp_path / "config.db")}
    assert cli.default_path(kernel) == str(tmp_path / "config.db")


def test_real_cli_runs_memory_commands(filled, capsys):
    """Through zagent's own CLI (plugins/cli.py), 'zagent memory list' lists the file."""
    main = pytest.importorskip("zagent.plugins.cli").main
    code = main(["memory", "list", "--db", filled])
    assert code in (0, None)
    assert "alice/s1\t2" in capsys.readouterr().out


@pytest.fixture
def runs(kernel, db_path):
    store = kernel.memory("checkpoints", path=db_path, keep_last=None)
    for step in range(1, 6):
        store.save("run-1", step, b"s", kind="react")
    store.save("wf-1", 1, b"w", kind="workflow")
    store.close()
    return db_path


def test_prune_keeps_the_newest_steps_of_each_run(kernel, runs, capsys):
    """memory prune --keep-last N keeps each run's newest N checkpoints and says how many went."""
    assert cli.prune_command(args(db=runs, keep_last=2, older_than=None, kind=None), kernel) == 0
    assert capsys.readouterr().out == f"3 checkpoint(s) deleted from {runs}\n"
    assert kernel.memory("checkpoints", path=runs).steps("run-1") == [4, 5]


def test_prune_parses_an_age_with_a_unit(kernel, runs, capsys):
    """memory prune --older-than 7d is parsed to seconds; fresh runs are kept."""
    fake = FakeCLI()
    cli.register_commands(fake, kernel)
    parsed = fake.parser.parse_args(["memory", "prune", "--db", runs, "--older-than", "7d", "--kind", "react"])
    assert parsed.older_than == 7 * 86400
    assert parsed.handler(parsed, kernel) == 0
    assert capsys.readouterr().out.startswith("0 checkpoint(s) deleted")


def test_prune_without_a_policy_is_a_usage_error(kernel, runs, capsys):
    """memory prune with neither --keep-last nor --older-than (or --keep-last 0) exits 2 and deletes nothing."""
    assert cli.prune_command(args(db=runs, keep_last=None, older_than=None, kind=None), kernel) == 2
    assert cli.prune_command(args(db=runs, keep_last=0, older_than=None, kind=None), kernel) == 2
    assert "--keep-last" in capsys.readouterr().err
    assert kernel.memory("checkpoints", path=runs).steps("run-1") == [1, 2, 3, 4, 5]
