"""zagent.interrupt in workflow nodes: the run ends paused with its questions, aresume answers them, finished
nodes are not run again, several interrupts in a node are answered in order, and bad resumes are clear errors."""

import sqlite3

import msgspec
import pytest

import zagent
from zagent.errors import CheckpointError, ConfigError
from zagent.plugins.manager import AgentManager
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph, WorkFlowValidationError

from .conftest import KEY, chain_graph, make_kernel, node


def counted(calls, name, fn):
    """``fn`` that also appends ``name`` to ``calls`` each time it runs."""
    def agent(**inputs):
        calls.append(name)
        return fn(**inputs)
    agent.__name__ = f"agent_{name}"
    return agent


def draft(goal):
    return {"v0": f"plan for {goal}"}


def review(v0):
    ok = zagent.interrupt(f"Approve {v0}?")
    return {"v1": f"{v0}: {ok}"}


def test_a_node_that_asks_pauses_the_run_with_its_question(kernel):
    """A node calling zagent.interrupt ends the run paused: its question is on the result, the node is not done."""
    result = WorkFlowExecutor(kernel=kernel).run(chain_graph(draft, review), {"goal": "g"})
    assert result.status == "paused" and result.paused and not result.ok
    [asked] = result.interrupts
    assert (asked.node, asked.question, asked.index) == ("n1", "Approve plan for g?", 0)
    assert result.node_status("n0") == "done" and result.node_status("n1") == "paused"


def test_resume_in_the_same_process_gives_the_answer_to_the_interrupt(kernel):
    """aresume/resume with answer=... runs the paused node again; its interrupt returns the answer."""
    ex = WorkFlowExecutor(kernel=kernel)
    graph = chain_graph(draft, review)
    paused = ex.run(graph, {"goal": "g"})
    result = ex.resume(paused.run_id, graph=graph, answer="yes")
    assert result.ok and result.outputs == {"v1": "plan for g: yes"}
    assert [t.answers for t in result.trace if t.node == "n1" and t.status == "done"] == [["yes"]]


def test_finished_nodes_do_not_run_again_on_resume(kernel, db):
    """With a SQLite checkpoint file, resuming runs only the paused node and those after it."""
    calls = []
    graph = chain_graph(counted(calls, "n0", draft), counted(calls, "n1", review),
                        counted(calls, "n2", lambda v1: {"v2": v1.upper()}))
    ex = WorkFlowExecutor(kernel=kernel, checkpoints=db)
    paused = ex.run(graph, {"goal": "g"}, run_id="r1")
    assert calls == ["n0", "n1"]
    result = ex.resume("r1", graph=graph, answer="ok")
    assert calls == ["n0", "n1", "n1", "n2"]
    assert result.outputs == {"v2": "PLAN FOR G: OK"} and result.resumed == ["n0"] and paused.run_id == "r1"


def test_several_interrupts_in_one_node_are_answered_one_at_a_time(kernel, db):
    """A node with two interrupts pauses at the first, then (answered) at the second, then finishes; each
    interrupt returns its own answer, in order."""
    def two(goal):
        who = zagent.interrupt("Who signs?")
        when = zagent.interrupt({"ask": "When?", "for": who})
        return {"v0": f"{who} on {when}"}

    graph = chain_graph(two)
    ex = WorkFlowExecutor(kernel=kernel, checkpoints=db)
    first = ex.run(graph, {"goal": "g"}, run_id="r")
    assert [(a.question, a.index) for a in first.interrupts] == [("Who signs?", 0)]
    second = ex.resume("r", graph=graph, answer="Ann")
    assert [(a.question, a.index) for a in second.interrupts] == [({"ask": "When?", "for": "Ann"}, 1)]
    done = ex.resume("r", graph=graph, answer="Monday")
    assert done.outputs == {"v0": "Ann on Monday"}


