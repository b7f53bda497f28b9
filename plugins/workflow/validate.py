"""Structural checks of a ``WorkFlowGraph``: ``find_problems`` gives every problem as ``Problem(code, message)``, codes
``no_nodes``, ``duplicate_node``, ``unknown_node``, ``duplicate_output``, ``unproduced_input``, ``no_path``,
``loop_input_required``, ``cycle``, ``self_loop``, ``isolated_node``, ``no_initial_node``, ``bad_router``,
``bad_reducer``, ``bad_loop``, ``bad_interrupt``, ``too_many_calls``. It imports nothing: import paths are checked
for their form only."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .errors import Problem
from .graph import WorkFlowGraph, resolve_callable
from .topology import Topology

REDUCERS = ("replace", "append", "merge")
#: the most agent calls one run may make at worst (every node's agents once, each loop's body as often as its
#: ``max_loops`` allows; an inline group chat counts its ``max_rounds`` turns): 1,000 agents named in each of
#: 1,000 nodes of a file would be a million model requests
MAX_RUN_CALLS = 10_000


def find_problems(graph: WorkFlowGraph, topology: Any = None) -> list[Problem]:
    """All problems of ``graph`` (see the module docstring), in a stable order."""
    from zagent.speckit import Trust, trusting

    with trusting(Trust(dry=True)):
        return _find_problems(graph, topology)


def _find_problems(graph: WorkFlowGraph, topology: Any) -> list[Problem]:
    if not graph.nodes:
        return [Problem("no_nodes", "the workflow has no nodes; add at least one")]
    problems: list[Problem] = []
    problems += _names(graph)
    problems += _edges(graph)
    problems += _state(graph)
    topo = topology or Topology(graph)
    if topo.cycle:
        problems.append(Problem("cycle", f"cycle {' -> '.join(topo.cycle)}: remove an edge, or route back with a "
                                         "conditional edge that has max_loops > 0"))
    else:
        problems += _calls(graph, topo)
    problems += _outputs(graph)
    problems += _interrupts(graph)
    problems += _inputs(graph, topo)
    problems += _isolated(graph)
    if not graph.initial_nodes():
        problems.append(Problem("no_initial_node", "no initial node: every node needs a value that is not a workflow "
                                f"input ({', '.join(graph.input_names) or 'none'}); let the first node take only those"))
    return problems


def _names(graph: WorkFlowGraph) -> list[Problem]:
    counts = Counter(graph.node_names)
    return [Problem("duplicate_node", f"node name {name!r} is used by {n} nodes; node names must be unique")
            for name, n in counts.items() if n > 1]


def _edges(graph: WorkFlowGraph) -> list[Problem]:
    known = set(graph.node_names)
    out: list[Problem] = []
    for e in graph.edges:
        for end, name in (("source", e.source), ("target", e.target)):
            if name not in known:
                out.append(Problem("unknown_node", f"edge {e.source} -> {e.target}: {end} {name!r} is not a node"))
        if e.source == e.target and e.source in known:
            out.append(Problem("self_loop", f"edge {e.source} -> {e.target} is a self-loop: a plain edge cannot run a "
                                            "node again; to repeat it, use a conditional edge back to it with "
                                            "max_loops > 0"))
    for c in graph.conditional_edges:
        where = f"conditional edge from {c.source!r}"
        if c.source in c.targets and c.max_loops <= 0 and c.source in known:
            out.append(Problem("self_loop", f"{where} routes back to {c.source!r} itself without max_loops; set "
                                            "max_loops > 0 to bound the repeats"))
        for name in [c.source, *c.targets] + ([c.on_max_loops] if c.on_max_loops else []):
            if name not in known:
                out.append(Problem("unknown_node", f"{where}: {name!r} is not a node"))
        if not c.targets:
            out.append(Problem("bad_router", f"{where} lists no targets"))
        if c.max_loops < 0:
            out.append(Problem("bad_loop", f"{where}: max_loops must be >= 0, got {c.max_loops}"))
        if c.on_max_loops is not None and c.on_max_loops not in c.targets:
            out.append(Problem("bad_loop", f"{where}: on_max_loops {c.on_max_loops!r} must be one of its targets "
                                           f"({', '.join(c.targets)})"))
        try:
            resolve_callable(c.router, f"router of {where}")
        except Exception as exc:
            out.append(Problem("bad_router", str(exc)))
    return out


def _calls(graph: WorkFlowGraph, topo: Topology) -> list[Problem]:
    """``too_many_calls`` when a run may call agents more than ``MAX_RUN_CALLS`` times (see there)."""
    weight = {r["name"]: _turns(r) for n in graph.nodes for r in n.agents if isinstance(r, dict) and
              isinstance(r.get("name"), str)}
    refs = {n.name: sum(weight.get(r if isinstance(r, str) else r.get("name") if isinstance(r, dict) else None, 1)
                        for r in n.agents) for n in graph.nodes}
    total = sum(refs.values())
    times: dict[tuple[str, str], int] = {}
    for c in graph.conditional_edges:
        for t in c.targets:
            if (c.source, t) in topo.loops:
                times[(c.source, t)] = max(times.get((c.source, t), 0), c.max_loops)
    for (source, target), n in sorted(times.items()):
        if total > MAX_RUN_CALLS:
            break
        total += n * sum(refs.get(name, 0) for name in topo.loop_body(source, target))
    if total <= MAX_RUN_CALLS:
        return []
    return [Problem("too_many_calls", f"a run may call the workflow's agents {total:,} times or more (each node's "
                                      "agents once, each loop's nodes again up to its max_loops), more than "
                                      f"{MAX_RUN_CALLS:,}: each call is a model request. List fewer agents per node, "
                                      "or lower max_loops")]


def _turns(spec: dict[str, Any]) -> int:
    """The model turns one call of an inline agent spec may take: a group chat's ``max_rounds`` (default 20)."""
    if spec.get("type") != "groupchat":
        return 1
    ends = spec.get("termination")
    rounds = [v for v in (spec.get("max_rounds"), ends.get("max_rounds") if isinstance(ends, dict) else None)
              if isinstance(v, int) and not isinstance(v, bool)]
    return max(1, min(rounds)) if rounds else 20


