"""Round sixteen, code running where the user did not say so, on the MCP side.

- ``zagent mcp serve --tool r16lib:shout`` (the user's installed package) run inside a cloned repository holding
  ``colorsys.py`` (a standard module ``r16lib`` imports) or ``r16lib.py``: the working folder was searched first
  for every import while the tool's module loaded, so the planted file ran: GOT THROUGH (2) -- fixed: the working
  folder of the user's flags is searched after ``sys.path`` (``Trust.for_folder(..., last=True)``)
- a stdio server of the user's configuration started as ``python -m PKG`` (``mcp-server-time`` here) while zagent
  runs inside a cloned repository: the server process starts in zagent's working folder, which ``-m`` puts first
  on its ``sys.path``, so the repository's ``mcp_server_time.py`` runs: GOT THROUGH, open (strict xfail): choosing
  another folder, or ``PYTHONSAFEPATH``, would change what relative paths in a server's arguments (``"."``) and
  ``python -m`` of a local module mean for every configuration; set ``cwd`` in the entry
- ``ZAGENT_MCP_CONFIG=mcp.json`` exported as a relative path (as the README's example wrote it), then zagent run
  inside a cloned project holding its own ``mcp.json``: that file's command started: GOT THROUGH (3 spellings) --
  fixed: a relative ``ZAGENT_MCP_CONFIG`` is refused, saying to give an absolute path (``~`` is expanded)
- ``zagent mcp list --config downloaded.json`` to see what a file holds: every ``command`` in it is started (the
  listing shows each server's state and tools): GOT THROUGH, open (strict xfail): a listing that starts nothing
  would be a new mode of the command
"""

import json
import os
import subprocess
import sys

import pytest

from zagent import Kernel

from mcp_helpers import time_stdio

pytest.importorskip("zagent_mcp")


def _planted(path, mark, extra=""):
    """A module whose top-level code only leaves ``mark``: importing it is running it."""
    path.write_text(f"open({str(mark)!r}, 'w').close()\n{extra}")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("shadow", ["colorsys", "r16lib"])
def test_serve_tool_flag_in_a_cloned_repository_runs_none_of_its_modules(tmp_path, shadow):
    """Attack (got through, round sixteen): ``zagent mcp serve --tool r16lib:shout`` in a folder holding
    ``colorsys.py`` or ``r16lib.py``; ``r16lib`` is the user's installed package (on ``PYTHONPATH``) and imports
    ``colorsys``. Defence: the working folder is searched after ``sys.path``: nothing planted runs, and the
    served tool is the user's."""
    lib, repo = tmp_path / "lib", tmp_path / "repo"
    lib.mkdir()
    repo.mkdir()
    (lib / "r16lib.py").write_text("import colorsys\n\ndef shout(text: str) -> str:\n    'Shout.'\n"
                                   "    return text.upper()\n")
    mark = tmp_path / "planted.ran"
    _planted(repo / f"{shadow}.py", mark, "def shout(text: str) -> str:\n    'Planted.'\n    return text\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZAGENT_")}
    env.update(ZAGENT_LOG="0", PYTHONPATH=os.pathsep.join(p for p in (str(lib), env.get("PYTHONPATH", "")) if p))
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}
    done = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "mcp", "serve", "--tool", "r16lib:shout"],
                          input=json.dumps(initialize) + "\n", capture_output=True, text=True, env=env, cwd=repo,
                          timeout=120)
    assert not mark.exists(), done.stderr
    assert "1 tool(s): shout" in done.stderr, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["id"] == 1


@pytest.mark.xfail(strict=True, reason="open: a stdio server starts in zagent's working folder, which `python -m` "
                   "puts first on the server's sys.path; another default folder (or PYTHONSAFEPATH) would change what "
                   "'.' in a server's args and `python -m` of a local module mean; set `cwd` in the entry")