def test_an_interrupt_node_asks_its_fixed_question_and_writes_the_answer(kernel):
    """A node of kind "interrupt" asks its question ({name} filled from its inputs); the answer is its output."""
    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "approve", "nodes": [
        node("draft", ["goal"], ["plan"], [lambda goal: {"plan": f"plan for {goal}"}]),
        node("approve", ["plan"], ["approved"], kind="interrupt", question="Ship {plan}? ({unknown} stays)")],
        "edges": [{"source": "draft", "target": "approve"}]})
    ex = WorkFlowExecutor(kernel=kernel)
    paused = ex.run(graph, {"goal": "g"})
    assert paused.interrupts[0].question == "Ship plan for g? ({unknown} stays)"
    assert ex.resume(paused.run_id, graph=graph, answer=True).outputs == {"approved": True}


def test_a_malformed_interrupt_node_is_a_validation_problem():
    """An interrupt node without a question, with agents, or without one output fails validation, each named."""
    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "approve", "nodes": [
        node("a", ["goal"], [], ["someone"], kind="interrupt")]})
    with pytest.raises(WorkFlowValidationError) as err:
        graph.validate()
    assert err.value.codes.count("bad_interrupt") == 3
    assert "has no question" in str(err.value) and "lists agents" in str(err.value) and "0 outputs" in str(err.value)


def test_independent_nodes_run_on_while_one_waits(kernel):
    """A waiting node holds back only its successors: a node on another branch still runs."""
    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "branches", "nodes": [
        node("start", ["goal"], ["s"], [lambda goal: {"s": goal}]),
        node("ask", ["s"], ["a"], kind="interrupt", question="A?"),
        node("after", ["a"], ["b"], [counted([], "after", lambda a: {"b": a * 2})]),
        node("other", ["s"], ["c"], [counted([], "other", lambda s: {"c": s + "!"})])],
        "edges": [{"source": "start", "target": "ask"}, {"source": "ask", "target": "after"},
                  {"source": "start", "target": "other"}]})
    result = WorkFlowExecutor(kernel=kernel).run(graph, {"goal": "g"})
    assert result.paused and result.values["c"] == "g!"
    assert result.node_status("other") == "done" and result.node_status("after") is None


def test_two_waiting_nodes_are_answered_by_name(kernel):
    """Two nodes waiting at once: answer= alone is refused naming both, answers={node: ...} answers each."""
    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "two questions", "nodes": [
        node("start", ["goal"], ["s"], [lambda goal: {"s": goal}]),
        node("x", ["s"], ["a"], kind="interrupt", question="A?"),
        node("y", ["s"], ["b"], kind="interrupt", question="B?")],
        "edges": [{"source": "start", "target": "x"}, {"source": "start", "target": "y"}]})
    ex = WorkFlowExecutor(kernel=kernel)
    paused = ex.run(graph, {"goal": "g"})
    assert sorted(a.node for a in paused.interrupts) == ["x", "y"]
    with pytest.raises(ConfigError, match="waits on 2 nodes .*answers=\\{node: answer"):
        ex.resume(paused.run_id, graph=graph, answer="1")
    half = ex.resume(paused.run_id, graph=graph, answers={"x": 1})
    assert [a.node for a in half.interrupts] == ["y"] and half.values["a"] == 1
    assert ex.resume(paused.run_id, graph=graph, answers={"y": 2}).values == {"goal": "g", "s": "g", "a": 1, "b": 2}


def test_an_interrupt_is_not_retried_as_a_failure(kernel):
    """A node with retries that asks a person runs once and pauses (an interrupt is not an error)."""
    calls = []
    graph = chain_graph(counted(calls, "n0", lambda goal: {"v0": zagent.interrupt("?")}))
    result = WorkFlowExecutor(kernel=kernel, retries=3).run(graph, {"goal": "g"})
    assert result.paused and calls == ["n0"] and not result.errors


