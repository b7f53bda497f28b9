"""``record:``/``replay:`` without ``path=`` use a file under the data folder, so both work from ``--model``."""

import json
import os
import subprocess
import sys
from pathlib import Path

from zagent import Kernel

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_record_then_replay_by_model_name_alone(tmp_path, monkeypatch):
    """k.llm('record:test:x') writes <data>/zagent/recordings/test-x.jsonl; k.llm('replay:test:x') answers from it."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.delenv("ZAGENT_RECORDINGS", raising=False)
    k = Kernel(["zagent.plugins.offline"], entry_points=False)
    said = k.llm("record:test:x", text="recorded words").complete("hi").text
    file = tmp_path / "zagent" / "recordings" / "test-x.jsonl"
    assert file.exists() and oct(file.stat().st_mode & 0o777) == "0o600"
    assert k.llm("replay:test:x").complete("hi").text == said == "recorded words"
    k.close()


def test_the_cli_records_and_replays_with_model_flags(tmp_path):
    """`zagent run ... --model record:test:offline` then `--model replay:test:offline` prints the same answer."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZAGENT_")}
    env.update(XDG_DATA_HOME=str(tmp_path), ZAGENT_LOG="0")
    base = [sys.executable, "-m", "zagent.plugins.cli", "run", str(EXAMPLES / "qa_agent.json"), "--input",
            "question=What is a token?", "--json", "--model"]
    first = subprocess.run(base + ["record:test:offline"], capture_output=True, text=True, env=env, timeout=120)
    assert first.returncode == 0, first.stderr
    second = subprocess.run(base + ["replay:test:offline"], capture_output=True, text=True, env=env, timeout=120)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout) == json.loads(first.stdout)
