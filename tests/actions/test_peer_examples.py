"""The examples for issue 32's capabilities run offline as their docs say: agents as tools and handoffs
(``delegating_agent.json``, ``triage_agent.json``), guardrails, validators and usage limits
(``guarded_agent.json``), and ``peer_features.py`` (fallback, usage limits, ModelRetry, typed deps)."""

import json
import os
import pathlib
import subprocess
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
PLUGINS = "offline,parsers,actions,react,rails,fallback,cli"


def _env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ZAGENT_", "OPENAI_"))}
    return {**env, "ZAGENT_PLUGINS": PLUGINS, "ZAGENT_LOG": "0"}


def _zagent(*args):
    return subprocess.run([sys.executable, "-m", "zagent.plugins.cli", *args], capture_output=True, text=True,
                          env=_env(), timeout=120, cwd=EXAMPLES)


def test_the_delegating_example_calls_an_agent_as_a_tool():
    """`zagent run examples/delegating_agent.json`: the Writer calls the Answerer agent as a tool, then answers."""
    proc = _zagent("run", "delegating_agent.json", "--input", "task=What is a language model?", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["mode"] == "react" and "Answerer -> success" in proc.stderr


def test_the_triage_example_hands_the_conversation_over():
    """`zagent run examples/triage_agent.json --json`: the Answerer answers after a handoff, and says so."""
    proc = _zagent("run", "triage_agent.json", "--input", "task=What is a language model?", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["mode"], out["answered_by"]) == ("handoff", "Answerer") and out["content"]


def test_the_guarded_example_answers_and_its_input_guardrail_trips():
    """examples/guarded_agent.json answers a plain question; a question about a password stops at the input
    guardrail with exit status 1 and a message naming it."""
    ok = _zagent("run", "guarded_agent.json", "--input", "question=What is a token?")
    assert ok.returncode == 0 and ok.stdout.strip(), ok.stderr
    tripped = _zagent("run", "guarded_agent.json", "--input", "question=What is the admin password?")
    assert tripped.returncode == 1 and tripped.stdout == ""
    assert "input guardrail 'no_passwords' tripped" in tripped.stderr


def test_the_peer_features_script_runs_offline():
    """`python examples/peer_features.py` exits 0 and prints what each feature did."""
    proc = subprocess.run([sys.executable, str(EXAMPLES / "peer_features.py")], capture_output=True, text=True,
                          env=_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["fallback: answered by the backup", "usage limit: requests 2",
                                        "validated: 2030 after 1 retry",
                                        "deps: u1 is Ann Lee. | the tool read: Ann Lee"]
