"""Workflow units that run on a remote executor's workers (``zagent.agentkit.units``), and batch jobs of graphs.

* ``run_node(kernel, payload)``: one node run shipped by the workflow
  executor (``executor.node_payload``): its agents are rebuilt from their specs
  on the worker's kernel (once per spec and kernel, under the trust the
  driver shipped: ``zagent.speckit.trust``) and called as the driver would, without locks (the driver holds them) or checkpoints (the driver
  writes them). Returns ``{"outputs": ..., "usage": ...}`` (tokens spent), or with ``"interrupt"`` (the
  question, as data) when an agent asked a person: the node's answers so far come in ``payload["answers"]``.
* ``batch_job(graph, kernel, llm=None)``: the ``zagent.agentkit.units.BatchJob`` running the
  whole graph once per batch item, here (``local``) or on a worker
  (``run_workflow_item``); either way on a fresh ``WorkFlowExecutor`` per item.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import msgspec
from zagent.agentkit.interrupts import Asking, asking
from zagent.errors import Interrupted
from zagent.agentkit.units import shipped, shipped_trust, worker_agent
from zagent.types import Usage

from .calls import call_step, node_outputs
from .graph import WorkFlowGraph, WorkFlowNode, loaded_from

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

WORKFLOW_RUNNER = "zagent.plugins.workflow.units:run_workflow_item"

async def run_node(kernel: "Kernel", payload: dict[str, Any]) -> dict[str, Any]:
    """Run one shipped node (see the module docstring)."""
    node = msgspec.convert(payload["node"], WorkFlowNode)
    values = dict(payload.get("values") or {})
    produced: dict[str, Any] = {}
    usage = Usage()
    with asking(Asking(payload.get("answers") or (), vouched=payload.get("vouched"), node=node.name)) as scope:
        try:
            for agent_name, spec in payload["agents"]:
                usage = usage + await call_step(worker_agent(kernel, spec, payload), agent_name, node, values, produced,
                                                kernel, payload["run_id"])
        except Interrupted:
            pass  # in scope.asked: sent back as data
        if scope.asked is not None:
            return {"outputs": {}, "usage": msgspec.to_builtins(usage), "interrupt": msgspec.to_builtins(scope.asked)}
    return {"outputs": node_outputs(node, produced), "usage": msgspec.to_builtins(usage)}


async def _run_graph(kernel: "Kernel", graph: WorkFlowGraph, llm: Optional[str], inputs: dict[str, Any]) -> dict[str, Any]:
    from .executor import WorkFlowExecutor

    result = await WorkFlowExecutor(kernel=kernel, llm=llm, executor="local").arun(graph, inputs)
    return {"output": result.outputs, "usage": msgspec.to_builtins(result.usage)}


async def run_workflow_item(kernel: "Kernel", payload: dict[str, Any]) -> dict[str, Any]:
    """One batch item of a workflow on a worker: the graph from ``payload['graph']``, run with the item's inputs."""
    graph = WorkFlowGraph.from_dict(payload["graph"])
    with shipped(payload):
        return await _run_graph(kernel, graph, payload.get("llm"), dict(payload.get("inputs") or {}))


def batch_job(graph: WorkFlowGraph, kernel: "Kernel", llm: Optional[str] = None) -> Any:
    """The batch ``BatchJob`` for ``graph`` (validated now, so a broken graph fails before any item)."""
    from zagent.agentkit.units import BatchJob

    graph.validate()
    from zagent.agentkit.secrets import public_data

    # Workers get the graph without secrets (inline agents' API keys come from their own environment)
    # and the driver's trust for the import paths it names.
    return BatchJob(name=graph.name, local=lambda inputs: _run_graph(kernel, graph, llm, inputs),
               runner=WORKFLOW_RUNNER,
               payload={"graph": public_data(graph.to_dict()), "llm": llm, "trust": shipped_trust(loaded_from(graph))})
