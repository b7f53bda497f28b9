"""One bad server entry (or configuration file) is reported and skipped; the rest of the plugin works."""

import json
import logging
import os
import subprocess
import sys

import pytest

from zagent import Kernel, PluginError

from mcp_helpers import DEMO, demo_stdio
from zagent_mcp.plugin import runtime_of

BAD = {"command": sys.executable, "args": [DEMO, "--token=${ZAGENT_MCP_TEST_UNSET}"]}


def _zagent(*argv, config_path):
    env = {k: v for k, v in os.environ.items() if k != "ZAGENT_MCP_TEST_UNSET"}
    env.update(ZAGENT_MCP_CONFIG=str(config_path), ZAGENT_PLUGINS="cli,mcp")
    return subprocess.run([sys.executable, "-m", "zagent.plugins.cli", *argv], capture_output=True, text=True,
                          env=env, timeout=120)


def test_an_unset_variable_skips_only_that_server(caplog, monkeypatch):
    """A server whose `${VAR}` is unset is skipped with a warning naming server, variable and fix; the other
    servers' tools register and run, and the plugin is no kernel problem."""
    monkeypatch.delenv("ZAGENT_MCP_TEST_UNSET", raising=False)
    caplog.set_level(logging.WARNING, logger="zagent.mcp")
    k = Kernel(plugins=["zagent_mcp.plugin"], entry_points=False,
               config={"mcp": {"mcpServers": {"gh": BAD, "demo": demo_stdio(tools=["echo"])}}})
    try:
        assert k.problems == []
        assert k.run_tool({"name": "demo.echo", "arguments": {"text": "hi"}}).value == {"result": "hi"}
        assert [t.name for t in k.tools()] == ["demo.echo"]
        warning = next(r.getMessage() for r in caplog.records if "'gh'" in r.getMessage())
        assert "ZAGENT_MCP_TEST_UNSET" in warning and "'args'" in warning and "export ZAGENT_MCP_TEST_UNSET=" in warning
        row = {r["name"]: r for r in runtime_of(k).status()}["gh"]
        assert row["state"] == "invalid" and "ZAGENT_MCP_TEST_UNSET" in row["error"]
    finally:
        k.close()


def test_strict_mode_still_raises_for_a_bad_entry():
    """A strict kernel (or `"strict": true` in the `mcp` section) refuses a bad entry with a ConfigError."""
    with pytest.raises(PluginError, match="ZAGENT_MCP_TEST_UNSET"):
        Kernel(plugins=["zagent_mcp.plugin"], entry_points=False, strict=True,
               config={"mcp": {"mcpServers": {"gh": BAD, "demo": demo_stdio()}}})


def test_mcp_list_shows_the_bad_entry_with_its_problem(tmp_path):
    """`zagent mcp list` still exists with a bad entry: the healthy server is ready, the bad one is listed
    as invalid with what is wrong, and the exit code is 1."""
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"gh": BAD, "demo": demo_stdio(tools=["echo"])}}))
    proc = _zagent("mcp", "list", config_path=path)
    assert "invalid choice" not in proc.stderr
    assert proc.returncode == 1, proc.stderr
    assert "demo  ready" in proc.stdout and "  - demo.echo" in proc.stdout
    assert "gh  invalid  stdio" in proc.stdout and "--token=${ZAGENT_MCP_TEST_UNSET}" in proc.stdout
    assert "error: MCP server 'gh': environment variable ZAGENT_MCP_TEST_UNSET" in proc.stdout
    assert "Server 'gh' is skipped" in proc.stderr  # the start-up warning


@pytest.mark.parametrize("content", [None, '{"mcpServers": {"demo": '])
def test_an_unusable_config_file_is_a_clear_error_at_mcp_list(tmp_path, content):
    """A missing or unparsable ZAGENT_MCP_CONFIG file does not make `zagent mcp` vanish: `zagent mcp list`
    says which file and what is wrong, and exits 1; `--config` of such a file does the same."""
    path = tmp_path / "mcp.json"
    if content is not None:
        path.write_text(content)
    proc = _zagent("mcp", "list", config_path=path)
    assert "invalid choice" not in proc.stderr
    assert proc.returncode == 1
    what = "cannot read MCP configuration" if content is None else "is not valid JSON"
    assert what in proc.stdout and str(path) in proc.stdout and "ZAGENT_MCP_CONFIG" in proc.stdout
    other = _zagent("mcp", "list", "--config", str(path), config_path=tmp_path / "none.json")
    assert other.returncode == 1 and what in other.stdout and str(path) in other.stdout
