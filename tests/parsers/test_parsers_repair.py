"""Repair, not silence: one re-ask with an extraction prompt, then a ParseError holding both replies."""

import asyncio

import pytest
from zagent import Completion, Kernel, Message, ParseError

FIELDS = [{"name": "answer"}, {"name": "count", "type": "integer"}]


class ScriptedLLM:
    """Answers each acomplete with the next scripted text and records what it was asked."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.prompts = []
        self.options = []

    async def acomplete(self, messages, ctx=None, **options):
        self.prompts.append(messages)
        self.options.append(options)
        return Completion(message=Message.assistant(self.replies.pop(0)))


def test_repair_prompt_holds_raw_reply_spec_and_problem(kernel):
    """The repair prompt contains the raw reply, the field spec, what was wrong, and a filled-in example."""
    p = kernel.parser("json")
    with pytest.raises(ParseError) as info:
        p.parse('{"answer": "x", "count": "lots"}', FIELDS)
    prompt = p.repair_prompt('{"answer": "x", "count": "lots"}', FIELDS, info.value)
    for part in ['{"answer": "x", "count": "lots"}', '"name": "count"', "field 'count' is invalid",
                 '<example>\n{"answer":"An example answer, written in full.","count":3}\n</example>']:
        assert part in prompt


def test_good_reply_needs_no_repair(kernel):
    """A reply that parses is returned without calling the model."""
    llm = ScriptedLLM()
    got = asyncio.run(kernel.parser("json").aparse_with_repair('{"answer": "a", "count": 1}', FIELDS, llm))
    assert got == {"answer": "a", "count": 1} and llm.prompts == []


def test_bad_reply_is_repaired_with_one_call(kernel):
    """A reply that fails is re-asked once; the repaired reply is parsed."""
    llm = ScriptedLLM('{"answer": "a", "count": 2}')
    got = asyncio.run(kernel.parser("json").aparse_with_repair("The answer is a, twice.", FIELDS, llm))
    assert got == {"answer": "a", "count": 2} and len(llm.prompts) == 1
    assert llm.options[0]["output_spec"]["mode"] == "json"


def test_failed_repair_raises_with_both_raw_replies(kernel):
    """If the repaired reply fails too, ParseError names the fields and keeps both raw texts."""
    llm = ScriptedLLM('{"answer": "a"}')
    with pytest.raises(ParseError) as info:
        asyncio.run(kernel.parser("json").aparse_with_repair("no idea", FIELDS, llm))
    err = info.value
    assert (err.raw, err.attempts, err.missing) == ("no idea", ["no idea", '{"answer": "a"}'], ["count"])
    assert len(llm.prompts) == 1


def test_sync_twin_works_in_a_plain_script(kernel):
    """parse_with_repair is the sync twin of aparse_with_repair."""
    llm = ScriptedLLM("<answer>a</answer><count>3</count>")
    assert kernel.parser("xml").parse_with_repair("??", FIELDS, llm) == {"answer": "a", "count": 3}


def test_repair_through_the_offline_provider():
    """With the offline test model, the repair call answers in the parser's format and parses."""
    k = Kernel(plugins=["zagent.plugins.parsers", "zagent.plugins.offline"], entry_points=False, strict=True)
    try:
        got = k.parser("title").parse_with_repair("garbage", FIELDS, k.llm("test:offline"))
        assert set(got) == {"answer", "count"} and isinstance(got["count"], int)
    finally:
        k.close()