def test_an_agent_that_swallows_the_interrupt_still_pauses_its_node(kernel):
    """An agent catching Exception around zagent.interrupt does not turn the question into an answer."""
    def careless(goal):
        try:
            zagent.interrupt("Really?")
        except Exception:
            pass
        return {"v0": "made up"}

    result = WorkFlowExecutor(kernel=kernel).run(chain_graph(careless), {"goal": "g"})
    assert result.paused and "v0" not in result.values


def ask_human(question: str) -> str:
    """Ask the human a question and return the answer."""
    return zagent.interrupt(question)


async def ask_async(question: str) -> str:
    """Ask the human a question and return the answer."""
    return zagent.interrupt(question)


@pytest.mark.parametrize("tool", [ask_human, ask_async])
def test_a_tool_of_a_declared_agent_asks_and_the_model_gets_the_answer(kernel, tool):
    """A sync tool (run in the kernel's tool threads) or an async one calling zagent.interrupt pauses the node;
    on resume the agent runs again and the tool returns the answer to the model."""
    kernel.add_tool(tool)
    agent = kernel.agent({"type": "customize", "name": "A", "prompt": "Plan {goal}", "inputs": [{"name": "goal"}],
                          "outputs": [{"name": "plan"}], "parse_mode": "str", "tools": [tool.__name__]})
    ask = {"tool_calls": [{"name": tool.__name__, "arguments": {"question": "Budget?"}}]}
    agent.llm = kernel.llm("scripted:planner", replies=[ask, ask, "a plan for 100 euros"])
    manager = AgentManager(kernel=kernel)
    manager.add_agent(agent)
    graph = WorkFlowGraph.from_dict({"goal": "trip", "nodes": [node("plan", ["goal"], ["plan"], ["A"])]})
    ex = WorkFlowExecutor(kernel=kernel, manager=manager)
    paused = ex.run(graph, {"goal": "a trip"})
    assert [a.question for a in paused.interrupts] == ["Budget?"]
    result = ex.resume(paused.run_id, graph=graph, answer="100 euros")
    assert result.outputs == {"plan": "a plan for 100 euros"}
    assert "100 euros" in [m.content for m in agent.llm.requests[-1].messages][-1]


def test_a_sync_tool_can_ask_through_its_ctx(kernel):
    """A tool declaring a ctx parameter asks with interrupt(question, ctx=ctx)."""
    def confirm(question: str, ctx: zagent.RunContext) -> str:
        """Ask the human to confirm."""
        return zagent.interrupt(question, ctx=ctx)

    kernel.add_tool(confirm)
    agent = kernel.agent({"type": "customize", "name": "A", "prompt": "Do {goal}", "inputs": [{"name": "goal"}],
                          "outputs": [{"name": "done"}], "parse_mode": "str", "tools": ["confirm"]})
    agent.llm = kernel.llm("scripted:a", replies=[{"tool_calls": [{"name": "confirm",
                                                                   "arguments": {"question": "Go?"}}]}])
    manager = AgentManager(kernel=kernel)
    manager.add_agent(agent)
    graph = WorkFlowGraph.from_dict({"goal": "go", "nodes": [node("n", ["goal"], ["done"], ["A"])]})
    assert WorkFlowExecutor(kernel=kernel, manager=manager).run(graph, {"goal": "x"}).interrupts[0].question == "Go?"


def test_interrupt_outside_a_node_is_a_clear_error():
    """zagent.interrupt with no workflow node or chat turn around it says so (nothing to pause)."""
    with pytest.raises(ConfigError, match="outside a workflow node or group-chat turn"):
        zagent.interrupt("anyone?")


def test_resuming_an_unknown_run_id_says_so(kernel, db):
    """aresume of a run id the store does not hold is a ConfigError naming the id and how to list runs."""
    ex = WorkFlowExecutor(kernel=kernel, checkpoints=db)
    with pytest.raises(ConfigError, match="no run 'nope' in the store .*zagent memory list --checkpoints"):
        ex.resume("nope", graph=chain_graph(draft), answer="x")


