"""Human agents (type ``human``): a person answers a node or a turn, through a callback or the terminal (issue 17, item 9)."""

import json
import os
import subprocess
import sys

import pytest

from zagent import ConfigError, Kernel, ParseError

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.memory",
           "zagent.plugins.manager", "zagent.plugins.workflow", "zagent.plugins.groupchat"]

EDITOR = {"type": "human", "name": "Editor", "prompt": "Review this draft:\n{draft}",
          "inputs": [{"name": "draft"}],
          "outputs": [{"name": "verdict"}, {"name": "score", "type": "integer"},
                      {"name": "notes", "required": False}]}


@pytest.fixture
def kernel():
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    yield k
    k.close()


def test_responder_gets_the_rendered_prompt_and_its_answer_is_typed(kernel):
    """The responder sees the prompt with inputs filled in; its answer is converted to the declared types."""
    seen = []

    def responder(request):
        seen.append(request)
        return {"verdict": "accept", "score": "8"}

    agent = kernel.agent(EDITOR)
    agent.responder = responder
    result = agent(draft="Bees make honey.")
    assert seen[0].prompt == "Review this draft:\nBees make honey." and seen[0].agent == "Editor"
    assert result.verdict == "accept" and result.score == 8


def test_kernel_config_responder_and_async_responder(tmp_path):
    """A responder given in Kernel config is used; it may be a coroutine function."""
    async def responder(request):
        return {"verdict": "ok", "score": 1}

    k = Kernel(plugins=PLUGINS, entry_points=False, config={"human_responder": responder})
    try:
        assert k.agent(EDITOR)(draft="x").verdict == "ok"
    finally:
        k.close()


def test_without_a_responder_the_error_says_how_to_give_one(kernel):
    """With no responder anywhere, the run fails with a ConfigError naming both ways to give one."""
    with pytest.raises(ConfigError) as info:
        kernel.agent(EDITOR)(draft="x")
    assert "responder" in str(info.value) and "human_responder" in str(info.value)


def test_an_answer_of_the_wrong_type_is_a_parse_error_naming_the_agent(kernel):
    """An answer that does not fit the outputs is a ParseError naming the human agent."""
    agent = kernel.agent(EDITOR)
    agent.responder = lambda request: {"verdict": "ok", "score": "high"}
    with pytest.raises(ParseError) as info:
        agent(draft="x")
    assert "Editor" in str(info.value) and "score" in str(info.value)


def test_missing_inputs_are_not_guessed_by_a_model(kernel):
    """A human agent with a missing input fails clearly instead of asking a model to extract it."""
    agent = kernel.agent(EDITOR)
    agent.responder = lambda request: {"verdict": "ok", "score": 1}
    with pytest.raises(ConfigError, match="draft"):
        agent()


def test_a_person_answers_a_workflow_node(kernel):
    """A workflow node whose agent is human gets its outputs from the responder, with the upstream value."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    graph = WorkFlowGraph.from_dict({
        "name": "review", "goal": "draft then review", "inputs": [{"name": "topic"}],
        "nodes": [
            {"name": "draft", "inputs": [{"name": "topic"}], "outputs": [{"name": "draft"}],
             "agents": [{"name": "Drafter", "prompt": "Draft on {topic}", "inputs": [{"name": "topic"}],
                         "outputs": [{"name": "draft"}], "parse_mode": "str", "llm": "test:offline"}]},
            {"name": "review", "inputs": [{"name": "draft"}], "outputs": [{"name": "verdict"}],
             "agents": [{"type": "human", "name": "Reviewer", "prompt": "Review: {draft}",
                         "inputs": [{"name": "draft"}], "outputs": [{"name": "verdict"}]}]}],
        "edges": [{"source": "draft", "target": "review"}]})
    asked = []
    kernel.config["human_responder"] = lambda request: asked.append(request.inputs["draft"]) or "looks good"
    result = WorkFlowExecutor(kernel=kernel).run(graph, {"topic": "bees"})
    assert result.outputs["verdict"] == "looks good"
    assert asked and asked[0]


def test_a_person_speaks_in_a_group_chat(kernel):
    """A human speaker's reply joins the chat transcript like any other speaker's."""
    from zagent.plugins.groupchat import GroupChat

    kernel.config["human_responder"] = lambda request: "I agree, ship it"
    human = {"type": "human", "name": "Pat", "prompt": "Task: {task}\n{transcript}",
             "inputs": [{"name": "task"}, {"name": "transcript"}], "outputs": [{"name": "reply"}]}
    chat = GroupChat(kernel=kernel, agents=[human], termination={"max_rounds": 1})
    result = chat.run("decide the release")
    assert [m.content for m in result.messages][-1] == "I agree, ship it"


def test_the_cli_asks_on_the_terminal(tmp_path):
    """`zagent run` on a human agent file shows the prompt on stderr and reads each output from stdin."""
    spec = tmp_path / "editor.json"
    spec.write_text(json.dumps(EDITOR))
    env = {k: v for k, v in os.environ.items() if k != "ZAGENT_MODEL"}
    proc = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "run", str(spec), "--input",
                           "draft=Bees make honey.", "--json"], input="accept\n9\n\n", capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "  Review this draft:\n  Bees make honey." in proc.stderr  # indented under the header
    assert json.loads(proc.stdout) == {"verdict": "accept", "score": 9, "notes": None}


def test_the_cli_reports_stdin_closed(tmp_path):
    """With stdin closed before every output is answered, the CLI fails with a message naming the output."""
    spec = tmp_path / "editor.json"
    spec.write_text(json.dumps(EDITOR))
    env = {k: v for k, v in os.environ.items() if k != "ZAGENT_MODEL"}
    proc = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "run", str(spec), "--input", "draft=x"],
                          input="accept\n", capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 1
    assert "stdin closed" in proc.stderr and "score" in proc.stderr
