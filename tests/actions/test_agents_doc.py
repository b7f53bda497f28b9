"""docs/agents.md's examples (agents as tools, handoffs, output validators, typed outputs, guardrails,
typed deps) run offline as written."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "agents.md"
EXPECTED = [["The Moon's pull causes tides.", "['Tides are caused by the Moon.']"],
            ["Your refund is on its way. -- billing", "[('triage', ''), ('billing', 'a refund')]"],
            ["2030 1", "Your answer was not accepted: the year must be after 2026"],
            ["Verdict approve", "{'verdict': 'approve', 'reason': 'small and tested'}"],
            ["output", "it leaks the password"], ["It is Ann Lee.", "Ann Lee"]]


@pytest.mark.parametrize("index", range(len(EXPECTED)))
def test_doc_example_prints_what_its_comments_say(index):
    """Each Python example of docs/agents.md runs offline and prints the values its comments show."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == len(EXPECTED)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZAGENT_")}
    env["ZAGENT_LOG"] = "0"
    proc = subprocess.run([sys.executable, "-c", blocks[index]], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:2] == EXPECTED[index]
