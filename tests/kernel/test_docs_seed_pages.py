"""The examples of docs/retrieval.md, streaming.md, sessions.md and optimizing.md, and of the README's
section on them, run offline as written."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
BLOCKS = [(page, i, code) for page in ("retrieval.md", "streaming.md", "sessions.md", "optimizing.md")
          for i, code in enumerate(re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), re.S))]
_README = (DOCS.parent / "README.md").read_text().split("## Documents, sessions, streaming", 1)[1].split("\n## ", 1)[0]
BLOCKS.append(("README.md", 0, re.search(r"```python\n(.*?)```", _README, re.S).group(1)))


@pytest.mark.parametrize("page,index,code", BLOCKS, ids=[f"{p}#{i}" for p, i, _ in BLOCKS])
def test_the_example_runs_offline(page, index, code, tmp_path):
    """Each Python example of these pages runs with the built-in plugins and no ZAGENT_* settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZAGENT_")}
    env["ZAGENT_MEMORY_DB"] = str(tmp_path / "memory.db")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip(), "the example printed nothing"
