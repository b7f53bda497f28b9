"""Every command in docs/coming-from.md's table of runnable examples runs offline and exits 0, as written,
in a folder holding a copy of examples/ (the MCP server line is run by contrib/zagent-mcp's
test_mcp_serve_examples.py with the MCP SDK client: it serves stdio until its client leaves)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TABLE = (ROOT / "docs" / "coming-from.md").read_text()


def _commands() -> list[str]:
    section = TABLE.split("Runnable offline examples", 1)[1].split("\n## ", 1)[0]
    found = []
    for row in section.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) == 3:
            found += re.findall(r"`((?:zagent|python) [^`]+)`", cells[2])
    return found


COMMANDS = _commands()


def test_the_table_lists_the_examples():
    """The table was read: it has a command for each example run from the shell."""
    assert len(COMMANDS) >= 6 and any(c.startswith("python ") for c in COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_the_example_command_runs_offline(command, tmp_path):
    """The command exits 0 offline (no ZAGENT_MODEL: the built-in test model answers) and prints something."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ZAGENT_", "OPENAI_"))}
    env.update({"ZAGENT_LOG": "0", "XDG_DATA_HOME": str(tmp_path / "data")})
    argv = shlex.split(command)
    argv = [sys.executable, "-m", "zagent.plugins.cli", *argv[1:]] if argv[0] == "zagent" else [sys.executable, *argv[1:]]
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()
