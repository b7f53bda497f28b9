"""zagent against a real small model (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M) on a local OpenAI-compatible server.

What a user meets first, at temperature 0 with bounded generations: the README quick start, the calculator
agent in both tool modes, a ReAct chat with a tool, a 3-node workflow and a 2-agent group chat. Structural
assertions only (see conftest.py): the model's wording is never checked.
"""

from __future__ import annotations

import json

from zagent import Kernel

from .conftest import EXAMPLES, LLM_CONFIG, real_text, with_settings


def test_readme_quick_start_gives_a_real_answer(zagent, tmp_path):
    """`zagent run examples/qa_agent.json --input question=...`: exit 0 and a real (non-placeholder) answer."""
    agent = with_settings(EXAMPLES / "qa_agent.json", tmp_path)
    r = zagent("run", str(agent), "--input", "question=What is the capital of France?", "--json")
    assert r.code == 0, r.err
    assert real_text(json.loads(r.out)["answer"]), r.out


def _calculator(zagent, tmp_path, *extra):
    agent = with_settings(EXAMPLES / "calculator_agent.json", tmp_path, max_steps=4)
    return zagent("run", str(agent), "--input", "question=What is 17 + 25?", "--json", *extra)


def _tool_called(r, name):
    """The tool ran successfully (the CLI's progress on stderr says ``add -> success``). The agent shows the
    output format only after its tool phase: with a JSON format next to the tools, this model answered the sum
    itself and never called the tool."""
    assert f"{name} -> success" in r.err, r.err


def test_calculator_agent_native_tools(zagent, tmp_path):
    """Native tool mode: the typed output comes back (result an integer), and the add tool is called."""
    r = _calculator(zagent, tmp_path)
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert isinstance(out["result"], int) and real_text(out["explanation"])
    _tool_called(r, "add")


def test_calculator_agent_prompt_tools(zagent, tmp_path):
    """Prompt tool mode (--profile native_tools=false): the typed output comes back, and add is called."""
    r = _calculator(zagent, tmp_path, "--profile", "native_tools=false")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert isinstance(out["result"], int) and real_text(out["explanation"])
    _tool_called(r, "add")


def test_react_chat_calls_its_tool(model_env):
    """A ReAct chat with a word_count tool: the tool runs with text arguments and the chat gives a real answer."""
    calls = []

    def word_count(text: str) -> int:
        """Count the words of a text.

        Args:
            text: the text to count
        """
        calls.append(text)
        return len(text.split())

    k = Kernel(plugins=["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions",
                        "zagent.plugins.react"], entry_points=False)
    try:
        k.add_tool(word_count)
        agent = k.agent({"type": "react", "name": "counter", "tools": ["word_count"], "max_iterations": 4,
                         "llm_config": LLM_CONFIG})
        reply = agent.chat("Use the word_count tool: how many words are in 'the quick brown fox jumps'?",
                           use_react=True)
    finally:
        k.close()
    assert calls and all(isinstance(c, str) for c in calls)
    assert reply.tool_used == "word_count"
    assert real_text(reply.content)


WORKFLOW = {
    "name": "note", "goal": "Write a two-line note on a topic: a title, then a sentence, then join them",
    "inputs": [{"name": "topic"}],
    "nodes": [
        {"name": "title", "description": "A title", "inputs": [{"name": "topic"}], "outputs": [{"name": "title"}],
         "agents": [{"type": "customize", "name": "Titler", "description": "Writes titles", "parse_mode": "str",
                     "prompt": "Write a short title (at most six words) for a note about {topic}.",
                     "inputs": [{"name": "topic"}], "outputs": [{"name": "title"}], "llm_config": LLM_CONFIG}]},
        {"name": "sentence", "description": "One sentence", "inputs": [{"name": "topic"}, {"name": "title"}],
         "outputs": [{"name": "sentence"}],
         "agents": [{"type": "customize", "name": "Writer", "description": "Writes one sentence", "parse_mode": "str",
                     "prompt": "Write one sentence about {topic} for a note titled: {title}",
                     "inputs": [{"name": "topic"}, {"name": "title"}], "outputs": [{"name": "sentence"}],
                     "llm_config": LLM_CONFIG}]},
        {"name": "join", "description": "The note", "inputs": [{"name": "title"}, {"name": "sentence"}],
         "outputs": [{"name": "note"}],
         "agents": [{"type": "customize", "name": "Editor", "description": "Joins a note", "parse_mode": "str",
                     "prompt": "Write the note: the title {title} on the first line, then: {sentence}",
                     "inputs": [{"name": "title"}, {"name": "sentence"}], "outputs": [{"name": "note"}],
                     "llm_config": LLM_CONFIG}]},
    ],
    "edges": [{"source": "title", "target": "sentence"}, {"source": "sentence", "target": "join"},
              {"source": "title", "target": "join"}],
}


def test_three_node_workflow_finishes(zagent, tmp_path):
    """`zagent workflow run` on a 3-node graph: exit 0, each node done, the final output a real string."""
    path = tmp_path / "note.json"
    path.write_text(json.dumps(WORKFLOW))
    r = zagent("workflow", "run", str(path), "--input", "topic=green tea", "--json")
    assert r.code == 0, r.err
    assert sum(1 for line in r.err.splitlines() if line.strip().startswith("+ ") and ": done" in line) == 3, r.err
    assert real_text(json.loads(r.out)["note"]), r.out


def _speaker(name, role):
    return {"name": name, "description": f"The {role}.", "parse_mode": "str", "llm_config": LLM_CONFIG,
            "prompt": f"You are the {role}. Task: {{task}}\n\nConversation so far:\n{{transcript}}\n\n"
                      f"Reply in one or two sentences.",
            "inputs": [{"name": "task"}, {"name": "transcript"}], "outputs": [{"name": "reply"}]}


def test_two_agent_group_chat_is_bounded(zagent, tmp_path):
    """A 2-agent group chat with max_rounds=2: exit 0, stopped by its round limit, every turn real text."""
    chat = {"type": "groupchat", "name": "pair", "max_rounds": 2,
            "agents": [_speaker("Writer", "writer"), _speaker("Reviewer", "reviewer")],
            "selection": {"policy": "rules", "first": "Writer",
                          "rules": [{"after": "Writer", "next": "Reviewer"}, {"after": "Reviewer", "next": "Writer"}]},
            "termination": {"max_rounds": 2}}
    path = tmp_path / "pair.json"
    path.write_text(json.dumps(chat))
    r = zagent("groupchat", "run", str(path), "--input", "task=a one-line slogan for a bakery", "--json")
    assert r.code == 0, r.err
    result = json.loads(r.out)
    turns = [m for m in result["messages"] if m.get("speaker") in ("Writer", "Reviewer")]
    assert result["rounds"] == 2 and len(turns) == 2
    assert all(real_text(m["content"]) for m in turns)
