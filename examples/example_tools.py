"""Plain functions used as tools by the example agents (``"tools": ["example_tools:add"]``).

An agent file names them by import path; it is resolved relative to the
agent file's folder, so no packaging is needed for a quick tool.
"""


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


def word_count(text: str) -> int:
    """Count the words of a text.

    Args:
        text: the text to count
    """
    return len(text.split())
