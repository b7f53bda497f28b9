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
