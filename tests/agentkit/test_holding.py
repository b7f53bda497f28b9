"""``agentkit.holding.unjudged``: which held texts the output guardrails still have to judge."""

from hypothesis import given
from hypothesis import strategies as st

from zagent.agentkit.holding import unjudged

KINDS = st.sampled_from(["text", "reasoning"])
REPLIES = st.lists(st.dictionaries(KINDS, st.text(max_size=8), max_size=2), max_size=5)


def test_the_latest_replys_answer_text_is_not_judged_again():
    """The latest reply's text that is the answer was judged as the answer; its reasoning and earlier texts were not."""
    replies = [{"text": "looking"}, {"text": "42 ", "reasoning": "easy"}]
    assert unjudged(replies, "42", "text") == ["looking", "easy"]


def test_the_same_text_in_an_earlier_reply_is_still_judged():
    """Only the latest reply's text is skipped, even when an earlier reply said the same."""
    assert unjudged([{"text": "42"}, {"text": "42"}], "42", "text") == ["42"]


def test_an_empty_trailing_reply_does_not_hide_the_answer():
    """The latest reply is the last that said anything: a trailing empty reply does not make the answer unjudged."""
    assert unjudged([{"text": "42"}, {}], "42", "text") == []


@given(REPLIES, st.one_of(st.none(), st.text(max_size=8)))
def test_at_most_one_text_is_skipped_and_order_is_kept(replies, answer):
    """Of every non-blank text, in order, at most one (the answer) is left out; blank texts are never judged."""
    every = [t for r in replies for t in r.values() if t.strip()]
    got = unjudged(replies, answer, "text")
    assert len(every) - len(got) in (0, 1)
    it = iter(every)
    assert all(any(t == e for e in it) for t in got)  # a subsequence of ``every``
    if answer is None:
        assert got == every
