"""What a small local model sent through llama.cpp's OpenAI-compatible server (issue 22, findings 1, 2, 3 and 5),
replayed by a loopback server on 127.0.0.1 and run through the ``zagent`` CLI and the agents."""

from __future__ import annotations

import json

from tests.servers.openai_server import completion

from .conftest import EXAMPLES, bodies

QA = str(EXAMPLES / "qa_agent.json")
PLACEHOLDER = "<string, required: the answer>"


# -- finding 1: the README's main job ----------------------------------------------------


def test_qa_agent_json_answer_in_title_mode_is_read(server, zagent):
    """`zagent run examples/qa_agent.json`: a {"answer": ...} reply (title mode asked) is the answer, no repair."""
    server.then(completion('{"answer": "The sky looks blue because air scatters blue light most."}'))
    code, out, err = zagent("run", QA, "--input", "question=Why is the sky blue?")
    assert code == 0, err
    assert out.strip() == "The sky looks blue because air scatters blue light most."
    assert len(bodies(server)) == 1


def test_qa_agent_placeholder_after_repair_is_an_error_not_an_answer(server, zagent):
    """A reply the parser cannot read, then the format's placeholder as the repair answer: exit 1, never printed."""
    server.then(completion("I think it is because of the light."), completion(f"## answer\n{PLACEHOLDER}"))
    code, out, err = zagent("run", QA, "--input", "question=Why is the sky blue?")
    assert code == 1
    assert PLACEHOLDER not in out and out.strip() == ""
    assert "placeholder" in err


def test_repair_prompt_sent_to_the_model_shows_an_example_not_placeholders(server, zagent):
    """The repair request the server receives holds a filled-in example and says what was wrong."""
    server.then(completion("no sections here"), completion("## answer\nBecause of Rayleigh scattering."))
    code, out, _err = zagent("run", QA, "--input", "question=Why is the sky blue?")
    assert code == 0 and out.strip() == "Because of Rayleigh scattering."
    repair = bodies(server)[1]["messages"][-1]["content"]
    assert "<example>" in repair and "required: the answer" not in repair.split("## Output format")[1]
    assert "## What was wrong" in repair


def test_xml_list_items_as_string_elements(server, zagent, tmp_path):
    """xml mode: list items sent as <string> elements (not <item>) are the list."""
    agent = tmp_path / "tags.json"
    agent.write_text(json.dumps({
        "name": "Tagger", "prompt": "Tags for: {text}", "inputs": [{"name": "text"}],
        "outputs": [{"name": "tags", "type": "array", "items": {"name": "tag", "type": "string"}}],
        "parse_mode": "xml"}))
    server.then(completion("<tags><string>sky</string><string>light</string></tags>"))
    code, out, err = zagent("run", str(agent), "--input", "text=blue sky", "--json")
    assert code == 0, err
    assert json.loads(out) == {"tags": ["sky", "light"]}


# -- finding 2: tool calls sent as text ----------------------------------------------------


def _word_count(text: str) -> int:
    """Count the words of a text."""
    _word_count.calls.append(text)
    return len(text.split())


_word_count.calls = []


def test_react_native_mode_runs_a_call_sent_as_text(server, kernel):
    """Native mode, a reply whose content is {"name": "word_count", "arguments": {...}}: the tool runs."""
    _word_count.calls.clear()
    kernel.add_tool(_word_count, name="word_count")
    agent = kernel.agent({"type": "react", "name": "counter", "tools": ["word_count"], "max_iterations": 4})
    server.then(completion('{"name": "word_count", "arguments": {"text": "one two three"}}'),
                completion("There are 3 words."))
    result = agent.chat("How many words are in 'one two three'?", use_react=True)
    assert _word_count.calls == ["one two three"]
    assert result.content == "There are 3 words."
    second = bodies(server)[1]["messages"]
    assert second[-2]["role"] == "assistant" and second[-2]["tool_calls"][0]["function"]["name"] == "word_count"
    assert second[-1]["role"] == "tool" and second[-1]["content"].strip() == "3"


def test_fallback_call_is_sent_back_with_string_content(server, kernel):
    """The rewritten assistant turn carries content "" (not null, which llama-cpp-python's server refuses)."""
    kernel.add_tool(_word_count, name="word_count")
    agent = kernel.agent({"type": "react", "name": "counter", "tools": ["word_count"], "max_iterations": 4})
    server.then(completion('<tool_call>{"name": "word_count", "arguments": {"text": "a b"}}</tool_call>'),
                completion("2 words."))
    agent.chat("How many words in 'a b'?", use_react=True)
    assert bodies(server)[1]["messages"][-2]["content"] == ""


def test_restated_call_after_its_result_is_not_run_again(server, kernel):
    """A reply that restates the call already answered (next to its result) is the answer, not a new call."""
    _word_count.calls.clear()
    kernel.add_tool(_word_count, name="word_count")
    agent = kernel.agent({"type": "react", "name": "counter", "tools": ["word_count"], "max_iterations": 4})
    call = '{"name": "word_count", "arguments": {"text": "a b"}}'
    server.then(completion(call), completion(call + '\n{"response": 2}'))
    reply = agent.chat("How many words in 'a b'?", use_react=True)
    assert _word_count.calls == ["a b"] and len(bodies(server)) == 2
    assert '"response": 2' in reply.content


def test_react_text_call_fallback_off_by_profile(server, kernel):
    """Profile text_tool_fallback=false: the text stays the answer and the tool does not run."""
    _word_count.calls.clear()
    kernel.add_tool(_word_count, name="word_count")
    agent = kernel.agent({"type": "react", "name": "counter", "tools": ["word_count"], "max_iterations": 4,
                          "llm_config": {"profile": {"text_tool_fallback": False}}})
    call = '{"name": "word_count", "arguments": {"text": "one two three"}}'
    server.then(completion(call))
    result = agent.chat("How many words?", use_react=True)
    assert _word_count.calls == [] and result.content == call


