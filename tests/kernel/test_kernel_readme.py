"""The README's embedding example runs as written (offline model, installed plugins)."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

import zagent

README = pathlib.Path(zagent.__file__).resolve().parent.parent / "README.md"


def section_code(title: str) -> str:
    text = README.read_text()
    section = text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.skipif(not README.exists(), reason="not running from a source checkout")
def test_embedding_example_runs():
    """The 'Embedding zagent in an app' example runs and prints two answers and the word count."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZAGENT_")}
    proc = subprocess.run([sys.executable, "-c", section_code("Embedding zagent in an app")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 3 and lines[-1] == "3"
