"""The one resume shape on group chats and workflows: ``resume(run_id)`` without an answer continues an
unfinished run, approvals are answers there (``approve=`` is refused), and a workflow's graph is a keyword."""

import pytest

import zagent
from zagent.errors import ConfigError
from zagent.plugins.groupchat import GroupChat
from zagent.plugins.workflow import WorkFlowExecutor
from zagent.plugins.workflow.errors import WorkFlowFailed

from .conftest import chain_graph


class Flaky:
    """A speaker whose second turn fails once (the chat ends failed, checkpointed)."""

    def __init__(self, name):
        self.name, self.description, self.failed = name, name, False

    def speak(self, turn):
        if turn.round == 2 and not self.failed:
            self.failed = True
            raise RuntimeError("the speaker's service is down")
        return f"{self.name} in round {turn.round}"


def test_a_failed_chat_resumes_by_run_id_without_an_answer(kernel, db):
    """``resume(run_id)``: a chat that failed at round 2 goes on from its checkpoint and completes."""
    room = GroupChat(kernel=kernel, agents=[Flaky("a")], max_rounds=3, checkpoints=db)
    with pytest.raises(RuntimeError):
        room.run("go", run_id="c1")
    result = room.resume("c1")
    assert result.status == "completed" and result.speakers == ["a", "a", "a"]


def test_a_chat_refuses_approve_and_points_to_answer(kernel, db):
    """A chat's tool approvals are questions: ``resume(run_id, approve=[...])`` is a ``ConfigError``."""
    room = GroupChat(kernel=kernel, agents=[Flaky("a")], max_rounds=1, checkpoints=db)
    with pytest.raises(ConfigError, match="answer='yes'"):
        room.resume("c1", approve=["call-1"])


def _once(failed):
    def n1(v0):
        if not failed:
            failed.append(True)
            raise RuntimeError("down")
        return {"v1": v0 + "!"}
    return n1


def test_a_failed_workflow_run_resumes_by_run_id_without_an_answer(kernel, db):
    """``resume(run_id, graph=graph)``: the failed node runs again, finished ones do not."""
    graph = chain_graph(lambda goal: {"v0": goal}, _once([]))
    ex = WorkFlowExecutor(kernel=kernel, checkpoints=db)
    with pytest.raises(WorkFlowFailed):
        ex.run(graph, {"goal": "g"}, run_id="w1")
    result = ex.resume("w1", graph=graph)
    assert result.ok and result.outputs == {"v1": "g!"} and result.resumed == ["n0"]


def test_a_workflow_resume_needs_the_graph_and_refuses_approve(kernel, db):
    """Without ``graph=``, or with ``approve=``, a workflow resume is a ``ConfigError``."""
    ex = WorkFlowExecutor(kernel=kernel, checkpoints=db)
    with pytest.raises(ConfigError, match="graph=graph"):
        ex.resume("w1", answer="x")
    with pytest.raises(ConfigError, match="answer='yes'"):
        ex.resume("w1", graph=chain_graph(lambda goal: {"v0": goal}), approve=["c1"])


def test_a_workflow_paused_at_a_question_needs_its_answer(kernel):
    """``resume(run_id, graph=graph)`` of a run waiting on a question, without an answer: ``ConfigError``."""
    graph = chain_graph(lambda goal: {"v0": zagent.interrupt("Which?")})
    ex = WorkFlowExecutor(kernel=kernel)
    paused = ex.run(graph, {"goal": "g"})
    with pytest.raises(ConfigError, match="give either answer"):
        ex.resume(paused.run_id, graph=graph)
    assert ex.resume(paused.run_id, graph=graph, answer="this").outputs == {"v0": "this"}
