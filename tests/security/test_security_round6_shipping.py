"""Round six: a remote executor's worker rebuilds a spec as the driver built it: the driver's trust and the spec
file's identity travel in the payload (``zagent.agentkit.units.shipped_trust`` / ``shipped``).

Attacks tried (a shipping test executor: JSON over the "wire", a separate worker kernel, as Ray or a process
pool) and whether they got through before this round's fix:

- an agent file with long-term memory, batched on a remote executor: GOT THROUGH (the worker built the agent
  from the shipped dict without the file, so its memory namespace was the content's: a byte-for-byte copy of the
  file elsewhere shares the worker's memories) -- fixed: the payload names the spec file, the worker builds
  under it
- the inline agent of a workflow file (``WorkFlowGraph.load``) on a remote executor: GOT THROUGH (same)
- a ``Trust(dry=True)`` driver (import nothing) shipping a unit: GOT THROUGH (the worker got a plain trust,
  under which the kernel's ``trusted_imports`` are imported: widened) -- fixed: ``dry`` travels
- a relative ``llm_config`` path of an agent file batched on a remote executor: refused on the worker (its
  folder was not the worker's spec folder; failed closed) -- fixed with the identity: the worker writes next to
  the file, as the driver would
"""

import json
import os

from zagent.speckit import Trust, trusting

from tests.batch.shipping import ShippingExecutor

from .conftest import PLUGINS, agent_spec, make_kernel

BATCH = ["zagent.plugins.batch"]
WALLET = agent_spec(name="Wallet", use_long_term_memory=True)
OWN_MODEL = {**WALLET, "llm_config": {"model": "test:offline"}}  # as shipped: the executor's model not injected


def worker_agents(ex, key):
    return list(ex.worker.stash.get_or_create(key, dict).values())


def shipping():
    ex = ShippingExecutor()
    ex.worker.close()
    from zagent import Kernel

    ex.worker = Kernel(plugins=[*PLUGINS, *BATCH], entry_points=False, strict=True)
    return ex


def test_a_batched_agent_file_keeps_its_identity_on_the_worker(tmp_path, monkeypatch):
    """``k.batch('agent.json', executor=remote)``: the worker's agent has the memory namespace the driver's has."""
    from zagent.agentkit.units import WORKER_AGENTS

    monkeypatch.setenv("ZAGENT_MEMORY_DB", str(tmp_path / "memory.db"))
    (tmp_path / "agent.json").write_text(json.dumps(WALLET))
    k = make_kernel(plugins=BATCH)
    ex = shipping()
    report = k.batch(str(tmp_path / "agent.json"), [{"question": "hi"}], executor=ex)
    assert report.results[0]["ok"], report.results
    [remote] = worker_agents(ex, WORKER_AGENTS)
    assert remote.namespace == k.agent(str(tmp_path / "agent.json")).namespace
    k.close()
    ex.worker.close()


def test_a_workflow_files_inline_agent_keeps_its_identity_on_the_worker(tmp_path, monkeypatch):
    """``WorkFlowGraph.load`` run on a remote executor: the worker's inline agent has the driver's namespace."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph
    from zagent.agentkit.units import WORKER_AGENTS as BUILT

    monkeypatch.setenv("ZAGENT_MEMORY_DB", str(tmp_path / "memory.db"))
    (tmp_path / "wf.json").write_text(json.dumps({"name": "w", "goal": "g", "inputs": [{"name": "question"}],
                                                  "nodes": [{"name": "a", "description": "a",
                                                             "inputs": [{"name": "question"}],
                                                             "outputs": [{"name": "answer"}], "agents": [OWN_MODEL]}]}))
    k = make_kernel(plugins=BATCH)
    ex = shipping()
    flow = WorkFlowExecutor(kernel=k, executor=ex)
    flow.run(WorkFlowGraph.load(str(tmp_path / "wf.json")), {"question": "hi"})
    [remote] = worker_agents(ex, BUILT)
    assert remote.namespace == flow.manager.add_agent("Wallet").namespace
    k.close()
    ex.worker.close()


def test_a_dry_trust_stays_dry_on_the_worker():
    """A unit shipped under ``Trust(dry=True)`` is rebuilt under a dry trust (nothing imported), not widened."""
    from zagent.agentkit.units import shipped, shipped_trust

    with trusting(Trust(dry=True)):
        payload = json.loads(json.dumps({"trust": shipped_trust()}))
    with shipped(payload) as trust:
        assert trust.dry and not trust.everything


def test_a_relative_path_of_a_batched_agent_file_lies_next_to_it_on_the_worker(tmp_path, monkeypatch):
    """llm_config record path 'rec.jsonl' of a file in A, batched on a remote executor from cwd B: A/rec.jsonl."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    monkeypatch.chdir(b)
    (a / "agent.json").write_text(json.dumps(agent_spec(llm_config={"model": "record:test:offline",
                                                                    "path": "rec.jsonl"})))
    k = make_kernel(plugins=BATCH)
    ex = shipping()
    report = k.batch(str(a / "agent.json"), [{"question": "hi"}], executor=ex)
    assert report.results[0]["ok"], report.results
    assert (a / "rec.jsonl").is_file() and os.listdir(b) == []
    k.close()
    ex.worker.close()


def test_the_executors_model_keeps_the_workers_namespace_the_drivers(tmp_path, monkeypatch):
    """``WorkFlowExecutor(llm=...)`` on a remote executor, for an inline agent that names no model: the worker's
    agent gets the same model and the same memory namespace as the driver's (the model is not written into the
    shipped spec, where it would change the namespace)."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph
    from zagent.agentkit.units import WORKER_AGENTS

    monkeypatch.setenv("ZAGENT_MEMORY_DB", str(tmp_path / "memory.db"))
    (tmp_path / "wf.json").write_text(json.dumps({"name": "w", "goal": "g", "inputs": [{"name": "question"}],
                                                  "nodes": [{"name": "a", "description": "a",
                                                             "inputs": [{"name": "question"}],
                                                             "outputs": [{"name": "answer"}], "agents": [WALLET]}]}))
    k = make_kernel(plugins=BATCH)
    ex = shipping()
    flow = WorkFlowExecutor(kernel=k, llm="test:offline", executor=ex)
    flow.run(WorkFlowGraph.load(str(tmp_path / "wf.json")), {"question": "hi"})
    [remote] = worker_agents(ex, WORKER_AGENTS)
    local = flow.manager.add_agent("Wallet")
    assert (remote.namespace, remote.llm.name) == (local.namespace, local.llm.name)
    k.close()
    ex.worker.close()


def test_why_a_folder_was_not_trusted_travels_to_the_worker(tmp_path):
    """A trust whose spec folder was refused (a world-writable folder) ships its reason: the worker's refusal of
    an import from it says why, as the driver's would."""
    from zagent.agentkit.units import shipped, shipped_trust

    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    trust = Trust.for_file(str(folder / "agent.json"))
    assert trust.refused  # the folder is writable by others
    with trusting(trust):
        payload = json.loads(json.dumps({"trust": shipped_trust()}))
    with shipped(payload) as on_worker:
        assert on_worker.refused == trust.refused and on_worker.folders == ()
