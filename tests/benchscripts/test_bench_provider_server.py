"""bench/provider_overhead.py finds its loopback server relative to its own file, or says clearly why it cannot."""

import importlib.util
import json
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("provider_overhead", ROOT / "bench" / "provider_overhead.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def _checkout(tmp_path: Path, with_servers: bool) -> Path:
    """A copy of this checkout's bench script (and its tests/servers, if asked) in a folder with no peers beside it."""
    root = tmp_path / "elsewhere" / "zagent"
    (root / "bench").mkdir(parents=True)
    shutil.copy(ROOT / "bench" / "provider_overhead.py", root / "bench")
    if with_servers:
        shutil.copytree(ROOT / "tests" / "servers", root / "tests" / "servers",
                        ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_without_peers_the_own_server_is_the_one_beside_the_script(tmp_path):
    """With no peers' mock beside the checkout, ``auto`` picks tests/servers of the script's own checkout and
    says why."""
    root = _checkout(tmp_path, with_servers=True)
    cmd, label = bench.server_command("auto", root)
    assert cmd[-1] == str(root / "tests" / "servers")
    assert "no peers'" in label and str(root / "tests" / "servers" / "openai_server.py") in label


def test_the_own_server_starts_whatever_the_current_directory_holds(tmp_path, monkeypatch):
    """The own server is loaded from its folder, not through ``sys.path``: a decoy ``tests`` package in the
    current directory does not stand in for it, and the server answers a chat request."""
    decoy = tmp_path / "cwd" / "tests"
    decoy.mkdir(parents=True)
    (decoy / "__init__.py").write_text("raise ImportError('the decoy tests package was imported')\n")
    cmd, _ = bench.server_command("own", ROOT)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=str(decoy.parent))
    try:
        line = proc.stdout.readline()
        assert line.startswith("LISTENING"), line
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{line.split()[1]}/v1/chat/completions", data=body,
                                         headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            assert json.loads(reply.read())["choices"][0]["message"]["content"] == "echo: hi"
    finally:
        proc.kill()
        proc.wait(5)


def test_no_server_at_all_is_a_clear_error(tmp_path):
    """Without the peers' mock and without tests/servers beside the script, it exits naming the path it looked at."""
    root = _checkout(tmp_path, with_servers=False)
    with pytest.raises(SystemExit, match="no loopback server: .*tests/servers/openai_server.py does not exist"):
        bench.server_command("auto", root)


def test_asking_for_missing_peers_is_a_clear_error(tmp_path):
    """``--server peers`` with no peers' mock beside the checkout exits saying so (no fallback)."""
    root = _checkout(tmp_path, with_servers=True)
    with pytest.raises(SystemExit, match="--server peers: no shared/bench/peers/mock_server.py beside"):
        bench.server_command("peers", root)


def test_a_server_that_does_not_start_shows_its_stderr(tmp_path, monkeypatch):
    """A child that dies before ``LISTENING`` is an error carrying what it wrote to stderr."""
    monkeypatch.setattr(bench, "server_command", lambda choice, root: (
        [sys.executable, "-c", "import sys; sys.exit('the server broke')"], "a broken server"))
    with pytest.raises(SystemExit, match="(?s)a broken server.*did not start.*the server broke"):
        bench.start_server("own", tmp_path)
