"""The example agent files run end to end offline through the CLI, and against an OpenAI-compatible server."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from zagent import Kernel
from zagent.plugins.actions import CustomizeAgent

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "zagent.plugins.cli", *args], capture_output=True, text=True,
                          env={**os.environ, "ZAGENT_PLUGINS": "offline,parsers,actions,cli", **(env or {})},
                          timeout=60)


@pytest.mark.parametrize("name, inputs", [
    ("qa_agent.json", ["question=What is a language model?"]),
    ("calculator_agent.json", ["question=What is 2+3?"]),
    ("review_agent.yaml", ["text=Cats are mammals."]),
])
def test_example_runs_offline_with_the_cli(name, inputs):
    """`zagent run EXAMPLE --json` exits 0 offline and prints every declared output."""
    if name.endswith(".yaml"):
        pytest.importorskip("yaml")
    args = ["run", str(EXAMPLES / name), "--json"] + [a for i in inputs for a in ("--input", i)]
    proc = _run(*args)
    assert proc.returncode == 0, proc.stderr
    spec = CustomizeAgent.load(EXAMPLES / name, Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.parsers",
                                                                  "zagent.plugins.actions"], entry_points=False),
                               trust=True).spec
    assert set(json.loads(proc.stdout)) == {f.name for f in spec.outputs}
    assert "step 1" in proc.stderr


def test_run_without_a_required_input_says_which_to_pass():
    """`zagent run` with a required input missing fails with the input's name and the flag, calling no model."""
    proc = _run("run", str(EXAMPLES / "qa_agent.json"))
    assert proc.returncode != 0
    assert "needs input(s) question; pass --input question=..." in proc.stderr
    assert "step 1" not in proc.stderr


def test_agent_show_prints_prompt():
    """`zagent agent show` prints the rendered prompt with the given input."""
    proc = _run("agent", "show", str(EXAMPLES / "qa_agent.json"), "--input", "question=Why?")
    assert proc.returncode == 0, proc.stderr
    assert "Answer this question in two or three sentences: Why?" in proc.stdout


def test_example_against_openai_compatible_server():
    """The same agent file runs against an OpenAI-compatible server by switching ZAGENT_MODEL."""
    from tests.servers.openai_server import OpenAIServer, completion

    with OpenAIServer(key="sk-test") as server:
        server.then(completion("## answer\nA model of language."))
        proc = _run("run", str(EXAMPLES / "qa_agent.json"), "--input", "question=What?", "--json",
                    env={"ZAGENT_MODEL": "openai:gpt-test", "OPENAI_API_KEY": "sk-test",
                         "OPENAI_BASE_URL": server.url + "/v1", "ZAGENT_PLUGINS": "offline,parsers,actions,cli,openai"})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"answer": "A model of language."}


def test_the_seed_forms_example_runs_offline():
    """Seed 000 (EvoAgentX): "response = simple_agent(inputs={"question": "What is a language model?"})"
    -- examples/seed_forms.py, the seeds' own forms (the first CustomizeAgent, str mode with several
    outputs, the history cut, TOOL:name|k=v calls, tool definitions, the live trajectory), runs offline
    and prints what each gives."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZAGENT_")}
    proc = subprocess.run([sys.executable, str(EXAMPLES / "seed_forms.py")], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["A model that predicts text.", "5 5", "200",
                                        "[{'toolset': 'math', 'emoji': '+'}]", "It is 5. 5 1.0", "['completed']"]


def test_the_vision_example_sends_the_image_offline():
    """`zagent run examples/vision_agent.json --input task=... --image examples/pixel.png` exits 0 offline and
    the offline test model's answer shows it received the PNG (its media type and size)."""
    size = (EXAMPLES / "pixel.png").stat().st_size
    proc = _run("run", str(EXAMPLES / "vision_agent.json"), "--input", "task=What is in this picture?",
                "--image", str(EXAMPLES / "pixel.png"), env={"ZAGENT_PLUGINS": "offline,parsers,actions,react,cli"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"I see 1 image (image/png, {size} bytes).")
