"""WorkFlowGraph: JSON round trip, structural validation (one test per rule), diagrams."""

import pytest
from zagent import ConfigError
from zagent.plugins.workflow import (
    ConditionalEdge,
    WorkFlowGraph,
    WorkFlowValidationError,
    to_mermaid,
    to_text,
)

from .conftest import diamond_dict, edges, node


def codes(data):
    return [p.code for p in WorkFlowGraph.from_dict(data).problems()]


HERE = __name__


def route_to_b(values):
    return "B"


def test_json_round_trip(tmp_path):
    """save then load gives an equal graph, conditional edges and state included."""
    data = diamond_dict(conditional_edges=[{"source": "A", "router": HERE + ":route_to_b",
                                            "targets": ["B"]}],
                        state=[{"name": "notes", "reducer": "append"}])
    graph = WorkFlowGraph.from_dict(data)
    path = tmp_path / "wf.json"
    graph.save(path)
    assert WorkFlowGraph.load(path) == graph


def test_callable_router_is_saved_as_its_import_path(tmp_path):
    """A router given as a Python function is written as 'module:function'."""
    graph = WorkFlowGraph.from_dict(diamond_dict())
    graph.conditional_edges.append(ConditionalEdge(source="A", router=route_to_b, targets=["B"]))
    assert graph.to_dict()["conditional_edges"][0]["router"] == HERE + ":route_to_b"


def test_lambda_router_cannot_be_saved():
    """A lambda has no import path: saving says so instead of writing something unloadable."""
    graph = WorkFlowGraph.from_dict(diamond_dict(conditional_edges=[{"source": "A", "router": "x:y", "targets": ["B"]}]))
    graph.conditional_edges[0].router = lambda v: "B"
    with pytest.raises(ConfigError, match="import path"):
        graph.to_json()


def test_unknown_keys_are_rejected():
    """A misspelt key in a workflow file is an error, not silently ignored."""
    with pytest.raises(ConfigError, match="edgez"):
        WorkFlowGraph.from_dict({**diamond_dict(), "edgez": []})


def test_valid_diamond_has_no_problems():
    """The diamond is valid and its initial node is A."""
    graph = WorkFlowGraph.from_dict(diamond_dict())
    assert graph.problems() == []
    assert graph.initial_nodes() == ["A"]


def test_no_nodes():
    """A graph without nodes is invalid."""
    assert codes({"goal": "nothing at all here"}) == ["no_nodes"]


def test_duplicate_node_names():
    """Two nodes with the same name are reported with the name and the count."""
    data = diamond_dict()
    data["nodes"].append(node("B", ["x"], ["w"]))
    graph = WorkFlowGraph.from_dict(data)
    problems = graph.problems()
    assert "duplicate_node" in [p.code for p in problems]
    assert any("'B' is used by 2 nodes" in p.message for p in problems)


def test_output_produced_twice():
    """Two nodes writing the same value is an error naming both (unless it is a state field)."""
    data = diamond_dict()
    data["nodes"][2]["outputs"] = [{"name": "y"}]
    data["nodes"][3]["inputs"] = [{"name": "y"}]
    graph = WorkFlowGraph.from_dict(data)
    msgs = [p.message for p in graph.problems() if p.code == "duplicate_output"]
    assert msgs == ["output 'y' is produced by 'B' and 'C'; rename one, or declare 'y' in 'state' with a reducer"]


def test_output_produced_twice_is_fine_for_a_state_field():
    """A declared state field may be written by several nodes."""
    data = diamond_dict(state=[{"name": "y", "reducer": "append"}])
    data["nodes"][2]["outputs"] = [{"name": "y"}]
    data["nodes"][3]["inputs"] = [{"name": "y"}]
    assert "duplicate_output" not in codes(data)


def test_input_nobody_produces():
    """An input that no node produces and the workflow does not take is named with its node."""
    data = diamond_dict()
    data["nodes"][3]["inputs"].append({"name": "mystery"})
    graph = WorkFlowGraph.from_dict(data)
    [p] = graph.problems()
    assert p.code == "unproduced_input"
    assert "input 'mystery' of node 'D' is produced by no node" in p.message


def test_producer_without_path_to_consumer():
    """A value used by a node that no edge path connects to its producer is reported."""
    data = diamond_dict(edges=edges(("A", "B"), ("A", "C"), ("B", "D")))
    data["nodes"][3]["inputs"] = [{"name": "y"}, {"name": "z"}]
    graph = WorkFlowGraph.from_dict(data)
    assert [p.code for p in graph.problems()] == ["no_path"]
    assert "add an edge C -> D" in graph.problems()[0].message


def test_cycle_is_reported_with_its_path():
    """A cycle of plain edges is an error that shows the cycle."""
    data = diamond_dict(edges=edges(("A", "B"), ("A", "C"), ("B", "D"), ("C", "D"), ("D", "B")))
    graph = WorkFlowGraph.from_dict(data)
    [p] = [p for p in graph.problems() if p.code == "cycle"]
    assert "cycle B -> D -> B" in p.message and "max_loops" in p.message


def test_unbounded_conditional_loop_is_a_cycle():
    """Routing back upstream without max_loops is a cycle; with max_loops it is a declared loop."""
    loop = {"source": "D", "router": HERE + ":route_to_b", "targets": ["B"]}
    data = diamond_dict(conditional_edges=[loop])
    data["nodes"][1]["inputs"].append({"name": "out", "required": False})
    assert "cycle" in codes(data)
    data["conditional_edges"] = [{**loop, "max_loops": 2}]
    assert codes(data) == []


