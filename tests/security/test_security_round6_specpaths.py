"""Round six: relative paths in a spec file lie next to the file, not in the process's working directory.

Before the fix a spec in folder A naming ``trajectory_path: runs/t.jsonl`` and loaded while the cwd was B
resolved to B/runs/t.jsonl and was refused as outside the spec folder (or, with B inside an allowed folder,
written there). Every refusal stays: ``..`` out of the folder, absolute paths elsewhere, symlinks out.
"""

import json
import os

import pytest

from zagent import ConfigError

from .conftest import agent_spec, make_kernel


def folders(tmp_path, monkeypatch):
    """``(a, b)``: the spec's folder ``a`` and the cwd ``b``, a different folder."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    monkeypatch.chdir(b)
    return a, b


def react_file(a, **over):
    spec = a / "agent.json"
    spec.write_text(json.dumps({"type": "react", "name": "r", "tools": ["word_count"], **over}))
    return spec


def test_a_relative_trajectory_path_is_written_next_to_the_spec_file(tmp_path, monkeypatch):
    """trajectory_path 'runs/t.jsonl' of a spec in A, built while the cwd is B: A/runs/t.jsonl, nothing in B."""
    a, b = folders(tmp_path, monkeypatch)
    k = make_kernel()
    agent = k.agent(str(react_file(a, trajectory_path="runs/t.jsonl")))
    agent.llm = k.llm("scripted:r", replies=["done"])
    agent.chat("hi", use_react=True)
    assert (a / "runs" / "t.jsonl").is_file()
    assert os.listdir(b) == []
    k.close()


def test_relative_live_trajectory_and_checkpoints_are_next_to_the_spec_file(tmp_path, monkeypatch):
    """live_trajectory_path and checkpoints given relative in a spec file in A: the agent uses A's files."""
    a, b = folders(tmp_path, monkeypatch)
    k = make_kernel()
    agent = k.agent(str(react_file(a, live_trajectory_path="live.jsonl", checkpoints="cp.db")))
    assert agent.live_trajectory_path == str(a / "live.jsonl")
    agent.llm = k.llm("scripted:r", replies=["done"])
    agent.chat("hi", use_react=True)
    assert (a / "live.jsonl").is_file() and (a / "cp.db").is_file()
    assert os.listdir(b) == []
    k.close()


def test_a_relative_long_term_memory_path_is_next_to_the_spec_file(tmp_path, monkeypatch):
    """long_term_memory.path 'ltm.db' of a customize agent file in A (cwd B) opens A/ltm.db."""
    a, b = folders(tmp_path, monkeypatch)
    k = make_kernel(plugins=["zagent.plugins.memory"])
    spec = a / "qa.json"
    spec.write_text(json.dumps(agent_spec(use_long_term_memory=True,
                                          long_term_memory={"name": "sqlite", "path": "ltm.db"})))
    agent = k.agent(str(spec))
    agent.llm = k.llm("scripted:a", replies=["yes"])
    agent(question="q")
    assert (a / "ltm.db").is_file()
    assert os.listdir(b) == []
    k.close()


def test_a_relative_record_path_in_llm_config_is_next_to_the_spec_file(tmp_path, monkeypatch):
    """llm_config {"model": "record:test:offline", "path": "rec.jsonl"} in a spec file in A records to A."""
    a, b = folders(tmp_path, monkeypatch)
    k = make_kernel()
    spec = a / "qa.json"
    spec.write_text(json.dumps(agent_spec(llm_config={"model": "record:test:offline", "path": "rec.jsonl"})))
    k.agent(str(spec))(question="hi")
    assert (a / "rec.jsonl").is_file()
    assert os.listdir(b) == []
    k.close()


def test_a_relative_path_out_of_the_spec_folder_is_still_refused(tmp_path, monkeypatch):
    """trajectory_path '../b/t.jsonl' (out of A by '..') is refused, even though the cwd is B."""
    a, b = folders(tmp_path, monkeypatch)
    k = make_kernel()
    with pytest.raises(ConfigError, match="outside the folders"):
        k.agent(str(react_file(a, trajectory_path="../b/t.jsonl")))
    assert os.listdir(b) == []
    k.close()


def test_a_relative_symlink_out_of_the_spec_folder_is_still_refused(tmp_path, monkeypatch):
    """checkpoints 'cp.db' where A/cp.db is a symlink to a file in B: refused, the link not followed."""
    a, b = folders(tmp_path, monkeypatch)
    (b / "precious.db").write_text("mine")
    (a / "cp.db").symlink_to(b / "precious.db")
    k = make_kernel()
    with pytest.raises(ConfigError, match="outside the folders"):
        k.agent(str(react_file(a, checkpoints="cp.db")))
    assert (b / "precious.db").read_text() == "mine"
    k.close()


def test_a_trusted_spec_files_relative_paths_are_next_to_it_too(tmp_path, monkeypatch):
    """k.agent(file, trust=True): its relative trajectory_path and record: path also lie in A, not the cwd B."""
    a, b = folders(tmp_path, monkeypatch)
    k = make_kernel()
    agent = k.agent(str(react_file(a, trajectory_path="t.jsonl",
                                   llm_config={"model": "record:test:offline", "path": "rec.jsonl"})), trust=True)
    assert agent.trajectory_path == str(a / "t.jsonl")
    agent.chat("hi", use_react=True)
    assert (a / "rec.jsonl").is_file() and (a / "t.jsonl").is_file()
    assert os.listdir(b) == []
    k.close()


def test_an_agent_file_named_by_a_spec_resolves_its_paths_next_to_itself(tmp_path, monkeypatch):
    """A spec in A naming agent file 'sub/helper.json' whose trajectory_path is 't.jsonl': A/sub/t.jsonl."""
    a, b = folders(tmp_path, monkeypatch)
    (a / "sub").mkdir()
    (a / "sub" / "helper.json").write_text(json.dumps({"type": "react", "name": "helper", "tools": ["word_count"],
                                                       "description": "helps", "trajectory_path": "t.jsonl"}))
    k = make_kernel()
    k.agent(str(react_file(a, agents=["sub/helper.json"])))
    from zagent.speckit import spec_file
    from zagent.plugins.actions.astool import load_agent_refs

    with spec_file(a / "agent.json"):
        [helper] = load_agent_refs(k, ["sub/helper.json"])
    assert helper.trajectory_path == str(a / "sub" / "t.jsonl")
    k.close()


def test_a_managers_agent_folder_resolves_each_files_paths_next_to_it(tmp_path, monkeypatch):
    """``AgentManager.load_all(A)`` of a react file with trajectory_path 't.jsonl', cwd B: it uses A/t.jsonl."""
    from zagent.plugins.manager import AgentManager

    a, b = folders(tmp_path, monkeypatch)
    react_file(a, trajectory_path="t.jsonl")
    k = make_kernel()
    [agent] = AgentManager(kernel=k).load_all(str(a))
    assert agent.trajectory_path == str(a / "t.jsonl")
    k.close()
