"""Each parse mode works end to end through a declared agent with the scripted provider."""

import pytest

from zagent import ParseError

from .conftest import qa_spec

OUTPUTS = [{"name": "title", "type": "string"}, {"name": "score", "type": "integer"}]


@pytest.mark.parametrize("mode, reply", [
    ("title", "## title\nHello\n\n## score\n7"),
    ("json", 'Sure! ```json\n{"title": "Hello", "score": "7"}\n```'),
    ("xml", "<title>Hello</title>\n<score>7</score>"),
])
def test_declared_agent_parses_typed_fields_in_each_mode(kernel, mode, reply):
    """A reply in the declared mode becomes typed fields (the integer converted from text)."""
    llm = kernel.llm("scripted:m", replies=[reply])
    agent = kernel.agent(qa_spec(outputs=OUTPUTS, parse_mode=mode))
    agent.llm = llm
    result = agent(question="q")
    assert (result.title, result.score) == ("Hello", 7)


def test_str_mode_assigns_whole_reply(kernel):
    """parse_mode 'str' gives the whole reply to the single output field."""
    agent = kernel.agent(qa_spec(llm="scripted:a"))
    agent.llm = kernel.llm("scripted:a", replies=["  Five.  "])
    assert agent(question="2+3?").answer == "Five."


def test_custom_mode_uses_user_function(kernel, tmp_path, monkeypatch):
    """parse_mode 'custom' calls the function named by import path (in a trusted spec)."""
    (tmp_path / "myparse.py").write_text("def parse(text):\n    return {'answer': text.upper()}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    agent = kernel.agent(qa_spec(parse_mode="custom", parse_func="myparse:parse"), trust=True)
    agent.llm = kernel.llm("scripted:a", replies=["hi"])
    assert agent(question="x").answer == "HI"


def test_unparseable_reply_is_repaired_once(kernel):
    """A reply that does not parse is re-asked once with the repair prompt, and that answer is used."""
    llm = kernel.llm("scripted:m", replies=["I think it's Hello, about 7", '{"title": "Hello", "score": 7}'])
    agent = kernel.agent(qa_spec(outputs=OUTPUTS, parse_mode="json"))
    agent.llm = llm
    result = agent(question="q")
    assert result.score == 7
    assert len(llm.requests) == 2
    assert "I think it's Hello" in llm.requests[1].messages[-1].content


def test_failed_repair_raises_parse_error_with_raw_text(kernel):
    """When the repair answer does not parse either, ParseError keeps the raw text."""
    llm = kernel.llm("scripted:m", replies=["no fields here", "still nothing"])
    agent = kernel.agent(qa_spec(outputs=OUTPUTS, parse_mode="json"))
    agent.llm = llm
    with pytest.raises(ParseError) as info:
        agent(question="q")
    assert "no fields here" in info.value.raw or "still nothing" in info.value.raw


def test_empty_answer_is_nudged(kernel):
    """A reply with neither tool calls nor text gets a nudge, and the loop goes on."""
    llm = kernel.llm("scripted:m", replies=["", "done"])
    agent = kernel.agent(qa_spec())
    agent.llm = llm
    assert agent(question="q").answer == "done"
    assert "final answer" in llm.requests[1].messages[-1].content
