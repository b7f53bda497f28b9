"""The ``zagent`` command line: built-in commands, plugin sub-commands, broken plugins, exit codes."""

import json
import subprocess
import sys
import types

import pytest

from zagent import ConfigError, Kernel, tool
from zagent.plugins import cli


def commands_plugin(name="cmds", register=None):
    mod = types.ModuleType(name)
    mod.zagent_register_commands = register
    return mod


def run(kernel, *argv):
    return cli.main(list(argv), kernel=kernel)


def test_plugins_lists_name_distribution_version_hooks(capsys):
    """``zagent plugins`` prints one row per plugin with its hooks."""
    k = Kernel([commands_plugin(register=lambda cli: None)], entry_points=False)
    assert run(k, "plugins") == 0
    out = capsys.readouterr().out
    assert "NAME" in out and "cmds" in out and "register_commands" in out


def test_plugins_shows_problems(capsys):
    """``zagent plugins`` shows plugins that failed to load, with their error."""
    k = Kernel(["zt_cli_missing_module"], entry_points=False)
    run(k, "plugins")
    assert "zt_cli_missing_module" in capsys.readouterr().out.split("problem(s):")[1]


def test_plugins_json(capsys):
    """``zagent plugins --json`` prints machine-readable plugins and problems."""
    k = Kernel([commands_plugin(register=lambda cli: None)], entry_points=False)
    run(k, "plugins", "--json")
    data = json.loads(capsys.readouterr().out)
    assert data["plugins"][0]["name"] == "cmds" and data["problems"] == []


def test_tools_lists_toolset_and_availability(capsys):
    """``zagent tools`` prints name, toolset, availability and description."""
    k = Kernel(entry_points=False)
    k.add_tool(tool(lambda: 1, name="offline_tool", toolset="demo", available=lambda: False,
                    description="Needs a key.\nMore."))
    assert run(k, "tools") == 0
    row = [line for line in capsys.readouterr().out.splitlines() if "offline_tool" in line][0]
    assert row.split()[:3] == ["offline_tool", "demo", "no"] and "Needs a key." in row


def test_plugin_command_runs_with_arguments(capsys):
    """A plugin's ``cli.command`` adds a sub-command; its handler gets args and kernel; its code is the exit code."""
    def register(cli):
        p = cli.command("hello", lambda args, kernel: print(f"hi {args.name}") or 3, help="say hi")
        p.add_argument("name")
    k = Kernel([commands_plugin(register=register)], entry_points=False)
    assert run(k, "hello", "ann") == 3
    assert capsys.readouterr().out == "hi ann\n"


def test_groups_are_shared_between_plugins(capsys):
    """Two plugins adding commands to the same group share it (``zagent agent show`` / ``agent list``)."""
    a = commands_plugin("a", lambda cli: cli.group("agent", help="agents").command("show", lambda a, k: print("show")))
    b = commands_plugin("b", lambda cli: cli.group("agent").command("list", lambda a, k: print("list")))
    k = Kernel([a, b], entry_points=False)
    assert run(k, "agent", "show") == 0 and run(k, "agent", "list") == 0
    assert capsys.readouterr().out == "show\nlist\n"


def test_nested_groups(capsys):
    """Groups nest: ``cli.group("a").group("b").command("c", ...)`` runs as ``zagent a b c``."""
    k = Kernel([commands_plugin(register=lambda cli: cli.group("a").group("b").command(
        "c", lambda args, kernel: print("deep")))], entry_points=False)
    assert run(k, "a", "b", "c") == 0 and capsys.readouterr().out == "deep\n"


def test_group_without_command_prints_its_help(capsys):
    """A group called without a sub-command prints its help and exits 2."""
    k = Kernel([commands_plugin(register=lambda cli: cli.group("memory", help="memory things").command(
        "list", lambda a, k: 0, help="list memories"))], entry_points=False)
    assert run(k, "memory") == 2
    assert "list memories" in capsys.readouterr().err


