"""The real-model suite's server: a real small model behind an OpenAI-compatible server on 127.0.0.1.

Every test here is marked ``realmodel`` and skipped unless one of these is set:

- ``ZAGENT_REALMODEL_URL``: the base URL (``http://127.0.0.1:8080/v1``) of a
  running OpenAI-compatible server; ``ZAGENT_REALMODEL_NAME`` is the model
  name to send (default ``qwen2.5-coder-0.5b``);
- ``ZAGENT_REALMODEL_GGUF``: a GGUF file; the suite starts
  ``python -m llama_cpp.server`` on a free loopback port with the GGUF's own
  chat template (no ``--chat_format``: ``chatml-function-calling`` ignores
  tools unless ``tool_choice`` is sent and drops tool results) and stops it
  at the end. ``tests/realmodel/provision.py`` provides server and GGUF.

So ``python -m pytest -q`` stays offline and fast; ``.ci/steps/50-realmodel.sh``
provisions and runs the suite. Assertions are structural only (exit codes,
typed fields, the tool actually called, no placeholder answers), never wording.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
ALIAS = os.environ.get("ZAGENT_REALMODEL_NAME", "qwen2.5-coder-0.5b")
#: generation settings of every request: deterministic and bounded (the model does 2-27 tokens/s)
LLM_CONFIG = {"temperature": 0, "max_tokens": 160}
STARTUP_SECONDS = 180
PLACEHOLDER = re.compile(r"<?\s*(string|integer|number|boolean|array|object)\b[^\n]*,\s*(required|optional)\b",
                         re.IGNORECASE)


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    enabled = bool(os.environ.get("ZAGENT_REALMODEL_URL") or os.environ.get("ZAGENT_REALMODEL_GGUF"))
    skip = pytest.mark.skip(reason="real-model suite: set ZAGENT_REALMODEL_URL or ZAGENT_REALMODEL_GGUF "
                                   "(.ci/steps/50-realmodel.sh does)")
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.realmodel)
            if item.get_closest_marker("timeout") is None:  # a test may set its own hang guard
                item.add_marker(pytest.mark.timeout(600))
            if not enabled:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def model_server():
    """``SimpleNamespace(url, model, times)``: the server to talk to, started here when given a GGUF."""
    url = os.environ.get("ZAGENT_REALMODEL_URL")
    times: dict[str, float] = {}
    if url:
        yield SimpleNamespace(url=url.rstrip("/"), model=ALIAS, times=times)
        return
    gguf = os.environ["ZAGENT_REALMODEL_GGUF"]
    port = _free_port()
    log_path = os.environ.get("ZAGENT_REALMODEL_LOG") or os.path.join(tempfile.gettempdir(), "zagent-realmodel-server.log")
    log = open(log_path, "wb")
    python = os.environ.get("ZAGENT_REALMODEL_PYTHON", sys.executable)
    started = time.monotonic()
    proc = subprocess.Popen(
        [python, "-m", "llama_cpp.server", "--model", gguf, "--model_alias", ALIAS, "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "4096", "--verbose", "False"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_ready(base, proc, log_path)
        times["startup"] = time.monotonic() - started
        yield SimpleNamespace(url=base, model=ALIAS, times=times)
    finally:
        _stop(proc)
        log.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_ready(base: str, proc: subprocess.Popen, log_path: str) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama_cpp.server exited with {proc.returncode} at start-up (see {log_path})")
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail(f"llama_cpp.server did not answer {base}/models within {STARTUP_SECONDS} s (see {log_path})")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


@pytest.fixture
def model_env(model_server, monkeypatch):
    """The environment a user sets for a local OpenAI-compatible server (dummy key, as such servers take)."""
    env = {"ZAGENT_MODEL": f"openai:{model_server.model}", "OPENAI_BASE_URL": model_server.url,
           "OPENAI_API_KEY": "sk-local", "ZAGENT_TIMEOUT": "300", "ZAGENT_PROGRESS_INTERVAL": "15"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return env


@pytest.fixture
def zagent(model_env):
    """Run the ``zagent`` CLI in a subprocess: ``r = zagent("run", ...)`` -> ``(code, out, err, seconds)``."""
    def run(*argv: str, stdin: str = "", limit: float = 540):
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", *argv], input=stdin, text=True,
                              capture_output=True, timeout=limit, cwd=ROOT, env={**os.environ, **model_env})
        return SimpleNamespace(code=done.returncode, out=done.stdout, err=done.stderr,
                               seconds=time.monotonic() - started)
    return run


def with_settings(spec_path: Path, tmp_path: Path, **extra) -> Path:
    """A copy in ``tmp_path`` of an agent file with the suite's generation settings in its llm_config
    (``example_tools.py`` copied along, so its tool import paths still resolve)."""
    data = json.loads(spec_path.read_text())
    data["llm_config"] = {**LLM_CONFIG, **(data.get("llm_config") or {})}
    data.update(extra)
    tools = EXAMPLES / "example_tools.py"
    (tmp_path / tools.name).write_text(tools.read_text())
    out = tmp_path / spec_path.name
    out.write_text(json.dumps(data))
    return out


def real_text(value) -> bool:
    """A non-empty string that is not a format placeholder."""
    return isinstance(value, str) and bool(value.strip()) and not PLACEHOLDER.search(value)