def _state(graph: WorkFlowGraph) -> list[Problem]:
    out: list[Problem] = []
    for s in graph.state:
        if isinstance(s.reducer, str) and s.reducer in REDUCERS:
            continue
        try:
            resolve_callable(s.reducer, f"reducer of state field {s.name!r}")
        except Exception as exc:
            out.append(Problem("bad_reducer", f"{exc}; built-in reducers: {', '.join(REDUCERS)}"))
    return out


def _outputs(graph: WorkFlowGraph) -> list[Problem]:
    shared = {s.name for s in graph.state}
    writers: dict[str, list[str]] = {}
    for n in graph.nodes:
        for name in n.output_names:
            writers.setdefault(name, []).append(n.name)
    return [Problem("duplicate_output", f"output {name!r} is produced by {' and '.join(repr(w) for w in nodes)}; "
                                        f"rename one, or declare {name!r} in 'state' with a reducer")
            for name, nodes in writers.items() if len(nodes) > 1 and name not in shared]


def _interrupts(graph: WorkFlowGraph) -> list[Problem]:
    out = []
    for n in graph.nodes:
        if n.kind != "interrupt":
            continue
        if not n.question.strip():
            out.append(Problem("bad_interrupt", f"interrupt node {n.name!r} has no question; give it one to ask"))
        if n.agents:
            out.append(Problem("bad_interrupt", f"interrupt node {n.name!r} lists agents; it only asks its question "
                                                "(drop the agents, or make it an agents node that calls zagent.interrupt)"))
        if len(n.outputs) != 1:
            out.append(Problem("bad_interrupt", f"interrupt node {n.name!r} has {len(n.outputs)} outputs; declare "
                                                "exactly one, to hold the answer"))
    return out


def _inputs(graph: WorkFlowGraph, topo: Topology) -> list[Problem]:
    given = set(graph.input_names) | {s.name for s in graph.state}
    producers: dict[str, list[str]] = {}
    for n in graph.nodes:
        for name in n.output_names:
            producers.setdefault(name, []).append(n.name)
    out: list[Problem] = []
    for node in graph.nodes:
        required = set(node.required_inputs)
        for name in node.input_names:
            made_by = [p for p in producers.get(name, []) if p != node.name]
            if not made_by:
                if name not in given:
                    out.append(Problem("unproduced_input", f"input {name!r} of node {node.name!r} is produced by no "
                                       f"node and is not a workflow input ({', '.join(graph.input_names) or 'none'})"))
                continue
            if topo.cycle or name in given:
                continue
            for p in made_by:
                out.extend(_path_problem(topo, p, node.name, name, name in required))
    return out


def _path_problem(topo: Topology, producer: str, consumer: str, name: str, required: bool) -> list[Problem]:
    if producer not in topo.index or consumer not in topo.index or topo.precedes(producer, consumer):
        return []
    if topo.precedes(consumer, producer):
        if required:
            return [Problem("loop_input_required", f"input {name!r} of node {consumer!r} comes from {producer!r}, "
                            "which runs after it (a loop feeds it back); make it optional (required: false) for the first pass")]
        return []
    return [Problem("no_path", f"input {name!r} of node {consumer!r} comes from {producer!r}, but no path of edges "
                    f"leads from {producer!r} to {consumer!r}; add an edge {producer} -> {consumer}")]


def _isolated(graph: WorkFlowGraph) -> list[Problem]:
    if len(graph.nodes) < 2:
        return []
    linked: set[str] = set()
    for e in graph.edges:
        linked.update((e.source, e.target))
    for c in graph.conditional_edges:
        linked.add(c.source)
        linked.update(c.targets)
    return [Problem("isolated_node", f"node {n!r} has no edges; connect it or remove it")
            for n in graph.node_names if n not in linked]