def test_command_clash_names_both_plugins(capsys):
    """A second plugin taking a command name is refused with a warning naming both; the first keeps it."""
    first = commands_plugin("first", lambda cli: cli.command("go", lambda a, k: print("first")))
    second = commands_plugin("second", lambda cli: cli.command("go", lambda a, k: print("second")))
    k = Kernel([first, second], entry_points=False)
    run(k, "go")
    out, err = capsys.readouterr()
    assert "'first'" in err and "'second'" in err and out.strip() in ("first", "second")


def test_broken_plugin_does_not_break_help(capsys):
    """A plugin whose ``zagent_register_commands`` raises is reported; ``--help`` still works."""
    def broken(cli):
        raise RuntimeError("half-installed")
    k = Kernel([commands_plugin("broken", broken)], entry_points=False)
    assert run(k, "--help") == 0
    out, err = capsys.readouterr()
    assert "plugins" in out and "half-installed" in err


def test_zagent_error_in_handler_exits_1(capsys):
    """A ``ZagentError`` from a handler prints ``zagent: error: ...`` and exits 1."""
    def fail(args, kernel):
        raise ConfigError("no such agent file; check the path")
    k = Kernel([commands_plugin(register=lambda cli: cli.command("fail", fail))], entry_points=False)
    assert run(k, "fail") == 1
    assert "zagent: error: no such agent file" in capsys.readouterr().err


def test_no_command_prints_help_and_exits_2(capsys):
    """``zagent`` without a command prints the usage and exits 2."""
    assert run(Kernel(entry_points=False)) == 2
    assert "usage: zagent" in capsys.readouterr().err


def test_unknown_command_exits_2(capsys):
    """An unknown command is a usage error (exit 2)."""
    assert run(Kernel(entry_points=False), "frobnicate") == 2


def test_invalid_command_name_is_refused():
    """A command name with spaces or a leading dash is refused."""
    group = cli.CommandGroup(__import__("argparse").ArgumentParser(), (), "p", {})
    with pytest.raises(cli.CommandError, match="invalid command name"):
        group.command("two words", lambda a, k: 0)


def test_console_script_help_runs():
    """The installed ``zagent --help`` runs in a fresh process with the real installed plugins."""
    proc = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "plugins" in proc.stdout and "tools" in proc.stdout


def test_help_works_in_strict_mode_with_broken_plugin(fake_dist, monkeypatch, capsys):
    """With ``ZAGENT_STRICT=1`` and a broken installed plugin, ``zagent --help`` still works (with a warning)."""
    fake_dist("zagent_broken", {"broken": "raise ImportError('half installed')"})
    monkeypatch.setenv("ZAGENT_STRICT", "1")
    assert cli.main(["--help"]) == 0
    out, err = capsys.readouterr()
    assert "usage: zagent" in out and "half installed" in err


def test_command_in_strict_mode_with_broken_plugin_exits_1(fake_dist, monkeypatch, capsys):
    """With ``ZAGENT_STRICT=1``, a broken installed plugin makes commands fail with exit code 1 and the error."""
    fake_dist("zagent_broken", {"broken": "raise ImportError('half installed')"})
    monkeypatch.setenv("ZAGENT_STRICT", "1")
    assert cli.main(["plugins"]) == 1
    assert "zagent: error:" in capsys.readouterr().err


def test_add_inputs_collects_pairs_and_rejects_malformed_ones():
    """cli.add_inputs gives handlers a dict of --input NAME=VALUE pairs; a pair without '=' is a usage error."""
    import argparse

    import pytest

    from zagent.plugins.cli import CommandGroup

    parser = argparse.ArgumentParser(prog="t")
    CommandGroup.add_inputs(parser)
    args = parser.parse_args(["-i", "a=1", "--input", "b=x=y", "-i", "a=2"])
    assert args.input == {"a": "2", "b": "x=y"}
    assert parser.parse_args([]).input == {}
    with pytest.raises(SystemExit) as info:
        parser.parse_args(["-i", "novalue"])
    assert info.value.code == 2
