"""Round six: group chat, batch and eval files an app loads through the Python API (no CLI, no trust given).

Attacks tried and whether they got through before this round's fix:

- a hostile group chat file (``GroupChat.load``) naming a speaker-selection policy by import path, its module
  next to the file: HELD (imported only under a trust the app grants; the file's folder gives none)
- a hostile agent file batched from Python (``k.batch(path, items)``) naming a tool by import path next to it:
  HELD (the same check; a file loaded by the Python API is data)
- a cases file (``evaluate(k, agent, path)``) whose scorer names a module next to it, while the app trusts that
  folder for the agent: HELD (a cases file gets no trust but the kernel's ``trusted_imports``)
- a copy of the user's agent file elsewhere, byte for byte, batched from Python with long-term memory on: GOT
  THROUGH (``k.batch(path)`` built the agent from the file's content without ``spec_file``, so both copies got
  one content-derived memory namespace: the copy recalls the user's memories) -- fixed: the batch driver builds
  a file's agent under ``spec_file(path)``, as ``kernel.agent(path)`` and ``zagent batch`` do
"""

import json

import pytest

from zagent import ConfigError
from zagent.speckit import Trust, trusting

from .conftest import agent_spec, make_kernel

BATCH_PLUGINS = ["zagent.plugins.batch", "zagent.plugins.evals"]


def canary(folder, name):
    """A module ``name`` in ``folder`` whose import leaves ``name.ran`` (importing it is running it)."""
    mark = folder / f"{name}.ran"
    (folder / f"{name}.py").write_text(f"open({str(mark)!r}, 'w').write('ran')\n"
                                       "def policy(**options):\n    return lambda *a, **k: None\n"
                                       "def add(a: int, b: int) -> int:\n    'Add.'\n    return a + b\n"
                                       "def score(output, expected, case):\n    return True\n")
    return mark


def test_a_group_chat_files_selection_policy_is_not_imported(tmp_path):
    """``GroupChat.load(path, k)`` with selection policy 'r6_gc_mod:policy' (module next to it): refused, not run."""
    from zagent.plugins.groupchat import GroupChat

    mark = canary(tmp_path, "r6_gc_mod")
    (tmp_path / "chat.json").write_text(json.dumps({
        "type": "groupchat", "name": "c", "agents": [agent_spec(name="A"), agent_spec(name="B")],
        "selection": {"policy": "r6_gc_mod:policy"}}))
    k = make_kernel()
    with pytest.raises(ConfigError, match="r6_gc_mod:policy.*not trusted"):
        GroupChat.load(str(tmp_path / "chat.json"), k)
    assert not mark.exists()
    k.close()


def test_an_agent_file_batched_from_python_imports_no_tool_next_to_it(tmp_path):
    """``k.batch('agent.json', items)`` with tool 'r6_batch_mod:add' next to the file: refused, not run."""
    mark = canary(tmp_path, "r6_batch_mod")
    (tmp_path / "agent.json").write_text(json.dumps(agent_spec(tools=["r6_batch_mod:add"])))
    k = make_kernel(plugins=BATCH_PLUGINS)
    with pytest.raises(ConfigError, match="r6_batch_mod:add.*not trusted"):
        k.batch(str(tmp_path / "agent.json"), [{"question": "hi"}])
    assert not mark.exists()
    k.close()


def test_a_cases_files_scorer_gets_none_of_the_agents_folder_trust(tmp_path):
    """``evaluate`` with the app trusting the agent's folder: a cases file there naming 'r6_case_mod:score' is
    refused and never imported (the trust covers the agent, not the data)."""
    from zagent.plugins.evals import evaluate

    mark = canary(tmp_path, "r6_case_mod")
    (tmp_path / "agent.json").write_text(json.dumps(agent_spec()))
    (tmp_path / "cases.jsonl").write_text(json.dumps({
        "id": "c1", "inputs": {"question": "hi"}, "scorers": [{"name": "function", "fn": "r6_case_mod:score"}]}))
    k = make_kernel(plugins=BATCH_PLUGINS)
    with trusting(Trust.for_file(tmp_path / "agent.json")), pytest.raises(ConfigError, match="r6_case_mod:score"):
        evaluate(k, str(tmp_path / "agent.json"), str(tmp_path / "cases.jsonl"))
    assert not mark.exists()
    k.close()


def batched_namespace(path, monkeypatch):
    """The memory namespace of the agent ``k.batch(path, ...)`` runs."""
    import zagent.plugins.batch.driver as driver

    seen = []
    real = driver.agent_item

    async def spy(kernel, agent, inputs):
        seen.append(agent.namespace)
        return await real(kernel, agent, inputs)

    monkeypatch.setattr(driver, "agent_item", spy)
    k = make_kernel(plugins=BATCH_PLUGINS)
    k.batch(str(path), [{"question": "hi"}])
    k.close()
    return seen[0]


def test_two_copies_of_an_agent_file_batched_from_python_keep_their_memories_apart(tmp_path, monkeypatch):
    """Same content, two files, each ``k.batch(path)``-ed: two memory namespaces (each file its own identity)."""
    monkeypatch.setenv("ZAGENT_MEMORY_DB", str(tmp_path / "memory.db"))
    paths = []
    for where in ("mine", "evil"):
        (tmp_path / where).mkdir()
        paths.append(tmp_path / where / "agent.json")
        paths[-1].write_text(json.dumps(agent_spec(use_long_term_memory=True)))
    mine, copy = (batched_namespace(p, monkeypatch) for p in paths)
    assert mine != copy
    k = make_kernel()
    assert mine == k.agent(str(paths[0])).namespace  # the identity kernel.agent(path) gives the same file
    k.close()
