"""NumPy-style docstring sections are read into tool schemas (issue 17, item 20)."""

import zagent
from zagent._tools.tool import parse_docstring

NUMPY_DOC = """Count the words of a text.

More about counting.

Parameters
----------
text : str
    the text to count,
    over two lines
min_length : int, optional
    words shorter than this are skipped
**extra
    ignored

Returns
-------
int
    the number of words
"""


def test_numpy_parameters_are_read():
    """Each NumPy parameter gets its indented description, continuation lines joined."""
    summary, params = parse_docstring(NUMPY_DOC)
    assert params["text"] == "the text to count, over two lines"
    assert params["min_length"] == "words shorter than this are skipped"


def test_numpy_summary_stops_at_first_section():
    """The summary is the text before the first underlined section; Returns is not a parameter."""
    summary, params = parse_docstring(NUMPY_DOC)
    assert summary == "Count the words of a text.\n\nMore about counting."
    assert "int" not in params


def test_numpy_descriptions_reach_the_tool_schema():
    """A tool documented NumPy style shows its parameter descriptions to the model."""

    def word_count(text: str, min_length: int = 0) -> int:
        """Count the words of a text.

        Parameters
        ----------
        text : str
            the text to count
        min_length : int, optional
            words shorter than this are skipped
        """
        return len([w for w in text.split() if len(w) >= min_length])

    tool = zagent.tool(word_count)
    props = tool.spec.parameters["properties"]
    assert props["text"]["description"] == "the text to count"
    assert props["min_length"]["description"] == "words shorter than this are skipped"
    assert tool.spec.description == "Count the words of a text."


def test_dash_line_in_prose_is_not_a_section():
    """A line of dashes after a blank line (a rule, not an underline) leaves the summary alone."""
    summary, params = parse_docstring("Sum two numbers.\n\n---\n\nMore.")
    assert "More." in summary and params == {}
