"""Workflow units for a remote executor's workers (``zagent.agentkit.units``): ``run_node`` runs one node the executor
shipped (``calls.node_payload``) and returns ``{"outputs", "usage"}``, or the ``"interrupt"`` an agent raised;
``batch_job`` runs the whole graph once per batch item, here or on a worker."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import msgspec
from zagent.agentkit.counters import RunCounter
from zagent.agentkit.interrupts import Asking, asking
from zagent.errors import Interrupted
from zagent.agentkit.units import shipped, shipped_trust, worker_agent
from zagent.speckit.paths import reserving
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
    questions = payload.get("questions")  # asked so far at each position (a driver of before them: none)
    record = None if questions is None else RunCounter.from_state(questions)
    with asking(Asking(payload.get("answers") or (), vouched=payload.get("vouched"),
                       passes=int(payload.get("passes") or 0), record=record, run=payload.get("run_id"),
                       store=str(payload.get("store") or ""), node=node.name)) as scope:
        try:
            own = payload.get("agent_trust") or {}  # a stored agent's own trust (the driver's choice)
            for agent_name, spec, memory_key in payload["agents"]:
                shipped_as = {**payload, "trust": own[agent_name]} if agent_name in own else payload
                agent = worker_agent(kernel, spec, shipped_as, memory_key)
                usage = usage + await call_step(agent, agent_name, node, values, produced, kernel, payload["run_id"])
        except Interrupted:
            pass  # in scope.asked: sent back as data
        if scope.asked is not None:
            return {"outputs": {}, "usage": msgspec.to_builtins(usage), "interrupt": msgspec.to_builtins(scope.asked)}
    return {"outputs": node_outputs(node, produced), "usage": msgspec.to_builtins(usage)}


async def _run_graph(kernel: "Kernel", graph: WorkFlowGraph, llm: Optional[str], inputs: dict[str, Any]) -> dict[str, Any]:
    from .executor import WorkFlowExecutor

    result = await WorkFlowExecutor(kernel=kernel, llm=llm, executor="local").arun(graph, inputs)
    if result.paused:  # a batch item has no one to answer (an approval asked): failed saying so, never "done"
        from .errors import WorkFlowFailed

        asked = "; ".join(i.describe() for i in result.interrupts)
        raise WorkFlowFailed(f"workflow {graph.name!r} run {result.run_id} paused waiting for a person ({asked}), "
                             "which a batch item cannot wait for: nothing after it ran. Give the kernel an approver "
                             "that answers at once (rails 'approver'), or run this item on its own with a checkpoints "
                             "store and resume it with the answer", result=result)
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
    trust = shipped_trust(loaded_from(graph))  # with the files the batch keeps: each item builds the agents again
    taken = dict(trust["reserved"])

    async def local(inputs: dict[str, Any]) -> dict[str, Any]:
        with reserving(taken):  # here too, though the job was made earlier
            return await _run_graph(kernel, graph, llm, inputs)

    return BatchJob(name=graph.name, local=local, runner=WORKFLOW_RUNNER,
                    payload={"graph": public_data(graph.to_dict()), "llm": llm, "trust": trust})
