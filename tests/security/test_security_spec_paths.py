"""Attack: a spec names a file for zagent to write or read (a wrapper's path, a trajectory, a database).

A spec's paths stay in the spec's folder or a folder the app configured, symlinks
out of it are refused, and a symlink another user planted is never followed.
"""

import json
import os
import stat

import pytest

from zagent import ConfigError

from .conftest import agent_spec, make_kernel, run_cli


def victim(tmp_path):
    """A file the user cares about (``~/.bashrc``), outside any spec folder."""
    home = tmp_path / "home"
    home.mkdir()
    target = home / ".bashrc"
    target.write_text("export PATH=/usr/bin\n")
    return target


@pytest.mark.parametrize("wrapper", ["record:test:offline", "replay:x"])
def test_wrapper_path_in_llm_config_is_refused(tmp_path, wrapper):
    """llm_config {"model": "record:test:offline", "path": "~/.bashrc"} in k.agent(spec): refused, file untouched."""
    target = victim(tmp_path)
    k = make_kernel()
    with pytest.raises(ConfigError, match="outside the folders|refused"):
        agent = k.agent(agent_spec(llm_config={"model": wrapper, "path": str(target)}))
        agent(question="$(touch pwned)")
    assert target.read_text() == "export PATH=/usr/bin\n"
    k.close()


def test_wrapper_path_with_the_right_suffix_outside_the_folder_is_refused(tmp_path):
    """A record: path ending in .jsonl but outside every allowed folder is refused (suffix alone is not enough)."""
    k = make_kernel()
    with pytest.raises(ConfigError, match="outside the folders"):
        k.agent(agent_spec(llm_config={"model": "record:test:offline", "path": str(tmp_path / "x" / "r.jsonl")}))
    assert not (tmp_path / "x").exists()
    k.close()


def test_any_path_named_option_of_a_future_wrapper_is_checked(tmp_path):
    """A provider that declares nothing still gets its 'path'/'*_file' options checked when a spec sets them."""
    made = []

    class Plugin:
        def zagent_register_providers(self, register, kernel):
            register("wrap", lambda model, **options: made.append(options) or kernel.llm("test:offline"))

    k = make_kernel(plugins=[Plugin()])
    with pytest.raises(ConfigError, match="out_file"):
        k.agent(agent_spec(llm_config={"model": "wrap:x", "out_file": str(victim(tmp_path))}))
    assert made == []
    k.close()


def test_wrapper_path_in_the_app_configured_folder_records(tmp_path):
    """A record: path inside Kernel(config={'spec_paths': [...]}) is allowed and the recording is 0600."""
    data = tmp_path / "data"
    data.mkdir()
    k = make_kernel(config={"spec_paths": [str(data)]})
    agent = k.agent(agent_spec(llm_config={"model": "record:test:offline", "path": str(data / "r.jsonl")}))
    agent(question="hi")
    assert json.loads((data / "r.jsonl").read_text().splitlines()[0])["model"] == "test:offline"
    assert stat.S_IMODE(os.stat(data / "r.jsonl").st_mode) == 0o600
    k.close()


def test_spec_file_may_record_next_to_itself(tmp_path):
    """k.agent('folder/agent.json') may name a recording in its own folder; it is created 0600."""
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec(llm_config={"model": "record:test:offline",
                                                       "path": str(tmp_path / "run.jsonl")})))
    k = make_kernel()
    k.agent(str(spec))(question="hi")
    assert stat.S_IMODE(os.stat(tmp_path / "run.jsonl").st_mode) == 0o600  # the user's alone
    k.close()


