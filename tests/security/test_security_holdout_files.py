"""Hold-out round three: oversized and planted files a spec or a shared folder brings.

Attacks tried (session 2026-12-03, redteam) and whether they got through before this module's fixes:

- a sparse 4 GiB skill file (or a 64 MiB one) planted in the skills folder: GOT THROUGH (read whole into memory,
  its text then put into prompts on the user's key) -- fixed: a skill file over 1 MiB is skipped with a warning
- SQLite side files (``mem.db-wal``, ``mem.db-journal``) planted as another user's symlinks to the user's file,
  next to a spec's ``long_term_memory.path`` in a group-writable spec folder: held (the file is never written)
- a workflow node or group chat naming ``../outside/agent`` from ``--agents``: held (not a file name)
"""

import json
import os

import pytest

from zagent.plugins.skills import SkillRegistry, markdown
from zagent.plugins.skills.skill import Skill

from .conftest import agent_spec, run_cli


def skill_text(name, instructions):
    return markdown.render(Skill(name=name, description="d", when_to_use="w", instructions=instructions))


def test_a_huge_sparse_skill_file_is_skipped_not_read(tmp_path, caplog):
    """skills/huge.md of 4 GiB (sparse): skipped with a warning naming the limit; the other skill loads."""
    folder = tmp_path / "skills"
    folder.mkdir()
    with open(folder / "huge.md", "wb") as f:
        f.write(skill_text("huge", "x").encode())
        f.truncate(4 * 2**30)
    (folder / "fine.md").write_text(skill_text("fine", "normal"))
    assert SkillRegistry(str(folder)).load().names() == ["fine"]
    assert "larger than 1 MiB" in caplog.text


def test_a_skill_file_with_windows_line_ends_still_loads(tmp_path):
    """A hand-written skill saved with CRLF line ends reads as before (text-mode newlines)."""
    folder = tmp_path / "skills"
    folder.mkdir()
    (folder / "crlf.md").write_bytes(skill_text("crlf", "step one\nstep two").replace("\n", "\r\n").encode())
    assert SkillRegistry(str(folder)).load()["crlf"].instructions == "step one\nstep two"


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to plant another user's link")
def test_planted_sqlite_side_files_never_write_the_users_file(tmp_path):
    """``mem.db-wal``/``mem.db-journal`` links of another user to the user's file, next to the spec's memory
    path in a group-writable folder: the user's file is unchanged."""
    folder, victim = tmp_path / "shared", tmp_path / "bashrc"
    folder.mkdir(mode=0o770)
    os.chmod(folder, 0o770)
    victim.write_text("ORIGINAL\n")
    for side in ("mem.db-wal", "mem.db-journal"):
        os.symlink(victim, folder / side)
        os.lchown(folder / side, 12345, 12345)
    spec = agent_spec(llm="test:offline", use_long_term_memory=True, long_term_memory={"path": "mem.db"})
    (folder / "evil.json").write_text(json.dumps(spec))
    run_cli("run", "evil.json", "-i", "question=hi", cwd=folder)
    assert victim.read_text() == "ORIGINAL\n"


@pytest.mark.parametrize("kind", ["workflow", "groupchat"])
def test_an_agent_name_climbing_out_of_the_agents_folder_is_refused(tmp_path, kind):
    """``agents: ["../outside/agent"]`` with ``--agents agents``: refused as a file name, nothing loaded."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "agents").mkdir()
    (tmp_path / "outside" / "agent.json").write_text(json.dumps(agent_spec(name="agent", llm="test:offline")))
    if kind == "workflow":
        spec = {"name": "w", "goal": "g", "inputs": [{"name": "question"}], "edges": [], "nodes": [
            {"name": "a", "description": "a", "inputs": [{"name": "question"}], "outputs": [{"name": "answer"}],
             "agents": ["../outside/agent"]}]}
        args = ("workflow", "run", "f.json", "-i", "question=hi", "--agents", "agents")
    else:
        spec = {"type": "groupchat", "name": "c", "agents": ["../outside/agent"], "max_rounds": 1}
        args = ("groupchat", "run", "f.json", "-i", "task=hi", "--agents", "agents")
    (tmp_path / "f.json").write_text(json.dumps(spec))
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode != 0 and "cannot be a file name" in done.stderr
