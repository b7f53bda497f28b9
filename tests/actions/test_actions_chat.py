"""Every agent can chat: a declared agent answers directly, or through the ReAct loop when it has tools,
and takes the mode decision (issue 17, item 6)."""

import pytest

from zagent import ConfigError, Kernel

WITH_TOOLS = {"name": "Calc", "prompt": "Compute {question}", "inputs": [{"name": "question"}],
              "outputs": [{"name": "answer"}], "tools": ["add"], "system_prompt": "You are Calc."}
NO_TOOLS = {"name": "Poet", "prompt": "Write about {topic}", "inputs": [{"name": "topic"}],
            "outputs": [{"name": "poem"}]}


def test_declared_agent_chats_directly_with_its_system_prompt(kernel):
    """Without tools, chat makes one direct call with the agent's system prompt and the user's text."""
    agent = kernel.agent(NO_TOOLS)
    agent.llm = kernel.llm("scripted:poet", replies=["Roses are red."])
    reply = agent.chat("hello poet")
    assert reply.mode == "direct" and reply.content == "Roses are red."
    [request] = agent.llm.requests
    assert request.messages[-1].content == "hello poet" and request.messages[0].role == "system"


@pytest.fixture
def react_kernel():
    """A kernel with the react plugin (the actions plugin reaches the loop through the kernel) and `add`."""
    k = Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions",
                        "zagent.plugins.react"], entry_points=False)
    k.add_tool(lambda a, b: a + b, name="add")
    yield k
    k.close()


def test_the_model_decides_the_mode_and_tools_run_through_react(react_kernel):
    """With tools and use_react=None, a 'yes' from the model runs the ReAct loop, which calls the tool."""
    kernel = react_kernel
    agent = kernel.agent(WITH_TOOLS)
    agent.llm = kernel.llm("scripted:calc", replies=[
        "yes", {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}, "It is 5."])
    reply = agent.chat("What is 2+3?")
    assert reply.mode == "react" and reply.tool_used == "add" and reply.tool_result == "5"
    assert reply.content == "It is 5."
    assert "You are Calc." in agent.llm.requests[1].messages[0].content


def test_a_no_from_the_model_answers_directly(kernel):
    """With tools, a 'no' from the model gives a direct answer and runs no tool."""
    agent = kernel.agent(WITH_TOOLS)
    agent.llm = kernel.llm("scripted:calc", replies=["no", "Hello!"])
    reply = agent.chat("hi")
    assert reply.mode == "direct" and reply.content == "Hello!" and reply.tool_used is None


def test_chat_turns_are_remembered(kernel):
    """A second chat sees the first turn as history."""
    agent = kernel.agent(NO_TOOLS)
    agent.llm = kernel.llm("scripted:poet", replies=["first", "second"])
    agent.chat("one")
    agent.chat("two")
    contents = [m.content for m in agent.llm.requests[1].messages]
    assert "one" in contents and "first" in contents


def test_without_the_react_plugin_a_tool_chat_says_what_is_missing():
    """A declared agent whose chat needs tools, on a kernel without the react plugin, names what to install."""
    k = Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions"],
               entry_points=False)
    k.add_tool(lambda a, b: a + b, name="add")
    agent = k.agent(WITH_TOOLS)
    agent.llm = k.llm("scripted:calc", replies=["yes"])
    with pytest.raises(ConfigError, match="react"):
        agent.chat("What is 2+3?")


def test_declared_agents_still_speak_through_aexecute_in_group_chats(kernel):
    """Having chat() does not change how a declared agent speaks in a group chat (its transcript input)."""
    from zagent.plugins.groupchat.speakers import _chats

    assert not _chats(kernel.agent(NO_TOOLS))


def test_agent_response_has_a_confidence_score(react_kernel):
    """Seed 004 (Agent-Z AgentResponse): "- confidence_score: float" (every response carries a confidence).
    A direct answer and a ReAct run whose steps all succeeded score 1.0; a failed step lowers the score
    to the share of steps that succeeded; clarification questions (no answer) score 0.0."""
    kernel = react_kernel
    agent = kernel.agent(WITH_TOOLS)
    agent.llm = kernel.llm("scripted:conf", replies=[
        "Hello!",
        {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}, "It is 5.",
        {"tool_calls": [{"name": "add", "arguments": {"a": "two", "b": 3}}]}, "It is 5.",
        {"tool_calls": [{"name": "ask_clarification", "arguments": {"questions": ["Which numbers?"]}}]}])
    assert agent.chat("hi", use_react=False).confidence_score == 1.0
    assert agent.chat("2+3?", use_react=True).confidence_score == 1.0
    assert agent.chat("two+3?", use_react=True).confidence_score == pytest.approx(0.5)
    assert agent.chat("add them", use_react=True).confidence_score == 0.0
