"""The outputs the READMEs show are what their commands print, offline, for a newcomer.

Every ```console block of a tracked ``README.md`` is a session: a line starting with ``$ `` is a command
(run by ``bash -e -o pipefail -c``), the lines after it, up to the next ``$ `` line, are what it prints on
stdout. The commands of one README run in order in one temporary folder holding a copy of ``examples/``,
with the environment a newcomer has: no ``ZAGENT_*`` (nor provider keys) set, so the offline test model
answers, and the data folder (run log, memory) inside that folder. A command must exit 0 and print the
shown lines exactly; only what truly varies is normalised: run ids, durations, dates and the folder's path.
The ``sh`` blocks are ``test_docs_snippets.py``'s (they run there, their output is not shown).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_BLOCK = re.compile(r"^```console\n(.*?)^```", re.S | re.M)
_VARIES = [(re.compile(r"\brun-[0-9a-f]+-[0-9a-f]+-\d+\b"), "run-ID"),
           (re.compile(r"\b\d+(?:\.\d+)?(?:ms|s)\b"), "TIME"),
           (re.compile(r"\b\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\b"), "DATE")]


def _readmes() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "*README.md"], cwd=ROOT, capture_output=True, text=True)
    names = listed.stdout.split() if listed.returncode == 0 else ["README.md"]
    return sorted(ROOT / n for n in names if (ROOT / n).is_file())


def sessions(text: str) -> list[tuple[int, str, list[str]]]:
    """``(line, command, shown stdout lines)`` of every command in ``text``'s console blocks."""
    found: list[tuple[int, str, list[str]]] = []
    for block in _BLOCK.finditer(text):
        first = text.count("\n", 0, block.start(1)) + 1
        for offset, line in enumerate(block.group(1).splitlines()):
            if line.startswith("$ "):
                found.append((first + offset, line[2:], []))
            elif found and found[-1][0] >= first:
                found[-1][2].append(line)
            else:
                raise AssertionError(f"line {first + offset}: a console block starts with '$ ' (a command)")
    return found


def _normalised(lines: list[str], folder: Path) -> list[str]:
    out = []
    for line in lines:
        line = line.replace(str(folder), "FOLDER").rstrip()
        for pattern, stand_in in _VARIES:
            line = pattern.sub(stand_in, line)
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return out


def _newcomer_env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ZAGENT_", "OPENAI_", "ANTHROPIC_", "OLLAMA_", "XDG_"))}
    env["XDG_DATA_HOME"] = str(folder / ".data")
    env["HOME"] = str(folder)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def _cases():
    for path in _readmes():
        for line, command, shown in sessions(path.read_text(encoding="utf-8")):
            yield pytest.param(path, command, shown, id=f"{path.relative_to(ROOT)}:{line}")


_FOLDERS: dict[Path, Path] = {}


@pytest.mark.parametrize(("path", "command", "shown"), list(_cases()))
def test_the_readme_shows_what_the_command_prints(path, command, shown, tmp_path_factory):
    """The command exits 0 and prints on stdout what the README shows after it."""
    if path not in _FOLDERS:
        folder = tmp_path_factory.mktemp(path.parent.name or "readme")
        shutil.copytree(ROOT / "examples", folder / "examples")
        _FOLDERS[path] = folder
    folder = _FOLDERS[path]
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", command], cwd=folder, env=_newcomer_env(folder),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{command}\nexited {done.returncode}; stderr:\n{done.stderr[-3000:]}"
    assert _normalised(done.stdout.splitlines(), folder) == _normalised(shown, folder), done.stderr[-2000:]


def test_the_main_readme_shows_outputs():
    """README.md has console sessions (so the test above cannot pass by finding none), each with output."""
    found = sessions((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(found) >= 5 and all(shown for _line, _command, shown in found)


def test_a_session_is_read_as_commands_and_their_output():
    """The parser: each '$ ' line is a command, the lines after it its output, across blocks."""
    text = "x\n```console\n$ a\none\n\ntwo\n$ b\n```\n\n```console\n$ c\nthree\n```\n"
    assert sessions(text) == [(3, "a", ["one", "", "two"]), (7, "b", []), (11, "c", ["three"])]
