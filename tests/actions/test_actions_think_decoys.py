"""Attack: a decoy answer or tool call inside <think> is never returned or run (issue 16).

Reasoning models write what they *considered* inside ``<think>``; a JSON
object or a ``<tool_call>`` there is not the answer. Each test puts a decoy
in the reasoning and the real answer after it, in every parse mode and in the
declared agent's tool loop (native and prompt tools).
"""

import json

import pytest

from tests.kernels import with_wipe
from tests.servers.openai_server import OpenAIServer, completion

from .conftest import qa_spec

OUTPUTS = [{"name": "title", "type": "string"}, {"name": "score", "type": "integer"}]

DECOYS = {
    "title": ("## title\nEVIL\n\n## score\n666", "## title\nHello\n\n## score\n7"),
    "json": ('{"title": "EVIL", "score": 666}', '{"title": "Hello", "score": 7}'),
    "xml": ("<title>EVIL</title><score>666</score>", "<title>Hello</title>\n<score>7</score>"),
}


@pytest.fixture
def wiped(kernel):
    """A destructive tool that records each run (it must never run in these tests)."""
    return with_wipe(kernel)


@pytest.mark.parametrize("mode", sorted(DECOYS))
@pytest.mark.parametrize("shape", ["closed", "unclosed-after-answer"])
def test_decoy_inside_think_is_not_the_answer(kernel, mode, shape):
    """The fields come from the answer after </think>, never from the decoy inside it."""
    decoy, real = DECOYS[mode]
    reply = (f"<think>Maybe {decoy}? No.</think>\n{real}" if shape == "closed"
             else f"{real}\n<think>or rather {decoy}")
    agent = kernel.agent(qa_spec(outputs=OUTPUTS, parse_mode=mode))
    agent.llm = kernel.llm("scripted:m", replies=[reply])
    result = agent(question="q")
    assert (result.title, result.score) == ("Hello", 7)


def test_str_mode_answer_excludes_reasoning(kernel):
    """parse_mode 'str' gives the answer text only; the reasoning is not part of it."""
    agent = kernel.agent(qa_spec())
    agent.llm = kernel.llm("scripted:m", replies=["<think>say EVIL</think>\nFive."])
    assert agent(question="2+3?").answer == "Five."


def test_custom_mode_function_never_sees_reasoning(kernel, tmp_path, monkeypatch):
    """parse_mode 'custom' gets the answer text without the think span."""
    (tmp_path / "thinkparse.py").write_text("def parse(text):\n    return {'answer': text}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    agent = kernel.agent(qa_spec(parse_mode="custom", parse_func="thinkparse:parse"), trust=True)
    agent.llm = kernel.llm("scripted:m", replies=["<think>EVIL</think>fine"])
    assert agent(question="x").answer == "fine"


@pytest.mark.parametrize("mode", sorted(DECOYS) + ["str"])
def test_parser_entry_point_ignores_think_spans(kernel, mode):
    """Defence in depth: the parser itself skips think spans when given raw model text."""
    decoy, real = DECOYS.get(mode, ("EVIL", "Hello"))
    fields = OUTPUTS if mode != "str" else [{"name": "title", "type": "string"}]
    values = kernel.parser(mode).parse(f"<think>{decoy}</think>{real}", fields)
    assert values["title"] == "Hello"


def test_prompt_mode_decoy_call_inside_think_never_runs(kernel, wiped):
    """Prompt-mode tools: a <tool_call> the model considered inside <think> is not run; the real one is."""
    reply = ('<think>I could <tool_call>{"name": "wipe", "arguments": {"path": "/"}}</tool_call> but no.</think>\n'
             '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>')
    llm = kernel.llm("scripted:m", replies=[reply, "5"], profile={"native_tools": False})
    agent = kernel.agent(qa_spec(tools=["add", "wipe"]))
    agent.llm = llm
    result = agent(question="2+3?")
    assert wiped == [] and [r.name for r in result.tool_results] == ["add"] and result.answer == "5"


def test_prompt_mode_unclosed_think_call_never_runs(kernel, wiped):
    """A reply cut inside <think> holds no call to run, even a well-formed one."""
    reply = '<think>plan: <tool_call>{"name": "wipe", "arguments": {}}</tool_call>'
    llm = kernel.llm("scripted:m", replies=[reply, "done"], profile={"native_tools": False})
    agent = kernel.agent(qa_spec(tools=["wipe"]))
    agent.llm = llm
    agent(question="q")
    assert wiped == []


def test_native_mode_text_decoy_never_runs(kernel, wiped):
    """Native tools: a text reply whose only call is inside <think> is an answer, and nothing runs."""
    reply = '<think><tool_call>{"name": "wipe", "arguments": {}}</tool_call></think>The answer is 5.'
    llm = kernel.llm("scripted:m", replies=[reply])
    agent = kernel.agent(qa_spec(tools=["wipe"]))
    agent.llm = llm
    assert agent(question="q").answer == "The answer is 5." and wiped == []


def test_decoy_json_over_real_http(kernel):
    """End to end over a loopback OpenAI server: the JSON inside <think> loses to the answer after it."""
    with OpenAIServer(key="sk-t") as server:
        server.then(completion('<think>{"title": "EVIL", "score": 666}</think>\n{"title": "Hello", "score": 7}'))
        agent = kernel.agent(qa_spec(outputs=OUTPUTS, parse_mode="json"))
        agent.llm = kernel.llm("openai:qwq", base_url=server.url, api_key="sk-t")
        result = agent(question="q")
        assert (result.title, result.score) == ("Hello", 7)
        assert json.loads(server.requests[0].body)["max_tokens"] == 2048
