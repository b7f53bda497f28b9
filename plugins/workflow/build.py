"""``build_from_plan``: a ``Plan`` -> ``WorkFlowGraph``: one node per sub-task, an edge from the sub-task producing a
value to every other one taking a value of that name; validated (``WorkFlowValidationError``) unless
``validate=False``."""

from __future__ import annotations

from typing import Any

from .graph import WorkFlowEdge, WorkFlowGraph, WorkFlowNode


def build_from_plan(plan: Any, *, name: str = "workflow", validate: bool = True) -> WorkFlowGraph:
    nodes = [WorkFlowNode(name=t.name, description=t.description, reason=t.reason,
                          inputs=list(t.inputs), outputs=list(t.outputs)) for t in plan.sub_tasks]
    producers: dict[str, str] = {}
    for node in nodes:
        for out in node.output_names:
            producers.setdefault(out, node.name)
    edges: list[WorkFlowEdge] = []
    seen: set[tuple[str, str]] = set()
    for node in nodes:
        for name_in in node.input_names:
            source = producers.get(name_in)
            if source is not None and source != node.name and (source, node.name) not in seen:
                seen.add((source, node.name))
                edges.append(WorkFlowEdge(source=source, target=node.name))
    graph = WorkFlowGraph(goal=plan.goal, name=name, nodes=nodes, edges=edges)
    return graph.validate() if validate else graph