def test_resuming_a_run_that_is_not_paused_says_so(kernel, db):
    """aresume of a finished run is a ConfigError: there is no question to answer."""
    ex = WorkFlowExecutor(kernel=kernel, checkpoints=db)
    graph = chain_graph(draft)
    ex.run(graph, {"goal": "g"}, run_id="done-run")
    with pytest.raises(ConfigError, match="'done-run' is finished, not paused at an interrupt"):
        ex.resume("done-run", graph=graph, answer="x")


def test_an_answer_that_is_not_data_is_refused(kernel):
    """An answer must be JSON data: an object (code) is a ConfigError before anything runs."""
    ex = WorkFlowExecutor(kernel=kernel)
    graph = chain_graph(draft, review)
    paused = ex.run(graph, {"goal": "g"})
    with pytest.raises(ConfigError, match="must be JSON data"):
        ex.resume(paused.run_id, graph=graph, answer=object())


def test_the_answer_is_checkpointed_before_the_node_runs_again(kernel, db):
    """The answer is in the store as soon as the resume starts: a node that then fails keeps it for next time."""
    state = {"fail": True}

    def flaky(goal):
        answer = zagent.interrupt("Name?")
        if state["fail"]:
            raise RuntimeError("down")
        return {"v0": answer}

    graph = chain_graph(flaky)
    ex = WorkFlowExecutor(kernel=kernel, checkpoints=db)
    ex.run(graph, {"goal": "g"}, run_id="r")
    with pytest.raises(Exception, match="down"):
        ex.resume("r", graph=graph, answer="Zoe")
    state["fail"] = False
    assert ex.run(graph, {"goal": "g"}, run_id="r").outputs == {"v0": "Zoe"}


def test_a_tampered_answer_in_a_signed_checkpoint_is_refused(db):
    """With a checkpoint key, an answer edited in the SQLite file makes the resume a CheckpointError."""
    def two(goal):
        first = zagent.interrupt("First?")
        return {"v0": first + zagent.interrupt("Second?")}

    k = make_kernel(checkpoint_key=KEY)
    try:
        graph = chain_graph(two)
        ex = WorkFlowExecutor(kernel=k, checkpoints=db)
        ex.run(graph, {"goal": "g"}, run_id="r")
        assert ex.resume("r", graph=graph, answer="yes").interrupts[0].question == "Second?"
        with sqlite3.connect(db) as c:
            rows = c.execute("SELECT step, state FROM checkpoints WHERE run_id = 'r' ORDER BY step").fetchall()
            step, state = next((step, state) for step, state in reversed(rows) if b'"yes"' in bytes(state))
            c.execute("UPDATE checkpoints SET state = ? WHERE run_id = 'r' AND step = ?",
                      (bytes(state).replace(b'"yes"', b'"no!"'), step))
        with pytest.raises(CheckpointError, match="does not match its signature"):
            ex.resume("r", graph=graph, answer="x")
    finally:
        k.close()


def test_the_checkpoint_holds_the_question_and_the_answers(kernel, db):
    """The paused run's checkpoint holds its status, the pending question and the answers given so far."""
    def two(goal):
        return {"v0": zagent.interrupt("A?") + zagent.interrupt("B?")}

    graph = chain_graph(two)
    ex = WorkFlowExecutor(kernel=kernel, checkpoints=db)
    ex.run(graph, {"goal": "g"}, run_id="r")
    ex.resume("r", graph=graph, answer="a")
    store = kernel.memory("checkpoints", path=db)
    saved = msgspec.json.decode(store.latest("r")[1])
    assert saved["status"] == "paused" and saved["answers"] == {"n0": ["a"]}
    assert saved["interrupts"]["n0"]["question"] == "B?" and saved["interrupts"]["n0"]["index"] == 1
