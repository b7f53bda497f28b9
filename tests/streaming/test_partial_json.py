"""``partial_object``: the object a half-written JSON reply holds so far (streamed ``json`` mode).

The survey (003), 4.3: "每次yield一个ChatResponseChunk" (a chunk at a time): a ``json`` reply is shown as the
object it holds after each chunk.
"""

import msgspec
from hypothesis import given, settings, strategies as st

from zagent.agentkit.partialjson import partial_object

values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)
objects = st.dictionaries(st.text(max_size=8), values, min_size=1, max_size=5)


@settings(max_examples=150, deadline=None)
@given(objects, st.text(max_size=10).filter(lambda t: "{" not in t))
def test_every_prefix_gives_an_object_or_nothing_and_the_whole_reply_its_object(obj, lead):
    """003: a chunk at a time: after any prefix of the reply the partial is None or an object, never an
    error, and the finished reply gives exactly the object."""
    text = lead + msgspec.json.encode(obj).decode()
    for cut in range(len(text) + 1):
        found = partial_object(text[:cut])
        assert found is None or isinstance(found, dict)
    assert partial_object(text) == obj


def test_a_string_being_written_shows_its_text_so_far():
    """003: the reply as it comes: an open string shows what it holds, a key without a value is left out."""
    assert partial_object('```json\n{"title": "Tides", "body": "The mo') == {"title": "Tides", "body": "The mo"}
    assert partial_object('{"title": "Tides", "bo') == {"title": "Tides"}
    assert partial_object("no json here") is None


def test_a_short_reply_is_read_after_every_delta():
    """Below ``EVERY_DELTA_BELOW`` characters each delta that changes the object gives the object so far."""
    from zagent.agentkit.partialjson import PartialReply

    reply, seen = PartialReply(), []
    for delta in ['{"title": "Ti', 'des", "answer"', ': "The moon', '"}']:
        found = reply.feed(delta)
        if found is not None:
            seen.append(found)
    assert seen == [{"title": "Ti"}, {"title": "Tides"}, {"title": "Tides", "answer": "The moon"}]
    assert reply.flush() is None  # nothing left unread


def test_a_long_reply_costs_a_bounded_number_of_reads_and_ends_whole(monkeypatch):
    """A 200,000-character reply in 40,000 deltas is read a few hundred times, not 40,000 (each read is linear in
    the reply: reading after every delta made a long reply quadratic); ``flush`` gives the whole object."""
    from zagent.agentkit import partialjson

    calls = []
    real = partialjson.partial_object
    monkeypatch.setattr(partialjson, "partial_object", lambda text: calls.append(len(text)) or real(text))
    obj = {"answer": "word " * 40_000, "n": 1}
    text = msgspec.json.encode(obj).decode()
    reply, last = partialjson.PartialReply(), None
    for i in range(0, len(text), 5):
        last = reply.feed(text[i:i + 5]) or last
    last = reply.flush() or last
    assert last == obj
    assert len(calls) < 1_200
    assert sum(calls) < 80 * len(text)  # linear in the reply, not in reply x deltas
