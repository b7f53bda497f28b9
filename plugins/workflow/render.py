"""Pictures of a ``WorkFlowGraph``: a plain-text diagram and a Mermaid flowchart.

Nodes are listed in topological order (declaration order when the graph has a
cycle); each edge is labelled with the values it carries (outputs of the
source that are inputs of the target).
"""

from __future__ import annotations

import re
from typing import Any

from .graph import WorkFlowGraph
from .topology import Topology


def _order(graph: WorkFlowGraph) -> list[str]:
    topo = Topology(graph)
    return topo.order if not topo.cycle else graph.node_names


def _carried(graph: WorkFlowGraph, source: str, target: str) -> list[str]:
    try:
        outs = set(graph.node(source).output_names)
        return [i for i in graph.node(target).input_names if i in outs]
    except Exception:
        return []


def _agent_names(refs: list[Any]) -> list[str]:
    out = []
    for ref in refs:
        if isinstance(ref, str):
            out.append(ref)
        elif isinstance(ref, dict):
            out.append(str(ref.get("name", "?")))
        else:
            out.append(str(getattr(ref, "name", None) or getattr(ref, "__name__", "?")))
    return out


def to_text(graph: WorkFlowGraph) -> str:
    """A readable outline: every node with its inputs -> outputs, agents, and where it leads."""
    lines = [f"workflow {graph.name!r}: {graph.goal}", f"inputs: {', '.join(graph.input_names) or '-'}"]
    if graph.state:
        lines.append("state: " + ", ".join(f"{s.name} ({s.reducer if isinstance(s.reducer, str) else 'custom'})"
                                           for s in graph.state))
    for name in _order(graph):
        node = graph.node(name)
        lines.append("")
        lines.append(f"[{name}] {node.description}".rstrip())
        lines.append(f"    {', '.join(node.input_names) or '-'} -> {', '.join(node.output_names) or '-'}")
        if node.agents:
            lines.append(f"    agents: {', '.join(_agent_names(node.agents))}")
        for e in graph.edges:
            if e.source == name:
                carried = _carried(graph, e.source, e.target)
                lines.append(f"    --> {e.target}" + (f"  ({', '.join(carried)})" if carried else ""))
        for c in graph.conditional_edges:
            if c.source == name:
                loop = f", loops at most {c.max_loops}x" if c.max_loops else ""
                lines.append(f"    ?-> {' | '.join(c.targets)}  (router {_router_name(c.router)}{loop})")
    return "\n".join(lines)


def _router_name(router: object) -> str:
    if isinstance(router, str):
        return router
    return getattr(router, "__qualname__", None) or repr(router)


_ID = re.compile(r"\W")


def _label(text: str) -> str:
    return text.replace('"', "'")


def to_mermaid(graph: WorkFlowGraph) -> str:
    """A Mermaid ``flowchart TD``; conditional edges are dotted and labelled with their router."""
    ids = {name: f"n{i}_{_ID.sub('_', name)}" for i, name in enumerate(graph.node_names)}
    lines = ["flowchart TD"]
    for name in _order(graph):
        node = graph.node(name)
        io = f"{', '.join(node.input_names) or '-'} → {', '.join(node.output_names) or '-'}"
        lines.append(f'    {ids[name]}["{_label(name)}<br/><small>{_label(io)}</small>"]')
    for e in graph.edges:
        if e.source in ids and e.target in ids:
            carried = _carried(graph, e.source, e.target)
            label = f'|"{_label(", ".join(carried))}"|' if carried else ""
            lines.append(f"    {ids[e.source]} -->{label} {ids[e.target]}")
    for c in graph.conditional_edges:
        for t in c.targets:
            if c.source in ids and t in ids:
                text = _router_name(c.router).rsplit(":", 1)[-1]
                if c.max_loops:
                    text += f" (max {c.max_loops})"
                lines.append(f'    {ids[c.source]} -. "{_label(text)}" .-> {ids[t]}')
    return "\n".join(lines)
