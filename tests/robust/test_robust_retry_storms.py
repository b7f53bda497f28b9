"""A provider's error ends a run at once, with that error, in every loop (issue 15, finding 3).

Retrying is the provider's job (its own policy: retryable statuses, backoff,
``max_retries``). A loop must not ask again on every iteration: a 401 or a reply
that is not the protocol fails the same way each time, and a retryable error that
survived the provider's retries would cost ``(1 + max_retries)`` requests per
iteration. Each test counts the requests a real loopback server received.
"""

from __future__ import annotations

import pytest

from zagent.errors import AuthenticationError, NoAnswerError, ProviderError

from .conftest import llm_config
from tests.servers.loopback import Reply


def react_spec(server, **config):
    return {"type": "react", "name": "helper", "tools": ["add"], "llm": "openai:gpt-test",
            "llm_config": llm_config(server, **config)}


def declared_spec(server, name="asker", input="question", **config):
    return {"name": name, "prompt": f"Answer: {{{input}}}", "inputs": [{"name": input}],
            "outputs": [{"name": "answer"}], "llm": "openai:gpt-test", "llm_config": llm_config(server, **config)}


def test_a_401_through_a_react_agent_makes_one_request_and_is_the_auth_error(kernel, server):
    """With the default on_error="continue", a 401 ends the ReAct run after exactly one request and the
    caller gets the AuthenticationError, not NoAnswerError after max_iterations requests."""
    agent = kernel.agent(react_spec(server))
    assert agent.on_error == "continue"
    with pytest.raises(AuthenticationError, match="401"):
        agent.chat("what is 2 + 3?", use_react=True)
    assert len(server.requests) == 1


def test_a_reply_that_is_not_the_protocol_ends_a_react_run_at_once(kernel, server):
    """A 200 whose body is not JSON fails every time: one request, the provider's error (not NoAnswerError)."""
    server.default = lambda request: Reply(body=b"<html>a captive portal</html>")
    agent = kernel.agent(react_spec(server, key="sk-right"))
    with pytest.raises(ProviderError) as caught:
        agent.chat("what is 2 + 3?", use_react=True)
    assert not isinstance(caught.value, NoAnswerError)
    assert len(server.requests) == 1


def test_a_retryable_error_is_retried_by_the_provider_only(kernel, server):
    """An always-503 server gets 1 + max_retries requests for the whole run, not that many per iteration."""
    server.default = lambda request: Reply.json({"error": {"message": "overloaded"}}, 503,
                                                headers={"retry-after": "0"})
    agent = kernel.agent(react_spec(server, key="sk-right", max_retries=2))
    with pytest.raises(ProviderError, match="503") as caught:
        agent.chat("what is 2 + 3?", use_react=True)
    assert caught.value.retryable
    assert len(server.requests) == 3


def test_a_failed_react_run_is_checkpointed_as_failed_and_can_be_restored(kernel, server, tmp_path):
    """The run that a provider error ended keeps its state (status failed, the error text) and resumes
    from its checkpoint once the cause is fixed."""
    from zagent.plugins.react import ReActLoop

    store = kernel.memory("checkpoints", path=str(tmp_path / "runs.db"))
    bad = kernel.llm("openai:gpt-test", **llm_config(server))
    loop = ReActLoop(kernel=kernel, llm=bad, tools=["add"], checkpoints=store)
    with pytest.raises(AuthenticationError):
        loop.run("what is 2 + 3?")
    assert loop.state.status == "failed" and "401" in loop.state.error
    good = kernel.llm("openai:gpt-test", **llm_config(server, key="sk-right"))
    again = ReActLoop.restore(kernel, loop.state.run_id, checkpoints=store, llm=good, tools=["add"], agent_config={})
    assert again.run().status == "completed"


def test_a_401_ends_a_declared_agent_after_one_request(kernel, server):
    """CustomizeAction: the provider's error propagates from the first request."""
    agent = kernel.agent(declared_spec(server))
    with pytest.raises(AuthenticationError):
        agent(question="why?")
    assert len(server.requests) == 1


def test_a_401_fails_a_workflow_node_without_node_retries(kernel, server):
    """A node with retries=2 is not tried again after a provider's error; WorkFlowFailed is chained to it."""
    from zagent.plugins.manager import AgentManager
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph
    from zagent.plugins.workflow.errors import WorkFlowFailed

    manager = AgentManager(kernel=kernel)
    manager.add_agent(kernel.agent(declared_spec(server)))
    graph = WorkFlowGraph.from_dict({"goal": "answer", "inputs": [{"name": "question"}], "nodes": [
        {"name": "ask", "description": "answer it", "inputs": [{"name": "question"}],
         "outputs": [{"name": "answer"}], "agents": ["asker"], "retries": 2}]})
    with pytest.raises(WorkFlowFailed, match="AuthenticationError") as caught:
        WorkFlowExecutor(kernel=kernel, manager=manager).run(graph, {"question": "why?"})
    assert isinstance(caught.value.__cause__, AuthenticationError)
    assert len(server.requests) == 1


def test_a_401_ends_a_group_chat_turn_and_its_selection(kernel, server):
    """An LLM speaker selector meeting a 401 ends the chat with it (no round-robin turn asking again)."""
    from zagent.plugins.groupchat import GroupChat

    agents = [kernel.agent(declared_spec(server, name=n, input="task")) for n in ("A", "B")]
    selector = kernel.llm("openai:gpt-test", **llm_config(server))
    chat = GroupChat(kernel=kernel, agents=agents, termination={"max_rounds": 4},
                     selection={"policy": "llm", "llm": selector})
    with pytest.raises(AuthenticationError):
        chat.run("decide")
    assert len(server.requests) == 1 and chat.state.status == "failed"


def test_a_401_ends_a_group_chat_turn(kernel, server):
    """A speaker meeting a 401 ends the chat at its first turn, after one request."""
    from zagent.plugins.groupchat import GroupChat

    agents = [kernel.agent(declared_spec(server, name=n, input="task")) for n in ("A", "B")]
    chat = GroupChat(kernel=kernel, agents=agents, termination={"max_rounds": 4})
    with pytest.raises(AuthenticationError):
        chat.run("decide")
    assert len(server.requests) == 1
