"""``AgentManager(storage_trust=...)``: the agents loaded from the storage import under that trust (its folder's
modules), lent to specs naming them whatever trust is in force there; other agents are unchanged."""

import json
import sys

import pytest
from zagent import ConfigError
from zagent.plugins.manager import AgentManager
from zagent.plugins.manager.stored import cli_trusts, storage_trust
from zagent.speckit import Trust, trusting

from .conftest import spec


@pytest.fixture
def store(tmp_path):
    """agents/ holding ``r15mgr.py`` (``note``) and ``Clerk.json`` using ``r15mgr:note``."""
    agents = tmp_path / "agents"
    agents.mkdir(mode=0o700)
    (agents / "r15mgr.py").write_text("def note(text: str) -> str:\n    \"\"\"Note it.\"\"\"\n    return text\n")
    (agents / "Clerk.json").write_text(json.dumps(spec("Clerk", tools=["r15mgr:note"])))
    yield agents
    sys.modules.pop("r15mgr", None)


@pytest.mark.parametrize("how", ["by-name", "load_all"])
def test_a_stored_agent_imports_its_folders_module_under_the_storage_trust(kernel, store, how):
    """With ``storage_trust`` its folder's, ``Clerk`` loads (by name or ``load_all``) under no trust in force, and
    is lent again to a spec naming it where nothing is trusted."""
    manager = AgentManager(kernel=kernel, storage=str(store), storage_trust=storage_trust(str(store)))
    clerk = manager.add_agent("Clerk") if how == "by-name" else manager.load_all()[0]
    assert "note" in kernel.names("tools")
    with trusting(Trust()):
        assert manager.add_agent("Clerk") is clerk


def test_load_all_builds_a_stored_agent_calling_an_agent_file_once(kernel, store):
    """``load_all`` of the storage builds a stored agent that calls an agent file of its folder as a tool once:
    it was built again by the inline-name check, whose second build found the nested agent's tool registered
    (``zagent workflow run --agents DIR`` failed for such an agent)."""
    (store / "parts").mkdir(mode=0o700)
    (store / "parts" / "helper.json").write_text(json.dumps(spec("Helper")))
    (store / "Clerk.json").write_text(json.dumps(spec("Clerk", agents=["parts/helper.json"])))
    manager = AgentManager(kernel=kernel, storage=str(store), storage_trust=storage_trust(str(store)))
    (clerk,) = manager.load_all()
    assert manager.get_agent("Clerk") is clerk and "Helper" in kernel.names("tools")


def test_without_a_storage_trust_a_stored_agent_gets_the_trust_in_force(kernel, store):
    """No ``storage_trust``: as before, the trust in force decides (none: a ConfigError naming the import path)."""
    manager = AgentManager(kernel=kernel, storage=str(store))
    with trusting(Trust()), pytest.raises(ConfigError, match="r15mgr:note"):
        manager.add_agent("Clerk")


def test_another_folder_loaded_by_load_all_does_not_get_the_storage_trust(kernel, store, tmp_path):
    """``load_all(other)`` of a folder that is not the storage builds its agents under the trust in force, never
    ``storage_trust``."""
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    (other / "Copy.json").write_text(json.dumps(spec("Copy", tools=["r15mgr:note"])))
    manager = AgentManager(kernel=kernel, storage=str(store), storage_trust=Trust(everything=True))
    with trusting(Trust()), pytest.raises(ConfigError, match="r15mgr:note"):
        manager.load_all(str(other))


def test_cli_trusts_withhold_the_agents_folder_from_the_file(tmp_path, store):
    """``cli_trusts``: the file's trust has its own folder, and the ``--agents`` folder only as withheld; the
    storage's trust has the ``--agents`` folder (a ``.db``'s folder for a ``.db``)."""
    down = tmp_path / "down"
    down.mkdir(mode=0o700)
    (down / "wf.json").write_text("{}")
    file, stored = cli_trusts(str(down / "wf.json"), str(store))
    assert file.folders == (str(down),) and file.withheld == (str(store),)
    assert stored is not None and stored.folders == (str(store),)
    assert storage_trust(str(store / "agents.db")).folders == (str(store),)
    assert cli_trusts(str(down / "wf.json"), None) == (Trust.for_file(str(down / "wf.json")), None)
