"""Round sixteen, environment paths: the variables that move the user's own data (``ZAGENT_MEMORY_DB``,
``ZAGENT_LOG_DB``, ``ZAGENT_SKILLS_DIR``, ``ZAGENT_RECORDINGS``) and ``XDG_DATA_HOME``, set to a relative path.

Attack (all four got through): a user exports ``ZAGENT_MEMORY_DB=memory.db`` once; in a downloaded project that
ships its own ``memory.db`` (or ``skills/``, ``logs.db``, ``recordings/``), zagent reads what the project planted:
memories and skills go into prompts, recordings replay as the model's answers, and the run log is written into the
project's file. Defence: a relative value is a ``ConfigError`` naming the variable and asking for an absolute path
(``zagent.agentkit.privatefiles.users_path``); a relative ``XDG_DATA_HOME`` is ignored, as the XDG specification
says."""

import os

import pytest

from zagent.agentkit.privatefiles import data_folder
from zagent.errors import ConfigError

from .conftest import run_cli


def _defaults():
    from zagent.plugins.memory.paths import default_path as memory_db
    from zagent.plugins.offline.record import default_path as recording
    from zagent.plugins.runlog import default_path as log_db
    from zagent.plugins.skills.runtime import default_folder as skills

    return {"ZAGENT_MEMORY_DB": memory_db, "ZAGENT_LOG_DB": log_db, "ZAGENT_SKILLS_DIR": skills,
            "ZAGENT_RECORDINGS": lambda: recording("openai:gpt-x")}


@pytest.mark.parametrize("variable", ["ZAGENT_MEMORY_DB", "ZAGENT_LOG_DB", "ZAGENT_SKILLS_DIR", "ZAGENT_RECORDINGS"])
@pytest.mark.parametrize("value", ["memory.db", "./skills", "sub/../x.db"])
def test_a_relative_data_variable_is_refused(variable, value, monkeypatch, tmp_path):
    """Attack (got through): ``VARIABLE`` set to a relative path names the downloaded project's file in its folder.
    Defence: a ``ConfigError`` naming the variable and asking for an absolute path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError, match=f"{variable}=.*relative path.*absolute path"):
        _defaults()[variable]()


@pytest.mark.parametrize("variable", ["ZAGENT_MEMORY_DB", "ZAGENT_LOG_DB", "ZAGENT_SKILLS_DIR", "ZAGENT_RECORDINGS"])
def test_an_absolute_or_home_data_variable_still_works(variable, monkeypatch, tmp_path):
    """Guard: an absolute value, and one starting ``~``, are used as given (``~`` expanded)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(variable, "~/data/place")
    assert _defaults()[variable]().startswith(str(tmp_path / "data" / "place"))
    monkeypatch.setenv(variable, str(tmp_path / "abs"))
    assert _defaults()[variable]().startswith(str(tmp_path / "abs"))


def test_a_relative_xdg_data_home_is_ignored(monkeypatch, tmp_path):
    """Attack (got through): ``XDG_DATA_HOME=data`` made zagent's own data (approval records, store identities,
    memory) each working folder's ``data/zagent``. Defence: ignored as the XDG specification says; the home's
    ``~/.local/share`` is used."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", "data")
    assert data_folder("memory.db") == str(tmp_path / "home" / ".local" / "share" / "zagent" / "memory.db")


def test_the_memory_command_refuses_a_relative_memory_db_and_leaves_the_planted_file(tmp_path):
    """Attack (got through): ``zagent memory`` run in a downloaded project with ``ZAGENT_MEMORY_DB=memory.db``
    read the project's planted ``memory.db``. Defence: the command fails naming the variable; the file is left as
    it was, never opened."""
    planted = tmp_path / "memory.db"
    planted.write_bytes(b"planted")
    done = run_cli("memory", "list", cwd=tmp_path,
                   env={"ZAGENT_MEMORY_DB": "memory.db", "ZAGENT_PLUGINS": "offline,memory,cli"})
    assert done.returncode != 0
    assert "ZAGENT_MEMORY_DB" in done.stderr and "absolute path" in done.stderr
    assert planted.read_bytes() == b"planted"
    assert sorted(os.listdir(tmp_path)) == ["memory.db"]
