"""``Topology``: the derived structure of a ``WorkFlowGraph`` (forward edges, loop edges, topological order,
ancestors), computed once per run or check. A loop is a conditional edge with ``max_loops > 0`` whose target reaches
its source; the forward graph must be acyclic. Unknown node names are skipped (``validate`` reports them)."""

from __future__ import annotations

import heapq
from typing import Optional

from .graph import WorkFlowGraph


class Topology:
    """Forward predecessors/successors, loop edges, topological order and ancestors."""

    __slots__ = ("graph", "names", "index", "preds", "succs", "routed", "loops", "order", "cycle", "_anc")

    def __init__(self, graph: WorkFlowGraph):
        self.graph = graph
        self.names = list(dict.fromkeys(n.name for n in graph.nodes))  # duplicates: ``validate`` reports them
        self.index = {n: i for i, n in enumerate(self.names)}
        full = self._full_successors()
        #: ``(source, target)`` conditional edges that close a declared, bounded loop
        self.loops: set[tuple[str, str]] = set()
        for c in graph.conditional_edges:
            for t in c.targets:
                if c.max_loops > 0 and t in self.index and c.source in self.index and _reaches(full, t, c.source):
                    self.loops.add((c.source, t))
        #: forward predecessors of each node, mapped to whether the edge is conditional
        self.preds: dict[str, dict[str, bool]] = {n: {} for n in self.names}
        self.succs: dict[str, list[str]] = {n: [] for n in self.names}
        for e in graph.edges:
            self._link(e.source, e.target, False)
        #: targets reached through a conditional (non-loop) edge, by source
        self.routed: dict[str, set[str]] = {}
        for c in graph.conditional_edges:
            for t in c.targets:
                if (c.source, t) not in self.loops and self._link(c.source, t, True):
                    self.routed.setdefault(c.source, set()).add(t)
        self.order, self.cycle = self._toposort()
        self._anc: Optional[dict[str, int]] = None

    def _full_successors(self) -> dict[str, set[str]]:
        full: dict[str, set[str]] = {n: set() for n in self.names}
        for e in self.graph.edges:
            if e.source in full and e.target in full:
                full[e.source].add(e.target)
        for c in self.graph.conditional_edges:
            if c.source in full:
                full[c.source].update(t for t in c.targets if t in full)
        return full

    def _link(self, source: str, target: str, conditional: bool) -> bool:
        if source not in self.preds or target not in self.preds or source == target and not conditional:
            return False
        known = self.preds[target]
        if source not in known:
            self.succs[source].append(target)
            known[source] = conditional
        elif conditional:
            known[source] = known[source] and conditional
        return True

    def _toposort(self) -> tuple[list[str], list[str]]:
        """Kahn's order of the forward graph, and one cycle (empty when acyclic)."""
        indegree = {n: len(p) for n, p in self.preds.items()}
        ready = [i for i, n in enumerate(self.names) if indegree[n] == 0]  # a heap: declaration order wins ties
        order: list[str] = []
        while ready:
            n = self.names[heapq.heappop(ready)]
            order.append(n)
            for s in self.succs[n]:
                indegree[s] -= 1
                if indegree[s] == 0:
                    heapq.heappush(ready, self.index[s])
        if len(order) == len(self.names):
            return order, []
        left = {n for n in self.names if indegree[n] > 0}
        cycle = _find_cycle(left, self.preds)[:-1]
        first = min(range(len(cycle)), key=lambda i: self.index[cycle[i]])  # start at the earliest node
        cycle = cycle[first:] + cycle[:first]
        return order, cycle + [cycle[0]]

    def ancestors(self, name: str) -> int:
        """Bitset (by ``index``) of the nodes with a forward path to ``name``."""
        if self._anc is None:
            anc: dict[str, int] = {}
            for n in self.order:
                bits = 0
                for p in self.preds[n]:
                    bits |= anc.get(p, 0) | (1 << self.index[p])
                anc[n] = bits
            self._anc = anc
        return self._anc.get(name, 0)

    def precedes(self, a: str, b: str) -> bool:
        """Whether a forward path leads from ``a`` to ``b``."""
        return bool(self.ancestors(b) >> self.index[a] & 1)

    def loop_body(self, source: str, target: str) -> list[str]:
        """Nodes re-run when the loop ``source -> target`` is taken: on a forward path target..source."""
        return [n for n in self.order
                if n in (source, target) or (self.precedes(target, n) and self.precedes(n, source))]


def _reaches(succs: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, stack = {start}, [start]
    while stack:
        n = stack.pop()
        if n == goal:
            return True
        for s in succs[n]:
            if s not in seen:
                seen.add(s)
                stack.append(s)
    return False


def _find_cycle(nodes: set[str], preds: dict[str, dict[str, bool]]) -> list[str]:
    """One cycle among ``nodes`` (each has a predecessor among them), closed: ``[a, b, a]``."""
    path: list[str] = []
    seen: dict[str, int] = {}
    n = min(nodes)
    while n not in seen:
        seen[n] = len(path)
        path.append(n)
        n = min(p for p in preds[n] if p in nodes)
    cycle = path[seen[n]:][::-1]
    return cycle + [cycle[0]]
