"""Round fourteen, wave two: an MCP configuration file names commands zagent starts, so it is code. A file other
users can write (or own, or could swap through its folder), named by ``ZAGENT_MCP_CONFIG`` or ``config["mcp"]``,
must start nothing."""

import json
import os
import sys

import pytest

from zagent import ConfigError, Kernel

from mcp_helpers import demo_stdio
from zagent_mcp.config import load_settings


def _hostile_config(path, marks):
    """An ``mcpServers`` file whose one server is a command that only records that it ran."""
    code = f"import os; os.makedirs({str(marks)!r}, exist_ok=True); open(os.path.join({str(marks)!r}, 'ran'), 'w')"
    path.write_text(json.dumps({"mcpServers": {"evil": {"command": sys.executable, "args": ["-c", code]}}}))
    return path


def _started(config=None):
    """A kernel with the MCP plugin, its servers connected (or failed), then closed."""
    k = Kernel(plugins=["zagent_mcp.plugin"], entry_points=False, config=config or {})
    try:
        k.tools()  # waits for tool sources still connecting
    finally:
        k.close()


def _ran(marks):
    return sorted(os.listdir(marks)) if marks.exists() else []


def _world_writable(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    path = _hostile_config(folder / "mcp.json", tmp_path / "marks")
    path.chmod(0o666)
    return path


def _others_file(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    path = _hostile_config(folder / "mcp.json", tmp_path / "marks")
    os.chown(path, 12345, 12345)
    return path


def _in_open_folder(tmp_path):
    folder = tmp_path / "open"
    folder.mkdir()
    folder.chmod(0o777)  # no sticky bit: anyone can replace the file in it
    return _hostile_config(folder / "mcp.json", tmp_path / "marks")


needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")


@pytest.mark.parametrize("make", [_world_writable, pytest.param(_others_file, marks=needs_root), _in_open_folder])
def test_env_named_config_file_others_can_write_starts_no_server(tmp_path, monkeypatch, make):
    """Attack: ``ZAGENT_MCP_CONFIG`` names a shared file (mode 666, another user's, or in a 0777 folder); another
    user put a server in it whose ``command`` runs their code. Before: the kernel started it. Expected: the file is
    refused (a problem naming it and saying why), no command runs."""
    path = make(tmp_path)
    monkeypatch.setenv("ZAGENT_MCP_CONFIG", str(path))
    _started()
    assert _ran(tmp_path / "marks") == []
    settings = load_settings(None)
    assert settings.servers == {} and any(str(path) in p and "other users" in p for p in settings.problems)


def test_config_file_named_by_the_app_that_others_can_write_is_refused(tmp_path):
    """Attack: ``config["mcp"]["config_file"]`` names a file every user can write. Expected (strict):
    ``ConfigError`` naming the file and what to do; no command ran."""
    path = _world_writable(tmp_path)
    with pytest.raises(ConfigError, match="other users"):
        load_settings({"config_file": str(path)}, environ={}, strict=True)
    _started({"mcp": {"config_file": str(path)}})
    assert _ran(tmp_path / "marks") == []


def test_the_users_own_config_file_still_starts_its_servers(tmp_path, monkeypatch):
    """Guard: a file of the user's own (0644, in a folder of theirs) named by an absolute ``ZAGENT_MCP_CONFIG``
    still adds its servers."""
    path = tmp_path / "mine" / "mcp.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"mcpServers": {"demo": demo_stdio(tools=["echo"])}}))
    settings = load_settings(None, environ={"ZAGENT_MCP_CONFIG": str(path)}, strict=True)
    assert list(settings.servers) == ["demo"] and settings.problems == ()
