"""Hold-out round three: code planted next to a trusted spec folder's module, where the folder checks do not look.

Attacks tried (session 2026-12-03, redteam) and whether they got through before this module's fixes:

- ``zagent run proj/agent.json`` naming ``"planted_tools:tool"``: the folder and ``planted_tools.py`` are the
  user's (0755/0644), but ``proj/__pycache__`` is world-writable and holds another user's ``.pyc`` whose header
  matches the source's time and size: GOT THROUGH (Python ran the planted bytecode, never reading the source) --
  fixed: a module whose bytecode cache (folder or file) other users can write is refused, saying why
- the same with a ``.pyc`` owned by another user in the user's own ``__pycache__``: GOT THROUGH -- fixed the same way
- the user's own ``__pycache__`` (made by an earlier run): held (imports as before)
"""

import importlib.util
import json
import os
import py_compile
import struct

import pytest

from .conftest import agent_spec, run_cli

GOOD = 'def tool(text: str) -> str:\n    """Echo."""\n    return text\n'


def project(tmp_path):
    """proj/agent.json naming planted_tools:tool, proj/planted_tools.py (the user's, 0644, in a 0755 folder)."""
    proj = tmp_path / "proj"
    proj.mkdir(mode=0o755)
    os.chmod(tmp_path, 0o755)
    os.chmod(proj, 0o755)
    (proj / "planted_tools.py").write_text(GOOD)
    os.chmod(proj / "planted_tools.py", 0o644)
    (proj / "agent.json").write_text(json.dumps(agent_spec(llm="test:offline", tools=["planted_tools:tool"])))
    return proj


def plant_bytecode(proj, marker):
    """A .pyc for planted_tools.py that writes ``marker`` when imported, its header matching the source."""
    source = proj / "planted_tools.py"
    evil = proj.parent / "evil_src.py"
    evil.write_text(f"open({str(marker)!r}, 'w').write('pwned')\n" + GOOD)
    cached = importlib.util.cache_from_source(str(source))
    os.makedirs(os.path.dirname(cached), exist_ok=True)
    py_compile.compile(str(evil), cfile=cached)
    data = bytearray(open(cached, "rb").read())
    st = os.stat(source)
    data[8:16] = struct.pack("<II", int(st.st_mtime) & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF)
    open(cached, "wb").write(bytes(data))
    return cached


def test_a_world_writable_pycache_with_planted_bytecode_is_not_imported(tmp_path):
    """`zagent run`: proj/__pycache__ is 0777 with a matching planted .pyc: refused, the bytecode never runs."""
    proj, marker = project(tmp_path), tmp_path / "pwned"
    plant_bytecode(proj, marker)
    os.chmod(proj / "__pycache__", 0o777)
    done = run_cli("run", str(proj / "agent.json"), "-i", "question=hi", cwd=tmp_path)
    assert not marker.exists()
    assert done.returncode == 1 and "bytecode cache" in done.stderr and "__pycache__" in done.stderr


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to plant another user's file")
def test_another_users_pyc_in_the_users_own_pycache_is_not_imported(tmp_path):
    """The user's __pycache__ (0755) holding a .pyc another user owns: refused, nothing of it runs."""
    proj, marker = project(tmp_path), tmp_path / "pwned"
    cached = plant_bytecode(proj, marker)
    os.chmod(proj / "__pycache__", 0o755)
    os.chown(cached, 12345, 12345)
    done = run_cli("run", str(proj / "agent.json"), "-i", "question=hi", cwd=tmp_path)
    assert not marker.exists() and done.returncode == 1 and "bytecode cache" in done.stderr


def test_the_users_own_bytecode_cache_still_imports(tmp_path):
    """A __pycache__ Python made for the user (0755, their files) does not stop the module loading."""
    proj = project(tmp_path)
    py_compile.compile(str(proj / "planted_tools.py"), cfile=importlib.util.cache_from_source(
        str(proj / "planted_tools.py")))
    os.chmod(proj / "__pycache__", 0o755)
    done = run_cli("run", str(proj / "agent.json"), "-i", "question=hi", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