def test_symlink_from_the_spec_folder_out_of_it_is_refused(tmp_path):
    """A trajectory_path inside the allowed folder that is a symlink to ~/.bashrc is refused when built."""
    target = victim(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    (data / "t.jsonl").symlink_to(target)
    k = make_kernel(config={"spec_paths": [str(data)]})
    with pytest.raises(ConfigError, match="outside the folders"):
        k.agent({"type": "react", "name": "r", "trajectory_path": str(data / "t.jsonl")})
    assert target.read_text() == "export PATH=/usr/bin\n"
    k.close()


def test_react_trajectory_outside_the_folder_is_refused(tmp_path):
    """trajectory_path '/elsewhere/x.jsonl' in a react dict spec (no folder, none configured) is refused."""
    k = make_kernel()
    with pytest.raises(ConfigError, match="trajectory_path"):
        k.agent({"type": "react", "name": "r", "trajectory_path": str(tmp_path / "x.jsonl")})
    k.close()


def test_cli_run_without_trust_refuses_a_record_path_outside_the_spec_folder(tmp_path):
    """`zagent run evil.json` (no --trust) with record: path at ~/.bashrc fails and leaves the file alone."""
    target = victim(tmp_path)
    specs = tmp_path / "specs"
    specs.mkdir()
    evil = specs / "evil.json"
    evil.write_text(json.dumps(agent_spec(llm_config={"model": "record:test:offline", "path": str(target)})))
    done = run_cli("run", str(evil), "--input", "question=hi", cwd=tmp_path)
    assert done.returncode != 0
    assert "llm_config 'path'" in done.stderr and "--trust" in done.stderr
    assert target.read_text() == "export PATH=/usr/bin\n"


def test_recording_through_a_planted_symlink_is_refused(tmp_path):
    """record: to a .jsonl that another uid planted as a symlink to ~/.bashrc writes nothing through it."""
    if os.getuid() != 0:
        pytest.skip("planting a symlink owned by another user needs root")
    target = victim(tmp_path)
    link = tmp_path / "t.jsonl"
    link.symlink_to(target)
    os.lchown(link, 12345, 12345)
    k = make_kernel()
    with pytest.raises(ConfigError, match="another user"):
        k.llm("record:test:offline", path=str(link)).complete("hi")
    assert target.read_text() == "export PATH=/usr/bin\n"
    k.close()


def test_trajectory_through_a_planted_symlink_is_not_appended(tmp_path):
    """A react run whose trajectory .jsonl is another user's symlink to ~/.bashrc fails and leaves it alone."""
    if os.getuid() != 0:
        pytest.skip("planting a symlink owned by another user needs root")
    from zagent.plugins.react.trajectory import append_trajectory
    from zagent.plugins.react.state import ReActState

    target = victim(tmp_path)
    link = tmp_path / "t.jsonl"
    link.symlink_to(target)
    os.lchown(link, 12345, 12345)
    with pytest.raises(ConfigError):
        append_trajectory(str(link), ReActState(run_id="r", agent="a", task="t"))
    assert target.read_text() == "export PATH=/usr/bin\n"


def test_another_users_regular_file_is_not_written(tmp_path):
    """A trajectory .jsonl pre-created by another user (so they can read it) is not appended to."""
    if os.getuid() != 0:
        pytest.skip("making a file owned by another user needs root")
    from zagent.plugins.react.state import ReActState
    from zagent.plugins.react.trajectory import append_trajectory

    planted = tmp_path / "t.jsonl"
    planted.write_text("")
    os.chown(planted, 12345, 12345)
    with pytest.raises(ConfigError, match="another user"):
        append_trajectory(str(planted), ReActState(run_id="r", agent="a", task="t"))
    assert planted.read_text() == ""


@pytest.mark.parametrize("make", ["trajectory", "record", "memory", "checkpoints", "runlog"])
def test_files_zagent_creates_are_0600_in_0700_folders(tmp_path, make):
    """Trajectories, recordings, memory/checkpoint databases and logs.db are created 0600 in new 0700 folders."""
    folder = tmp_path / "new" / "deeper"
    old = os.umask(0o022)
    try:
        k = make_kernel(plugins=["zagent.plugins.runlog"] if make == "runlog" else ())
        if make == "trajectory":
            from zagent.plugins.react.state import ReActState
            from zagent.plugins.react.trajectory import append_trajectory

            path = folder / "t.jsonl"
            append_trajectory(str(path), ReActState(run_id="r", agent="a", task="t"))
        elif make == "record":
            path = folder / "r.jsonl"
            k.llm("record:test:offline", path=str(path)).complete("hi")
        elif make == "runlog":
            from zagent.plugins.runlog.store import RunLogStore

            path = folder / "logs.db"
            RunLogStore.open(str(path)).db.close()
        else:  # the default file: its folders are zagent's to create
            path = folder / "memory.db"
            os.environ["ZAGENT_MEMORY_DB"] = str(path)
            try:
                k.memory("sqlite" if make == "memory" else "checkpoints").close()
            finally:
                del os.environ["ZAGENT_MEMORY_DB"]
        k.close()
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(folder.parent).st_mode) == 0o700


def test_the_default_run_log_an_older_zagent_left_readable_becomes_private(tmp_path, monkeypatch):
    """A logs.db left 0644 in a 0755 folder (as before) is made 0600 in 0700 when the run log opens it."""
    from zagent.plugins.runlog.store import RunLogStore

    folder = tmp_path / "share" / "zagent"
    folder.mkdir(parents=True)
    os.chmod(folder, 0o755)
    monkeypatch.setenv("ZAGENT_LOG_DB", str(folder / "logs.db"))
    RunLogStore.open().db.close()
    os.chmod(folder / "logs.db", 0o644)
    RunLogStore.open().db.close()
    assert stat.S_IMODE(os.stat(folder / "logs.db").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700


def test_a_planted_hard_link_to_an_own_file_is_not_appended(tmp_path):
    """A trajectory .jsonl that is a hard link to ~/.bashrc (same owner, same file) is not appended to."""
    from zagent.plugins.react.state import ReActState
    from zagent.plugins.react.trajectory import append_trajectory

    target = victim(tmp_path)
    link = tmp_path / "t.jsonl"
    os.link(target, link)
    with pytest.raises(ConfigError, match="hard links"):
        append_trajectory(str(link), ReActState(run_id="r", agent="a", task="t"))
    assert target.read_text() == "export PATH=/usr/bin\n"
