"""Every ```python and ```sh block of README.md, docs/*.md, plugins/*/README.md and contrib/*/README.md runs, offline.

The blocks are found by sybil (a maintained documentation-test runner: it
parses fenced Markdown blocks, shares one namespace per document so a page can
build an example up block by block, and honours ``<!-- skip: next "reason" -->``
comments). Each document runs in its own temporary folder holding a copy of
``examples/``, with no ``ZAGENT_MODEL`` (the offline test model answers) and
the data folder (run log, memory, skills) inside that folder. A shell block runs
under ``bash -e -o pipefail``; it passes when every command exits 0. A Python
block whose first line is ``# name.py`` is also written to that file of the
folder (so a later block or command can import it), and a block that defines
``test_*`` functions or ``Test*`` classes is a test file: it is run by pytest as well.
A contrib distribution's README runs where that distribution is installed (the
``.ci/steps`` that install one run its README's blocks); its ``examples/`` folder
is copied beside the main one. Elsewhere its blocks are skipped, saying so.
"""

from __future__ import annotations

import importlib.util
import linecache
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.parsers.markdown import CodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "plugins").glob("*/README.md")),
             *sorted((ROOT / "contrib").glob("*/README.md"))]
#: the module a contrib distribution's README needs (its blocks are skipped where it is not installed)
CONTRIB_MODULES = {"zagent-mcp": "zagent_mcp", "zagent-otel": "zagent_otel", "zagent-ray": "zagent_ray"}
SHELL_TIMEOUT = 300


def _environment(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ZAGENT_", "OPENAI_", "ANTHROPIC_", "OLLAMA_"))}
    env["XDG_DATA_HOME"] = str(folder / ".data")
    env["ZAGENT_LOG_DB"] = str(folder / ".data" / "logs.db")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(folder)
    return env


def _run_shell(example) -> None:
    folder = Path(example.namespace["__folder__"])
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", example.parsed], cwd=folder,
                          env=_environment(folder), capture_output=True, text=True, timeout=SHELL_TIMEOUT)
    if done.returncode:
        raise AssertionError(f"shell block exited {done.returncode}:\n{example.parsed}\n--- stdout\n"
                             f"{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}")


def compiled(source: str, path: str, line: int):
    """``source`` compiled so that a traceback points at its document's lines and shows the block's code: the
    file name is ``path#line`` with the block (at its line) in ``linecache``, so pytest never parses the
    Markdown file itself as Python (which crashed its failure report with an INTERNALERROR)."""
    name = f"{path}#{line}"
    padded = "\n" * (line - 1) + source
    linecache.cache[name] = (len(padded), None, padded.splitlines(keepends=True), name)
    return compile(padded, name, "exec", dont_inherit=True)  # as a user's script: no __future__ of this file


def _run_python(example) -> None:
    folder = Path(example.namespace["__folder__"])
    source = example.parsed
    first = source.lstrip().splitlines()[0] if source.strip() else ""
    if first.startswith("# ") and first.split()[1].endswith(".py"):
        (folder / first.split()[1]).write_text(source)
    exec(compiled(source, example.path, example.line), example.namespace)
    if any((name.startswith("test_") or name.startswith("Test") and isinstance(value, type)) and callable(value)
           for name, value in example.namespace.items()):
        (folder / f"test_block_{example.line}.py").write_text(source)
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               f"test_block_{example.line}.py"], cwd=folder, env=_environment(folder),
                              capture_output=True, text=True, timeout=SHELL_TIMEOUT)
        for name in [n for n in example.namespace if n.startswith(("test_", "Test"))]:
            del example.namespace[name]
        if done.returncode:
            raise AssertionError(f"the test block failed under pytest:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")


_SYBIL = Sybil(parsers=[CodeBlockParser("python", _run_python), CodeBlockParser("sh", _run_shell),
                        CodeBlockParser("bash", _run_shell), SkipParser()])


def _examples():
    for path in DOCUMENTS:
        document = _SYBIL.parse(path)
        for example in document.examples():
            yield pytest.param(path, example, id=f"{path.relative_to(ROOT)}:{example.line}")


_FOLDERS: dict[Path, Path] = {}


@pytest.fixture
def document_folder(tmp_path_factory, request, monkeypatch):
    """The document's own folder (made at its first block, kept for its later ones), as cwd and data folder."""
    path = request.node.callspec.params["path"]
    contrib = path.parent.name if path.parent.parent == ROOT / "contrib" else None
    if contrib is not None and importlib.util.find_spec(CONTRIB_MODULES.get(contrib, contrib)) is None:
        pytest.skip(f"{contrib} is not installed here (the .ci/steps that install it run its README)")
    if path not in _FOLDERS:
        folder = tmp_path_factory.mktemp(contrib or path.stem)
        shutil.copytree(ROOT / "examples", folder / "examples")
        if contrib is not None and (path.parent / "examples").is_dir():
            shutil.copytree(path.parent / "examples", folder / "examples", dirs_exist_ok=True)
        _FOLDERS[path] = folder
    folder = _FOLDERS[path]
    for name, value in _environment(folder).items():
        monkeypatch.setenv(name, value)
    for name in [n for n in os.environ if n.startswith(("ZAGENT_", "OPENAI_", "ANTHROPIC_", "OLLAMA_"))]:
        if name != "ZAGENT_LOG_DB":
            monkeypatch.delenv(name)
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))
    return folder


@pytest.mark.parametrize(("path", "example"), list(_examples()))
def test_documented_block_runs(path, example, document_folder):
    """The documented block runs as written (in its document's namespace, after the blocks before it)."""
    example.namespace.setdefault("__folder__", str(document_folder))
    example.namespace.setdefault("__name__", "__main__")
    example.evaluate()


def test_a_failing_block_s_traceback_shows_its_own_line():
    """A block that raises: the traceback names the document and line, and shows the failing code."""
    import traceback

    try:
        exec(compiled("x = 1\nraise ValueError('broken snippet')\n", "docs/page.md", 40), {})
    except ValueError:
        text = traceback.format_exc()
    assert 'File "docs/page.md#40", line 41' in text and "raise ValueError('broken snippet')" in text
