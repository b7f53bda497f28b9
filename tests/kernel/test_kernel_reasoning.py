"""zagent.providerkit.think: <think> spans split from answer text, in whole replies and in streamed deltas (by a kit
provider, ``ProviderLLM``); the kernel's ``settle`` gives each call its own id and raises a structured-output refusal."""

from __future__ import annotations

import asyncio
import re

from hypothesis import given, strategies as st

from zagent import Chunk, Completion, Kernel, LLMRequest, Message, Model, Refusal, ToolCall
from zagent._model.replies import settle, unique_call_ids
from zagent.providerkit import ProviderLLM, ThinkStream, split_reply, split_think
from zagent.agentkit.thinking import strip_think

import pytest


def test_closed_span_at_start_is_reasoning():
    """A leading <think>…</think> becomes reasoning; the answer loses the blank lines after it."""
    assert split_think('<think>maybe {"a": 1}</think>\n\n{"a": 2}') == ('{"a": 2}', 'maybe {"a": 1}')


def test_thinking_tag_is_read_too():
    """<thinking>…</thinking> is treated as <think>."""
    assert split_think("<thinking>hmm</thinking>yes") == ("yes", "hmm")


def test_span_left_open_runs_to_the_end():
    """An unclosed <think> (a cut reply) makes everything after it reasoning, never answer."""
    assert split_think('<think>call <tool_call>{"name": "rm"}</tool_call>') == ("", 'call <tool_call>{"name": "rm"}</tool_call>')


def test_closing_tag_without_opener_ends_leading_reasoning():
    """A template that opened <think> in the prompt: text before </think> is reasoning."""
    assert split_think("I should answer 4.</think>\n4") == ("4", "I should answer 4.")


def test_span_in_the_middle_is_cut_out():
    """A span after some answer text is removed; the text around it is kept as written."""
    assert split_think("a <think>x</think> b") == ("a  b", "x")


def test_words_that_merely_start_with_think_are_kept():
    """<thinker> is not a think tag."""
    assert split_think("a <thinker> b") == ("a <thinker> b", "")


def test_text_without_tags_is_returned_unchanged():
    """The fast path returns the very same string object."""
    text = "I think so."
    assert split_think(text)[0] is text and strip_think(text) is text


def _stream(text: str, cuts: list[int]) -> tuple[str, str]:
    s = ThinkStream()
    pieces: list[tuple[str, str]] = []
    last = 0
    for cut in sorted(set(c % (len(text) + 1) for c in cuts)) + [len(text)]:
        pieces += s.feed(text[last:cut])
        last = cut
    pieces += s.flush()
    return "".join(t for k, t in pieces if k == "text"), "".join(t for k, t in pieces if k == "reasoning")


_parts = st.lists(st.sampled_from(["<think>", "</think>", "<thinking>", "</thinking>", "<", "<th", "a", " ", "\n",
                                   '{"x": 1}', "<thinker>", "ink>"]), max_size=12).map("".join)


@given(_parts, st.lists(st.integers(0, 200), max_size=6))
def test_stream_text_matches_the_whole_reply_split(text, cuts):
    """However the deltas are cut, streamed answer text equals split_think's answer (for replies whose
    reasoning does not start before the reply, i.e. no orphan closing tag first)."""
    answer, reasoning = split_think(text)
    close, opener = re.search(r"</think(ing)?>", text), re.search(r"<think(ing)?>", text)
    orphan = close is not None and (opener is None or close.start() < opener.start())
    if orphan:
        return
    streamed, thought = _stream(text, cuts)
    assert streamed == answer
    assert "".join(thought.split()) == "".join(reasoning.split())


def test_split_reply_moves_think_to_reasoning_and_keeps_provider_reasoning():
    """The kit's split_reply joins inline reasoning to what the provider already reported."""
    c = Completion(message=Message(role="assistant", content="<think>b</think>ok", reasoning="a"))
    out = split_reply(c)
    assert out.text == "ok" and out.reasoning == "a\n\nb"


def test_kit_provider_respects_profile_flag():
    """think_tags=False leaves the text as the model wrote it."""
    llm = _Inline(provider="x", model="y", profile_overrides={"think_tags": False})
    assert llm.complete("q").text == "<think>no</think>yes"


def test_refusal_with_structured_output_raises():
    """A refusal to a response_format request is a typed Refusal carrying the text."""
    c = Completion(message=Message(role="assistant"), refusal="I can't help with that.")
    with pytest.raises(Refusal) as info:
        settle(LLMRequest(model="m", messages=[], response_format={"type": "json_object"}), c)
    assert info.value.refusal == "I can't help with that." and "refused" in str(info.value)
    assert settle(LLMRequest(model="m", messages=[]), c).refusal == "I can't help with that."


def test_unique_call_ids_fills_empty_and_repeated_ids():
    """Empty and repeated ids get fresh ones; unique ids are kept; all-unique lists come back as is."""
    calls = [ToolCall(id="", name="a"), ToolCall(id="x", name="b"), ToolCall(id="x", name="c")]
    fixed = unique_call_ids(calls)
    assert fixed[1].id == "x" and len({c.id for c in fixed}) == 3 and all(c.id for c in fixed)
    ok = [ToolCall(id="1", name="a"), ToolCall(id="2", name="b")]
    assert unique_call_ids(ok) is ok


class _Inline(ProviderLLM):
    """A kit provider that streams a reply with an inline think span cut at awkward places."""

    async def _wire_complete(self, request):
        return Completion(message=Message(role="assistant", content="<think>no</think>yes"))

    async def _wire_stream(self, request):
        for piece in ["<th", "ink>n", "o</thi", "nk>ye", "s"]:
            yield Chunk(type="text", text=piece)
        yield Chunk(type="done", completion=Completion(message=Message(role="assistant", content="<think>no</think>yes")))


def test_stream_yields_reasoning_chunks_and_settled_done():
    """Through Model.astream, think spans arrive as reasoning chunks and never as text."""
    k = Kernel(entry_points=False)
    llm = Model(_Inline(provider="x", model="y"), k)

    async def run():
        return [c async for c in llm.astream("q")]

    chunks = asyncio.run(run())
    assert "".join(c.text for c in chunks if c.type == "text") == "yes"
    assert "".join(c.text for c in chunks if c.type == "reasoning") == "no"
    assert chunks[-1].completion.text == "yes" and chunks[-1].completion.reasoning == "no"
    assert llm.complete("q").text == "yes"
    k.close()
