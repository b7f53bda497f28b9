"""`zagent mcp list`: configured servers, their state and tools."""

import json
import os
import subprocess
import sys

from zagent.plugins.cli import main

from mcp_helpers import demo_stdio


def test_list_shows_servers_states_and_tools(make_kernel, capsys):
    """Each server is printed with its state and its tools' zagent names; a failed one with its error."""
    k = make_kernel({"demo": demo_stdio(tools=["echo", "add"]), "broken": {"command": "zagent-mcp-missing"}},
                    "zagent.plugins.cli")
    code = main(["mcp", "list"], kernel=k)
    out = capsys.readouterr().out
    assert "demo  ready  stdio" in out and "  - demo.echo" in out and "  - demo.add" in out
    assert "broken  failed" in out and "zagent-mcp-missing" in out
    assert code == 1


def test_list_json_is_machine_readable(make_kernel, capsys):
    """`--json` prints one object per server."""
    k = make_kernel({"demo": demo_stdio(tools=["echo"])}, "zagent.plugins.cli")
    assert main(["mcp", "list", "--json"], kernel=k) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["state"], r["tools"]) for r in rows] == [("demo", "ready", ["demo.echo"])]


def test_list_with_config_file_connects_just_for_the_listing(make_kernel, capsys, tmp_path):
    """`--config FILE` lists the servers of that file, whatever the kernel has."""
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"demo": demo_stdio(tools=["pid"])}}))
    k = make_kernel({}, "zagent.plugins.cli")
    assert main(["mcp", "list", "--config", str(path)], kernel=k) == 0
    assert "  - demo.pid" in capsys.readouterr().out


def test_the_installed_entry_point_makes_the_command_and_tools_available(tmp_path):
    """Installed, the plugin is found through the `zagent` entry-point group, as a third-party plugin is."""
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"demo": demo_stdio(tools=["echo"])}}))
    env = {**os.environ, "ZAGENT_MCP_CONFIG": str(path), "ZAGENT_PLUGINS": "cli,mcp"}
    proc = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "mcp", "list"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "demo  ready" in proc.stdout and "  - demo.echo" in proc.stdout
    tools = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "tools"], capture_output=True,
                           text=True, env=env, timeout=120)
    assert "demo.echo" in tools.stdout and "demo" in tools.stdout
