"""Streamed deltas are joined once, not with ``+`` per delta: a reply of ``n`` one-character deltas costs O(n).

Round fifteen: ``PartialReply.text += delta`` (``json`` mode), a held reply's text and reasoning
(``agentkit.holding``) and an Anthropic thinking block's ``thinking``/``signature`` each copied the whole text so
far at every delta (CPython's in-place ``+=`` is for local variables only), so 100,000 deltas copied some 5 * 10**9
characters. The tests count the characters ``+`` copies (deltas are a ``str`` subclass whose reflected ``+`` is
counted: no timers); the timeout is only a guard against a hang.
"""

from types import SimpleNamespace

import pytest

from zagent import Kernel
from zagent.types import Chunk

N = 200_000


class Counted(str):
    """A delta that counts the characters each ``text + delta`` copies (``str`` has no ``__radd__``, so Python
    calls this subclass's first)."""

    copied = 0

    def __radd__(self, other):
        Counted.copied += len(other) + len(self)
        return str(other) + str(self)


@pytest.fixture(autouse=True)
def _reset():
    Counted.copied = 0


def deltas(text):
    return [Counted(c) for c in text]


@pytest.mark.timeout(60)
def test_a_json_reply_of_200k_one_character_deltas_is_not_joined_by_plus():
    """Attack: a model streams a 200,000-character JSON reply one character at a time (``json`` mode reads it as
    it grows). Defence: the deltas are kept in a list and joined when read: ``+`` copies nothing per delta, and
    ``text`` and the final object are the whole reply."""
    from zagent.agentkit.partialjson import PartialReply

    text = '{"answer": "' + "x" * (N - 14) + '"}'
    reply, last = PartialReply(), None
    for delta in deltas(text):
        last = reply.feed(delta) or last
    last = reply.flush() or last
    assert Counted.copied < 10 * N  # was about N * N / 2
    assert reply.text == text and last == {"answer": "x" * (N - 14)}


@pytest.mark.timeout(60)
def test_a_held_reply_of_200k_deltas_is_joined_once_for_the_guardrails():
    """Attack: an agent whose output guardrails hold its stream gets a 200,000-delta reply (text and reasoning).
    Defence: what the guardrails judge is joined once per reply, not grown by ``+`` per piece."""
    from zagent.agentkit.holding import Held, Mark

    ctx = SimpleNamespace(on_delta=None)
    held = Held(ctx, lambda item: None)
    try:
        held(Mark("llm_start"))
        for i, delta in enumerate(deltas("r" * N)):
            held(Chunk(type="reasoning" if i % 2 else "text", text=delta))
        texts = held._unjudged(None)
    finally:
        held.close()
    assert Counted.copied < 10 * N
    assert sorted(len(t) for t in texts) == [N // 2, N // 2]


@pytest.mark.timeout(60)
def test_an_anthropic_thinking_block_of_200k_deltas_is_joined_once():
    """Attack: an Anthropic-compatible server streams a thinking block as 200,000 one-character
    ``thinking_delta`` events (and its signature in pieces). Defence: the block's deltas are kept in a list and
    joined when the block stops; the block sent back holds the whole thinking and signature."""
    from zagent.plugins.anthropic import wire
    from zagent.plugins.anthropic.provider import _AnthropicStreamState

    k = Kernel(plugins=["zagent.plugins.anthropic"], entry_points=False, strict=True)
    try:
        llm = k.llm("anthropic:claude-test", api_key="sk-ant-test").llm
        state = _AnthropicStreamState()
        on_event = llm._on_event
        on_event(wire.AnthropicEvent(type="content_block_start", index=0,
                                     content_block=wire.Block(type="thinking", thinking="")), state)
        for delta in deltas("t" * N):
            on_event(wire.AnthropicEvent(type="content_block_delta", index=0,
                                         delta=wire.EventDelta(type="thinking_delta", thinking=delta)), state)
        for delta in deltas("sig" * 1000):
            on_event(wire.AnthropicEvent(type="content_block_delta", index=0,
                                         delta=wire.EventDelta(type="signature_delta", signature=delta)), state)
        on_event(wire.AnthropicEvent(type="content_block_stop", index=0), state)
    finally:
        k.close()
    assert Counted.copied < 10 * N
    assert state.thinking_blocks == [{"type": "thinking", "thinking": "t" * N, "signature": "sig" * 1000}]
    assert "".join(state.thinking_parts) == "t" * N
