"""``zagent.agentkit.transcripts.turn_text``: a turn's later lines never start at the margin."""

from hypothesis import given, settings
from hypothesis import strategies as st

from zagent.agentkit.transcripts import turn_text


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(["a", "Z", ":", " ", "\n", "\r", "\x85", "\u2028", "\u2029"]), max_size=30))
def test_a_turns_later_lines_are_indented_and_no_text_is_lost(text):
    """Whatever breaks the text holds, each printed line after the head's starts with two spaces, and no
    character but the breaks is lost."""
    first, *rest = turn_text("bob: ", text).split("\n")
    assert first.startswith("bob: ")
    assert all(line.startswith("  ") for line in rest)
    assert "".join(turn_text("bob: ", text).split()) == "bob:" + "".join(text.split())
