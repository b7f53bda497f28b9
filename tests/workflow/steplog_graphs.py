"""Long workflows for the step-log tests (also imported by ``workflow_child.py``, so no test imports here).

* ``chain(n, agent)``: ``n0 -> n1 -> ... ``, node ``i`` reads ``o{i-1}`` (``n0`` reads ``goal``) and writes
  ``o{i}``: ``agent(i, value)``.
* ``fan(n)``: ``start`` -> ``n`` async nodes at once -> ``join``, each appending to ``seen``.
* ``appending(n, reducer="append")``: a chain of ``n`` nodes, node ``i`` writing ``o{i}`` and appending a note
  to state field ``notes`` (through ``reducer``: ``append``, or ``last3``, which keeps the last three).
* ``looping(passes)``: ``work -> check``, ``check`` sends the run back to ``work`` until ``count`` reaches
  the ``passes`` input, then on to ``end`` (a loop pass resets nodes, so checkpoints remove saved outputs).
"""

from zagent.plugins.workflow import WorkFlowGraph


def _node(name, inputs, outputs, **kw):
    return {"name": name, "inputs": [{"name": i} for i in inputs], "outputs": [{"name": o} for o in outputs], **kw}


def chain(n, agent):
    nodes = [_node(f"n{i}", [f"o{i - 1}" if i else "goal"], [f"o{i}"]) for i in range(n)]
    graph = WorkFlowGraph.from_dict({
        "name": "chain", "goal": "a long chain of nodes", "nodes": nodes,
        "edges": [{"source": f"n{i - 1}", "target": f"n{i}"} for i in range(1, n)]})
    for i, node in enumerate(graph.nodes):
        node.agents = [_chain_agent(i, agent)]
    return graph


def _chain_agent(i, agent):
    def step(**inputs):
        (value,) = inputs.values()
        return {f"o{i}": agent(i, value)}

    step.__name__ = f"agent_n{i}"
    return step


def fan(n):
    nodes = ([_node("start", ["goal"], ["x"])] + [_node(f"p{i}", ["x"], [f"y{i}", "seen"]) for i in range(n)]
             + [_node("join", [f"y{i}" for i in range(n)], ["out"])])
    graph = WorkFlowGraph.from_dict({
        "name": "fan", "goal": "many nodes at once", "nodes": nodes,
        "edges": ([{"source": "start", "target": f"p{i}"} for i in range(n)]
                  + [{"source": f"p{i}", "target": "join"} for i in range(n)]),
        "state": [{"name": "seen", "reducer": "append"}]})
    agents = {"start": lambda goal: {"x": goal}, "join": lambda **ys: {"out": len(ys)}}
    for i in range(n):
        agents[f"p{i}"] = _parallel(i)
    _give(graph, agents)
    return graph


NOTE = "note from node {i:04d}: " + "x" * 24


def appending(n, reducer="append", cut_at=None, cut=0):
    """(Node ``cut_at`` also reads ``notes`` and deletes its first ``cut`` items in place before it appends.)"""
    nodes = [_node(f"n{i}", [f"o{i - 1}" if i else "goal"] + (["notes"] if i == cut_at else []), [f"o{i}", "notes"])
             for i in range(n)]
    graph = WorkFlowGraph.from_dict({
        "name": "appending", "goal": "a long chain appending to a state field", "nodes": nodes,
        "edges": [{"source": f"n{i - 1}", "target": f"n{i}"} for i in range(1, n)],
        "state": [{"name": "notes", "reducer": reducer if reducer == "append" else f"{__name__}:{reducer}"}]})
    for i, node in enumerate(graph.nodes):
        node.agents = [_noting(i, cut if i == cut_at else 0)]
    return graph


def last3(old, new):
    """A reducer that is not an append: the list keeps its last three items (so it is replaced, and shortened)."""
    return [*(old or [])[-2:], new]


def _noting(i, cut):
    def step(**inputs):
        if cut:
            del inputs["notes"][:cut]  # the executor's own list
        return {f"o{i}": i, "notes": NOTE.format(i=i)}

    step.__name__ = f"agent_n{i}"
    return step


def again(values):
    """The router of ``looping``: back to ``work`` until ``count`` reaches ``passes``."""
    return "work" if values["count"] < values["passes"] else "end"


def _parallel(i):
    async def p(x):  # async and at once: the nodes finish, and checkpoint, together
        return {f"y{i}": f"{x}{i}", "seen": i}

    return p


def looping(passes):
    work = _node("work", ["goal"], ["count", "log"])
    work["inputs"].append({"name": "count", "required": False})
    graph = WorkFlowGraph.from_dict({
        "name": "looping", "goal": "go round a loop",
        "inputs": [{"name": "goal"}, {"name": "passes"}],
        "nodes": [work, _node("check", ["count"], ["ok"]), _node("end", ["count"], ["final"])],
        "edges": [{"source": "work", "target": "check"}],
        "conditional_edges": [{"source": "check", "router": f"{__name__}:again", "targets": ["work", "end"],
                               "max_loops": passes}],
        "state": [{"name": "log", "reducer": "append"}, {"name": "count", "reducer": "replace", "default": 0}]})
    agents = {"work": lambda goal, count=0: {"count": count + 1, "log": f"pass {count + 1}"},
              "check": lambda count: {"ok": count},
              "end": lambda count: {"final": f"{count} passes"}}
    _give(graph, agents)
    return graph


def _give(graph, agents):
    """Each node its agent, named after the node (the manager knows agents by name)."""
    for node in graph.nodes:
        fn = agents[node.name]
        fn.__name__ = f"agent_{node.name}"
        node.agents = [fn]