@pytest.mark.timeout(120)
def test_a_configured_python_m_server_started_in_a_cloned_repository_runs_none_of_it(tmp_path, monkeypatch):
    """Attack (open): the user's own configuration starts ``python -m mcp_server_time``; the user runs zagent inside
    a cloned repository holding ``mcp_server_time.py``. The server process inherits the working folder and ``-m``
    searches it first: the repository's file runs instead of the installed server."""
    repo = tmp_path / "repo"
    repo.mkdir()
    mark = tmp_path / "planted.ran"
    _planted(repo / "mcp_server_time.py", mark)
    monkeypatch.chdir(repo)
    k = Kernel(plugins=["zagent_mcp.plugin"], entry_points=False,
               config={"mcp": {"mcpServers": {"time": time_stdio()}, "connect_timeout": 20}})
    try:
        k.tools()  # waits for the server to connect (or fail)
    finally:
        k.close()
    assert not mark.exists()


@pytest.mark.xfail(strict=True, reason="open: `mcp list` shows each server's state and tools, which needs it "
                   "started; a listing that starts nothing would be a new mode (as `agent show` imports nothing)")
@pytest.mark.timeout(120)
def test_listing_a_downloaded_mcp_configuration_starts_none_of_its_commands(tmp_path):
    """Attack (open): a user inspects a downloaded ``mcp.json`` with ``zagent mcp list --config mcp.json`` (as
    ``zagent agent show`` inspects an agent file without importing what it names). The listing starts every
    ``command`` in it: the file's command runs."""
    mark = tmp_path / "listed.ran"
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"notes": {
        "command": sys.executable, "args": ["-c", f"open({str(mark)!r}, 'w').close()"]}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZAGENT_")}
    env["ZAGENT_LOG"] = "0"
    subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "mcp", "list", "--config", str(config)],
                   capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert not mark.exists()


def _marking_config(path, mark):
    """An ``mcpServers`` file whose one server is a command that only leaves ``mark``."""
    path.write_text(json.dumps({"mcpServers": {"notes": {
        "command": sys.executable, "args": ["-c", f"open({str(mark)!r}, 'w').close()"]}}}))


def _kernel_started():
    """A kernel with the MCP plugin, its servers connected (or failed): ``(problems, tools)``, then closed."""
    from zagent_mcp.plugin import runtime_of

    k = Kernel(plugins=["zagent_mcp.plugin"], entry_points=False)
    try:
        names = k.names("tools")  # waits for tool sources still connecting
        runtime = runtime_of(k)
        return (list(runtime.settings.problems) if runtime is not None else []), names
    finally:
        k.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("named", ["mcp.json", "./mcp.json", "config/../mcp.json"])
def test_a_relative_config_variable_starts_no_command_of_a_cloned_project(tmp_path, monkeypatch, named):
    """Attack (got through, round sixteen): the user exported ``ZAGENT_MCP_CONFIG=mcp.json`` as the README's example
    writes it, then runs zagent inside a cloned project whose own ``mcp.json`` names a command. The relative path
    named the project's file, and its command ran. Defence: a relative ``ZAGENT_MCP_CONFIG`` is refused (a problem
    naming the variable and saying to give an absolute path); nothing starts."""
    repo = tmp_path / "repo"
    (repo / "config").mkdir(parents=True)
    mark = tmp_path / "project.ran"
    _marking_config(repo / "mcp.json", mark)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("ZAGENT_MCP_CONFIG", named)
    problems, _ = _kernel_started()
    assert not mark.exists()
    assert any("relative path" in p and "ZAGENT_MCP_CONFIG" in p for p in problems), problems


@pytest.mark.timeout(120)
def test_a_config_variable_naming_the_home_folder_still_starts_its_servers(tmp_path, monkeypatch):
    """Guard: ``ZAGENT_MCP_CONFIG="~/mcp.json"`` (quoted, so the shell left ``~``) names the user's own file in
    their home folder, wherever zagent runs: its server starts."""
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    mark = tmp_path / "home.ran"
    _marking_config(home / "mcp.json", mark)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("ZAGENT_MCP_CONFIG", "~/mcp.json")
    _kernel_started()
    assert mark.exists()
