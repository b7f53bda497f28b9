"""Round thirteen, files: an agent file served by ``zagent mcp serve --agent FILE`` was built without its file's
identity, so the relative paths it names were read from the working folder (not next to the file, as every other
command reads them) and its memory namespace was that of an inline spec.

Attacks tried and whether they got through before this round's fix:

- ``zagent mcp serve --agent spec/agent.json`` run from another folder, the file naming ``trajectory_path:
  "t.jsonl"``: GOT THROUGH (resolved against the working folder: refused with a message naming a file the spec never
  meant, or, run from a folder inside the spec's, written there) -- fixed: ``servecli._agent`` builds the file
  under ``zagent.speckit.spec_file(path)``
- the same file naming ``../t.jsonl`` (out of its folder): held (refused)
"""

import json
import os

from zagent import ConfigError, Kernel
from zagent.speckit import Trust, load_spec_file, trusting

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react"]


def _served(tmp_path, monkeypatch, **over):
    """The agent ``servecli._agent`` builds from ``tmp_path/spec/agent.json`` while the cwd is ``tmp_path/cwd``."""
    from zagent_mcp.servecli import _agent

    (tmp_path / "spec").mkdir()
    (tmp_path / "cwd").mkdir()
    path = tmp_path / "spec" / "agent.json"
    path.write_text(json.dumps({"type": "react", "name": "r", "tools": [], **over}))
    monkeypatch.chdir(tmp_path / "cwd")
    k = Kernel(plugins=PLUGINS, entry_points=False)
    with trusting(Trust.for_file(str(path))):
        return _agent(k, str(path), load_spec_file)


def test_a_served_agent_files_relative_paths_lie_next_to_it(tmp_path, monkeypatch):
    """Attack (got through): the relative ``trajectory_path`` of a served agent file was read from the cwd.
    Defence: built under its file's identity, it lies next to the file."""
    agent = _served(tmp_path, monkeypatch, trajectory_path="t.jsonl")
    assert agent.trajectory_path == os.path.realpath(tmp_path / "spec" / "t.jsonl")


def test_a_served_agent_file_still_cannot_climb_out(tmp_path, monkeypatch):
    """Held: ``../t.jsonl`` from the served file is outside its folder: refused."""
    try:
        _served(tmp_path, monkeypatch, trajectory_path="../t.jsonl")
    except ConfigError as exc:
        assert "outside the folders" in str(exc)
    else:
        raise AssertionError("a path out of the served file's folder was accepted")
