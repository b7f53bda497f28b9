"""ReActAgent.chat: the mode decision both ways, history, and the zagent chat REPL."""

import os
import subprocess
import sys

from .conftest import call


def react_agent(kernel, replies, **spec):
    agent = kernel.agent({"type": "react", "name": "helper", "tools": ["add"], **spec})
    agent.llm = kernel.llm("scripted:m", replies=replies)
    return agent


def test_model_says_no_gives_direct_answer(kernel):
    """With use_react=None and the model answering 'no', chat answers in one direct call."""
    agent = react_agent(kernel, ["no", "Paris."])
    reply = agent.chat("Capital of France?")
    assert (reply.mode, reply.content, reply.steps) == ("direct", "Paris.", [])
    assert "yes or no" in agent.llm.requests[0].messages[-1].content
    assert agent.llm.requests[1].tools == []


def test_model_says_yes_runs_the_loop(kernel):
    """With use_react=None and the model answering 'yes', chat runs the ReAct loop with tools."""
    agent = react_agent(kernel, ["yes", call("add", a=2, b=3), "5"])
    reply = agent.chat("What is 2+3?")
    assert reply.mode == "react" and reply.content == "5"
    assert (reply.tool_used, reply.tool_result) == ("add", "5")
    assert reply.execution_time > 0 and reply.metadata["usage"]["calls"] == 3


def test_agent_without_tools_never_asks(kernel):
    """An agent with no tools answers directly without the routing call."""
    agent = kernel.agent({"type": "react", "name": "plain"})
    agent.llm = kernel.llm("scripted:m", replies=["hello"])
    assert agent.chat("hi").mode == "direct" and len(agent.llm.requests) == 1


def test_chat_history_comes_from_memory(kernel):
    """A second chat sees the first turn as history."""
    agent = react_agent(kernel, ["first answer", "second answer"])
    agent.chat("first question", use_react=False)
    agent.chat("second question", use_react=False)
    contents = [m.content for m in agent.llm.requests[1].messages]
    assert contents[1:] == ["first question", "first answer", "second question"]


def test_zagent_chat_repl_answers_and_quits():
    """`zagent chat` reads a line, prints the agent's answer and exits on end of input."""
    env = {**os.environ, "ZAGENT_PLUGINS": "offline,parsers,actions,react,rails,cli", "ZAGENT_MODEL": "test:offline"}
    proc = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "chat", "--tools", ""],
                          input="hello there\n", capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "chat> " in proc.stdout and proc.stdout.split("chat> ", 1)[1].strip()
    assert "warning" not in proc.stderr


def test_a_clarification_whose_questions_are_not_a_list_is_still_asked(kernel):
    """A model calling ask_clarification with {"questions": 1} (a number, not a list) gets the question asked,
    not a TypeError (model output is untrusted)."""
    from zagent.plugins.react import ReActLoop

    llm = kernel.llm("scripted:clarify-number", replies=[
        {"content": None, "tool_calls": [{"name": "ask_clarification", "arguments": {"questions": 1}}]}])
    result = ReActLoop(kernel=kernel, llm=llm, tools=[]).run("help")
    assert result.questions == ["1"]
