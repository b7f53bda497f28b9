"""Hold-out round four: a workflow file loaded in Python takes its inline agents' identity from its content.

Attacks tried (session 2026-12-03, redteam2) and whether they got through before this module's fix:

- an app running ``WorkFlowGraph.load(path)`` with ``WorkFlowExecutor`` (no ``spec_file`` around it): a hostile
  workflow file elsewhere, a byte-for-byte copy of the user's, has an inline agent with long-term memory: GOT
  THROUGH (both built their agent under the same content-derived namespace, so the copy recalls the user's
  memories) -- fixed: ``load`` remembers the file (outside the Struct, so no spec can claim it) and the executor
  builds the inline agents under ``spec_file(path)``, as ``zagent workflow run`` does
"""

import json

from .conftest import make_kernel

WALLET = {"name": "Wallet", "prompt": "Answer: {question}", "inputs": [{"name": "question"}],
          "outputs": [{"name": "answer"}], "parse_mode": "str", "use_long_term_memory": True}


def workflow_file(folder):
    folder.mkdir()
    spec = {"name": "w", "goal": "g", "inputs": [{"name": "question"}], "nodes": [
        {"name": "a", "description": "a", "inputs": [{"name": "question"}], "outputs": [{"name": "answer"}],
         "agents": [WALLET]}]}
    (folder / "wf.json").write_text(json.dumps(spec))
    return folder / "wf.json"


def namespace_of(path):
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    k = make_kernel()
    ex = WorkFlowExecutor(kernel=k, llm="test:offline")
    try:
        ex.run(WorkFlowGraph.load(str(path)), {"question": "hi"})
    except Exception:
        pass  # the agents are built before any node runs; only their namespace matters here
    agent = ex.manager.add_agent("Wallet")
    k.close()
    return agent.namespace


def test_two_copies_of_a_workflow_file_keep_their_inline_agents_memories_apart(tmp_path, monkeypatch):
    """Same content, two files: ``WorkFlowGraph.load`` + executor give the inline agents two namespaces."""
    monkeypatch.setenv("ZAGENT_MEMORY_DB", str(tmp_path / "memory.db"))
    mine, copy = workflow_file(tmp_path / "mine"), workflow_file(tmp_path / "evil")
    assert namespace_of(mine) != namespace_of(copy)


def test_a_spec_cannot_claim_a_source_file():
    """``loaded_from`` lives outside the Struct: a workflow dict naming a ``source`` key is refused as unknown."""
    import pytest

    from zagent.errors import ConfigError
    from zagent.plugins.workflow import WorkFlowGraph
    from zagent.plugins.workflow.graph import loaded_from

    with pytest.raises(ConfigError):
        WorkFlowGraph.from_dict({"goal": "g", "source": "/home/user/wf.json"})
    assert loaded_from(WorkFlowGraph.from_dict({"goal": "g"})) is None
