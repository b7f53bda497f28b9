"""docs/hooks.md's command-plugin example, installed as written, adds its own commands and takes none of zagent's.

The example once registered a ``memory`` group: installed, it took the memory plugin's commands and every
``zagent`` command printed a warning. This test loads the block from the page itself, so the page cannot drift.
"""

from __future__ import annotations

import re
import types
from pathlib import Path

from zagent import Kernel
from zagent.plugins.cli import main

HOOKS = Path(__file__).resolve().parents[2] / "docs" / "hooks.md"


def _documented_plugin() -> types.ModuleType:
    blocks = re.findall(r"^```python\n(.*?)^```", HOOKS.read_text(encoding="utf-8"), re.S | re.M)
    (source,) = [b for b in blocks if "def zagent_register_commands(cli" in b]
    plugin = types.ModuleType("notes_plugin")
    exec(compile(source, str(HOOKS), "exec"), plugin.__dict__)
    return plugin


def _cli(capsys, *argv):
    k = Kernel(["zagent.plugins.cli", "zagent.plugins.memory", _documented_plugin()], entry_points=False, strict=True)
    try:
        try:
            code = main(list(argv), kernel=k)
        except SystemExit as exc:  # --help
            code = exc.code
    finally:
        k.close()
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_example_plugin_adds_its_command_without_a_warning(capsys):
    """With the documented plugin installed, `zagent notes list --help` works and nothing warns."""
    code, out, err = _cli(capsys, "notes", "list", "--help")
    assert code == 0 and "--limit" in out and "warning" not in err


def test_the_built_in_memory_commands_stay_the_memory_plugin_s(capsys):
    """`zagent memory --help` still lists the memory plugin's commands, with no warning about taken names."""
    plain_code, plain, _ = _cli_without_example(capsys)
    code, out, err = _cli(capsys, "memory", "--help")
    assert code == plain_code == 0 and out == plain and "warning" not in err


def _cli_without_example(capsys):
    k = Kernel(["zagent.plugins.cli", "zagent.plugins.memory"], entry_points=False, strict=True)
    try:
        try:
            code = main(["memory", "--help"], kernel=k)
        except SystemExit as exc:
            code = exc.code
    finally:
        k.close()
    out = capsys.readouterr()
    return code, out.out, out.err
