"""xml mode: nested same-name tags are counted, unbalanced ones tolerated, and the element scan is one pass."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from zagent import ParseError
from zagent.plugins.parsers.xmltext import ElementScanner

TEXT = st.text(st.characters(blacklist_characters="<>&", blacklist_categories=("Cs",)), max_size=8)


@st.composite
def markup(draw, depth=0):
    """Balanced markup of tags a/b/i (a is the field's own tag) around plain text."""
    parts = []
    for _ in range(draw(st.integers(0, 3))):
        if depth < 3 and draw(st.booleans()):
            tag = draw(st.sampled_from(["a", "b", "i", "A"]))
            parts.append(f"<{tag}>{draw(markup(depth + 1))}</{tag}>")
        else:
            parts.append(draw(TEXT))
    return "".join(parts)


def test_nested_tag_of_the_same_name_is_kept_with_the_tail(kernel):
    """<a>outer <a>inner</a> tail</a> is 'outer <a>inner</a> tail': the nesting depth is counted."""
    assert kernel.parser("xml").parse("<a>outer <a>inner</a> tail</a>", ["a"]) == {"a": "outer <a>inner</a> tail"}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=markup())
def test_balanced_inner_markup_is_the_whole_value(kernel, body):
    """Any balanced markup inside the field's element (its own tag included) comes back as the value text."""
    got = kernel.parser("xml").parse(f"Sure.\n<a>{body}</a>\n<n>1</n> bye", ["a", {"name": "n", "type": "int"}])
    assert got == {"a": body.strip(), "n": 1}


def test_an_unbalanced_inner_tag_mentioned_in_the_text_is_kept(kernel):
    """An inner <answer> with no closing tag of its own does not swallow the element: it ends at </answer>."""
    got = kernel.parser("xml").parse("<answer>Use <answer> tags</answer><count>2</count>", ["answer", "count"])
    assert got == {"answer": "Use <answer> tags", "count": "2"}


def test_a_truncated_element_runs_to_the_next_field(kernel):
    """With no closing tag of its name at all, an element ends at the next field's opening tag."""
    got = kernel.parser("xml").parse("<answer>Paris\n<count>2</count>", ["answer", "count"])
    assert got == {"answer": "Paris", "count": "2"}


def test_tags_inside_cdata_are_text(kernel):
    """A closing tag inside CDATA does not end the element."""
    got = kernel.parser("xml").parse("<a><![CDATA[x</a>y]]> z</a>", ["a"])
    assert got == {"a": "x</a>y z"}


class CountingRegex:
    """Wraps a compiled regex and counts the scans and the matches they yield."""

    def __init__(self, regex):
        self.regex, self.scans, self.matches = regex, 0, 0

    def finditer(self, text):
        self.scans += 1
        for m in self.regex.finditer(text):
            self.matches += 1
            yield m


@pytest.mark.parametrize("text", [
    "<answer>" * 2000,
    "<answer><![CDATA[" * 2000,
    "<answer x" * 2000,
    "<answer>a <answer>b</answer> " * 1000,
    "</answer><answer/>" * 1000 + "<![CDATA[ ]]>" * 1000,
])
def test_the_scan_reads_the_text_once(text):
    """One regex scan over the text, yielding at most one match per '<': no rescans per unclosed tag."""
    scanner = ElementScanner(["answer", "count"])
    counting = scanner.regex = CountingRegex(scanner.regex)
    list(scanner.elements(text))
    assert counting.scans == 1
    assert counting.matches <= text.count("<")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("text", [
    "<answer>" * 20_000,
    "<answer><![CDATA[" * 20_000,
    "<answer " * 20_000,
    "<answer>x" + "<answer>" * 20_000 + "</answer>" * 19_000,
])
def test_adversarial_unclosed_tags_parse_in_linear_time(kernel, text):
    """20k unclosed or unfinished tags parse quickly (guard only; the step count is checked above)."""
    try:
        kernel.parser("xml").parse(text, ["answer", {"name": "count", "required": False}])
    except ParseError:
        pass