def test_loop_input_must_be_optional():
    """A value fed back by a loop must be optional, or the first pass could never start."""
    loop = {"source": "D", "router": HERE + ":route_to_b", "targets": ["B"], "max_loops": 2}
    data = diamond_dict(conditional_edges=[loop])
    data["nodes"][1]["inputs"].append({"name": "out"})
    assert codes(data) == ["loop_input_required"]


def test_isolated_node():
    """A node with no edges at all is reported."""
    data = diamond_dict()
    data["nodes"].append(node("E", ["goal"], ["e"]))
    assert codes(data) == ["isolated_node"]


def test_no_initial_node():
    """When every node needs a value that is not a workflow input, there is nowhere to start."""
    data = diamond_dict(inputs=[{"name": "topic"}])
    assert "no_initial_node" in codes(data)


def test_unknown_node_in_edge():
    """An edge naming a node that does not exist is reported with the name."""
    data = diamond_dict(edges=edges(("A", "B"), ("A", "C"), ("B", "D"), ("C", "D"), ("C", "Z")))
    graph = WorkFlowGraph.from_dict(data)
    assert [p.message for p in graph.problems()] == ["edge C -> Z: target 'Z' is not a node"]


def test_bad_router_import_path():
    """A router that is not an import path is reported when validating (which imports nothing)."""
    data = diamond_dict(conditional_edges=[{"source": "A", "router": "no such module:f", "targets": ["B"]}])
    assert codes(data) == ["bad_router"]


def test_bad_reducer():
    """An unknown reducer name is reported with the built-in choices."""
    graph = WorkFlowGraph.from_dict(diamond_dict(state=[{"name": "x", "reducer": "sum"}]))
    [p] = graph.problems()
    assert p.code == "bad_reducer" and "replace, append, merge" in p.message


def test_unknown_node_in_conditional_edge():
    """A conditional edge naming an unknown target is reported."""
    data = diamond_dict(conditional_edges=[{"source": "A", "router": HERE + ":route_to_b", "targets": ["B", "Q"]}])
    graph = WorkFlowGraph.from_dict(data)
    assert [p.message for p in graph.problems()] == ["conditional edge from 'A': 'Q' is not a node"]


def test_a_negative_loop_bound_is_refused_when_read():
    """A negative max_loops is a ConfigError naming the range when the graph is read (a spec's counts are bounded)."""
    data = diamond_dict(conditional_edges=[{"source": "A", "router": HERE + ":route_to_b", "targets": ["B"],
                                            "max_loops": -1}])
    with pytest.raises(ConfigError, match="max_loops must be a whole number from 0 to 1000, got -1"):
        WorkFlowGraph.from_dict(data)


@pytest.mark.parametrize("change, message", [
    ({"on_max_loops": "C"}, "on_max_loops 'C' must be one of its targets (B)"),
])
def test_bad_loop_settings(change, message):
    """An exit that is not among the targets is reported."""
    data = diamond_dict(conditional_edges=[{"source": "A", "router": HERE + ":route_to_b", "targets": ["B"], **change}])
    [p] = WorkFlowGraph.from_dict(data).problems()
    assert p.code == "bad_loop" and message in p.message


def test_validate_raises_with_every_problem():
    """validate() raises one error listing all problems, each on its own line."""
    data = diamond_dict()
    data["nodes"].append(node("E", ["goal"], ["e"]))
    data["nodes"][3]["inputs"].append({"name": "mystery"})
    with pytest.raises(WorkFlowValidationError) as info:
        WorkFlowGraph.from_dict(data).validate()
    assert sorted(info.value.codes) == ["isolated_node", "unproduced_input"]
    assert "(2 problems)" in str(info.value)


def test_text_diagram_lists_nodes_in_order_with_values_carried():
    """The text diagram shows every node in topological order and what each edge carries."""
    text = to_text(WorkFlowGraph.from_dict(diamond_dict()))
    assert [line.split("]")[0] for line in text.splitlines() if line.startswith("[")] == ["[A", "[B", "[C", "[D"]
    assert "--> B  (x)" in text


def test_mermaid_has_every_edge():
    """The Mermaid chart is a flowchart with one arrow per edge, dotted for conditional ones."""
    data = diamond_dict(conditional_edges=[{"source": "A", "router": "m:route", "targets": ["B"]}])
    chart = to_mermaid(WorkFlowGraph.from_dict(data))
    assert chart.startswith("flowchart TD")
    assert chart.count("-->") == 4 and chart.count(".->") == 1


def test_plain_self_loop_edge_is_refused():
    """An edge from a node to itself is a named 'self_loop' problem, not silently dropped (issue 17, item 13)."""
    data = diamond_dict(edges=edges(("A", "B"), ("A", "C"), ("B", "D"), ("C", "D"), ("B", "B")))
    graph = WorkFlowGraph.from_dict(data)
    [p] = [p for p in graph.problems() if p.code == "self_loop"]
    assert "B -> B" in p.message and "max_loops" in p.message
    with pytest.raises(WorkFlowValidationError):
        graph.validate()


def test_conditional_self_loop_needs_max_loops():
    """A conditional edge routing a node back to itself is a self_loop problem without max_loops."""
    loop = {"source": "B", "router": HERE + ":route_to_b", "targets": ["B", "D"]}
    data = diamond_dict(conditional_edges=[loop])
    assert "self_loop" in codes(data)