def test_action_native_mode_runs_a_tool_call_block(server, zagent):
    """The calculator agent (native tools): a <tool_call> block in the text runs add, then the JSON answer."""
    server.then(completion('<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>'),
                completion('{"result": 5, "explanation": "2 + 3 = 5"}'))
    code, out, err = zagent("run", str(EXAMPLES / "calculator_agent.json"), "--input", "question=2+3?", "--json")
    assert code == 0, err
    assert json.loads(out)["result"] == 5
    assert "add -> ok" in err or "tools: add" in err
    assert bodies(server)[1]["messages"][-1]["role"] == "tool"


def test_text_naming_an_unoffered_tool_stays_text(server, kernel):
    """A JSON call naming a tool that was not offered is not run: it is the model's answer."""
    kernel.add_tool(_word_count, name="word_count")
    agent = kernel.agent({"type": "react", "name": "counter", "tools": ["word_count"], "max_iterations": 2})
    text = '{"name": "delete_everything", "arguments": {}}'
    server.then(completion(text))
    assert agent.chat("hi", use_react=True).content == text


# -- finding 3: the CLI adapts to a local server ---------------------------------------------


def test_profile_flag_switches_to_prompt_tools(server, zagent):
    """--profile native_tools=false: no `tools` on the wire, the tools are described in the prompt instead."""
    server.then(completion('<tool_call>{"name": "add", "arguments": {"a": 1, "b": 1}}</tool_call>'),
                completion('{"result": 2, "explanation": "1 + 1"}'))
    code, out, err = zagent("run", str(EXAMPLES / "calculator_agent.json"), "--input", "question=1+1?",
                            "--profile", "native_tools=false", "--json")
    assert code == 0, err
    first = bodies(server)[0]
    assert "tools" not in first
    assert "add" in first["messages"][0]["content"]


def test_profile_flag_rejects_unknown_field(server, zagent):
    """--profile with a field ModelProfile does not have is a usage error (exit 2) naming the known fields."""
    code, _out, err = zagent("run", QA, "--input", "question=q", "--profile", "native_toolz=false")
    assert code == 2 and "native_tools" in err


def test_model_flag_keeps_llm_config_and_says_what_it_replaced(server, zagent, tmp_path):
    """--model replaces only the model: the file's llm_config (temperature) is still sent; stderr names both."""
    agent = tmp_path / "a.json"
    agent.write_text(json.dumps({**json.loads((EXAMPLES / "qa_agent.json").read_text()),
                                 "llm": "openai:first-model", "llm_config": {"temperature": 0.0}}))
    server.then(completion("## answer\nok"))
    code, out, err = zagent("run", str(agent), "--input", "question=q", "--model", "openai:second-model")
    assert code == 0, err
    body = bodies(server)[0]
    assert body["model"] == "second-model" and body["temperature"] == 0.0
    assert "openai:first-model" in err and "temperature" in err


def test_timeout_flag_is_in_force_during_the_run(server, zagent, kernel, monkeypatch):
    """--timeout 7 is ZAGENT_TIMEOUT=7 while the command runs, and not after it."""
    import os

    seen = []

    class Spy:
        def zagent_event(self, event):
            if event.type == "llm_start":
                seen.append(os.environ.get("ZAGENT_TIMEOUT"))

    kernel.add_plugin(Spy(), name="spy")
    server.then(completion("## answer\nok"))
    code, _out, err = zagent("run", QA, "--input", "question=q", "--timeout", "7")
    assert code == 0, err
    assert seen == ["7"] and "ZAGENT_TIMEOUT" not in os.environ


# -- finding 5: errors a CLI user can act on --------------------------------------------------


def test_parse_error_shows_reply_excerpts_and_fitting_advice(server, zagent):
    """After a failed repair: both replies are excerpted, no .raw/.attempts, no 'use the repair prompt'."""
    server.then(completion("Blue light scatters more than red light."), completion("still no sections"))
    code, _out, err = zagent("run", QA, "--input", "question=Why is the sky blue?")
    assert code == 1
    assert "Blue light scatters more than red light." in err and "still no sections" in err
    assert ".raw" not in err and ".attempts" not in err
    assert "already asked the model once more" in err
    assert "use the repair prompt" not in err and "with the parser's repair prompt" not in err


def test_workflow_node_parse_error_shows_the_reply_not_raw_attributes(server, zagent, tmp_path):
    """`zagent workflow run`: a node whose model never gives its output exits 1 showing that node's replies."""
    flow = {"name": "one", "goal": "Outline a topic in one step", "inputs": [{"name": "topic"}],
            "nodes": [{"name": "outline", "description": "Outline", "inputs": [{"name": "topic"}],
                       "outputs": [{"name": "outline"}],
                       "agents": [{"type": "customize", "name": "Outliner", "description": "Outlines",
                                   "prompt": "Outline {topic}.", "inputs": [{"name": "topic"}],
                                   "outputs": [{"name": "outline"}, {"name": "points", "type": "integer"}]}]}],
            "edges": []}
    path = tmp_path / "wf.json"
    path.write_text(json.dumps(flow))
    server.then(completion("Intro, body, end."), completion("still just prose"))
    code, _out, err = zagent("workflow", "run", str(path), "--input", "topic=tea", "--quiet")
    assert code == 1
    error = err[err.index("zagent: error:"):]
    assert "outline:" in error and "Intro, body, end." in error and "still just prose" in error
    assert ".raw" not in error and ".attempts" not in error and "parser's repair prompt" not in error
