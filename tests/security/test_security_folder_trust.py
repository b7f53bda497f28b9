"""Attack: another user plants a module next to a spec in a folder they can write (``/tmp``), or owns the folder.

Folder trust (the CLI trusts modules next to the spec file) refuses such a folder,
as git refuses a repository of "dubious ownership", and says how to trust explicitly.
"""

import json
import os
import sys

import pytest

from zagent import ConfigError
from zagent.speckit import Trust, trusting
from zagent.speckit.trust import resolve

from .conftest import agent_spec, run_cli as cli
from .test_security_spec_imports import canary


def shared_folder(tmp_path, mode=0o1777):
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, mode)
    return folder


def test_world_writable_folder_is_not_trusted(tmp_path):
    """Trust.for_file of a spec in a 1777 folder (like /tmp) trusts no folder and says why; the same folder
    at 0755 (one's own) is trusted, so the README's examples run as documented."""
    folder = shared_folder(tmp_path, 0o755)
    assert Trust.for_file(folder / "agent.json").folders == (os.path.realpath(folder),)
    os.chmod(folder, 0o1777)
    trust = Trust.for_file(folder / "agent.json")
    assert trust.folders == ()
    assert "writable by every user" in trust.refused[0] and "--trust" in trust.refused[0]


def test_folder_owned_by_another_user_is_not_trusted(tmp_path):
    """Trust.for_file of a spec in a folder another uid owns (mode 0755) trusts no folder."""
    if os.getuid() != 0:
        pytest.skip("making a folder owned by another user needs root")
    folder = shared_folder(tmp_path, 0o755)
    os.chown(folder, 12345, 12345)
    trust = Trust.for_file(folder / "agent.json")
    assert trust.folders == () and "owned by another user" in trust.refused[0]


def test_folder_inside_a_non_sticky_world_writable_folder_is_not_trusted(tmp_path):
    """A folder of one's own inside a 0777 (no sticky bit) folder can be swapped by anyone: not trusted."""
    outer = shared_folder(tmp_path, 0o777)
    (outer / "mine").mkdir()
    os.chmod(outer / "mine", 0o755)
    assert Trust.for_file(outer / "mine" / "agent.json").folders == ()


def test_planted_module_in_a_world_writable_folder_is_not_imported(tmp_path, monkeypatch):
    """A module planted next to the spec in a 1777 folder is refused (not run), naming why and how to trust;
    Trust(folders=(shared,)) given explicitly then imports it (the documented way out)."""
    folder = shared_folder(tmp_path)
    mark = canary(folder, "shared_trust_mod")
    monkeypatch.delitem(sys.modules, "shared_trust_mod", raising=False)  # forgotten after the test
    with trusting(Trust.for_file(folder / "agent.json")), pytest.raises(ConfigError) as err:
        resolve("shared_trust_mod:add", key="tool", base_dir=str(folder))
    assert not mark.exists()
    assert "writable by every user" in str(err.value) and "Trust(folders=" in str(err.value)
    with trusting(Trust(folders=(os.path.realpath(folder),))):
        assert resolve("shared_trust_mod:add", key="tool", base_dir=str(folder))(1, 2) == 3
    sys.modules.pop("shared_trust_mod", None)


def test_cli_run_of_a_spec_in_a_world_writable_folder_does_not_run_a_planted_module(tmp_path):
    """`zagent run /tmp/agent.json` naming a module planted in /tmp fails, runs nothing, and says to pass --trust."""
    folder = shared_folder(tmp_path)
    mark = canary(folder)
    spec = folder / "agent.json"
    spec.write_text(json.dumps(agent_spec(tools=["canary_mod:add"])))
    done = cli("run", str(spec), "--input", "question=hi", cwd=tmp_path)
    assert done.returncode != 0 and not mark.exists()
    assert "writable by every user" in done.stderr and "--trust" in done.stderr


@pytest.mark.parametrize("planted", ["module", "package folder"])
def test_module_others_can_write_in_an_own_folder_is_not_imported(tmp_path, planted):
    """In a folder of one's own, a module file (or package folder) writable by every user is not trusted."""
    folder = shared_folder(tmp_path, 0o755)
    if planted == "module":
        mark = canary(folder, "open_mod")
        os.chmod(folder / "open_mod.py", 0o666)
        path = "open_mod:add"
    else:
        pkg = folder / "open_pkg"
        pkg.mkdir()
        mark = canary(pkg, "__init__")
        os.chmod(pkg, 0o777)
        path = "open_pkg:add"
    with trusting(Trust.for_file(folder / "agent.json")), pytest.raises(ConfigError, match="not trusted"):
        resolve(path, key="tool", base_dir=str(folder))
    assert not mark.exists()
