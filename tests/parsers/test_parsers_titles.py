"""title mode: the line-by-line title scanner is linear and reads titles as the documented rules say."""

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from zagent import ParseError
from zagent.plugins.parsers.titles import TitleSyntax, loose_name

NAMES = ["answer", "final answer", "count", "title_text", "Größe"]
FORMATS = ["## {title}", "{title}:", "### {title}:", "[{title}]", "**{title}**", "{title}", "* {title}",
           "Field {title} end"]
WS = st.sampled_from(["", "", " ", "  ", "\t", " \t "])
OPENERS = ["", "#", "##", "######", "#######", "**", "__", "## **", "[", "* ", "*", "Field", "FIELD ", "x",
           "- **", "* **", "+\t__", "-**", "- "]
CLOSERS = ["", ":", "**", ":**", "**:", "]", ":]", "end", " END", ": Paris", ":** Paris **", ": **", "x", ":"]
SPELLINGS = ["answer", "ANSWER", "Final Answer", "final_answer", "final - answer", "final\tanswer", "count",
             "Count", "title text", "title-text", "GRÖSSE", "größe", "answers", "ans wer", ""]
OTHER = ["", "Paris", "some prose: here", "- item", "  ", "**bold**"]


def spellings(name):
    """Ways a model writes a field name in a title."""
    words = name.split(" ")
    return [name, name.upper(), name.title(), "_".join(words), " - ".join(words), "\t".join(words), name + "s"]


@st.composite
def cases(draw):
    """(names, title_format, text): lines built like titles of this format, near misses, or prose."""
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
    fmt = draw(st.sampled_from(FORMATS))
    prefix, _, suffix = fmt.partition("{title}")
    spelt = [sp for n in names for sp in spellings(n)] + SPELLINGS
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.integers(0, 4)) == 0:
            lines.append(draw(st.sampled_from(OTHER)))
            continue
        opener = draw(st.sampled_from(OPENERS + [prefix.strip()] * 4))
        closer = draw(st.sampled_from(CLOSERS + [suffix.strip()] * 4))
        lines.append("".join([draw(WS), opener, draw(WS), draw(st.sampled_from(spelt)), draw(WS), closer, draw(WS)]))
    return names, fmt, "\n".join(lines)


def reference_regex(names, fmt):
    """The documented title syntax as the regex the parser used before (polynomial on long whitespace)."""
    prefix, _, suffix = fmt.partition("{title}")
    prefix, suffix = prefix.strip(), suffix.strip()
    pre = r"#{1,6}" if prefix and set(prefix) == {"#"} else re.escape(prefix)
    loose = sorted({loose_name(n) for n in names}, key=len, reverse=True)
    alts = "|".join(r"[\s_-]+".join(re.escape(w) for w in n.split(" ")) for n in loose)
    head = rf"^[ \t]*(?:{pre}[ \t]*(?:\*\*|__)?|(?:[-+*][ \t]+)?(?:\*\*|__))[ \t]*"
    alone = rf"(?P<t>{alts})[ \t]*:?[ \t]*(?:\*\*|__)?[ \t]*:?[ \t]*{re.escape(suffix)}[ \t]*$\n?"
    inline = rf"(?P<t2>{alts})[ \t]*(?:\*\*|__)?[ \t]*:[ \t]*(?:\*\*|__)?[ \t]*(?P<inline>\S[^\n]*?)[ \t]*$\n?"
    body = f"(?:{alone}|{inline})" if suffix in ("", ":") else alone
    return re.compile(head + body, re.IGNORECASE | re.MULTILINE)


def reference_scan(text, names, fmt):
    lookup = {loose_name(n): n for n in names}
    out = []
    for m in reference_regex(names, fmt).finditer(text):
        title = m.group("t") or m.group("t2")
        assume("\n" not in title)  # the regex let a title's words span lines; titles are one line now
        out.append((m.start(), m.end(), lookup[loose_name(title)], m.groupdict().get("inline")))
    return out


@settings(max_examples=1000, deadline=None)
@given(case=cases())
def test_scanner_agrees_with_the_documented_syntax(case):
    """On short texts the scanner finds exactly the titles (span, field, inline value) the reference regex finds."""
    names, fmt, text = case
    syntax = TitleSyntax(fmt, {loose_name(n): n for n in names})
    assert list(syntax.scan(text)) == reference_scan(text, names, fmt)


@settings(max_examples=200, deadline=None)
@given(head=st.sampled_from(["## ", "**", "## answer", "## answer:", "**answer:** a", "answer", "## final",
                             "[answer", "## answer: a"]),
       run=st.text(st.sampled_from(" \t"), min_size=1, max_size=30),
       tail=st.sampled_from(["x", "", ":", "**", "answer", "\n## answer\nok", "b ", "]"]))
def test_whitespace_runs_read_as_documented(head, run, tail):
    """Spaces and tabs anywhere in a title line are read the same way as by the reference regex."""
    text = head + run + tail
    syntax = TitleSyntax("## {title}", {"answer": "answer", "final answer": "final answer"})
    assert list(syntax.scan(text)) == reference_scan(text, ["answer", "final answer"], "## {title}")


ADVERSARIAL = [
    "## " + " " * 200_000 + "x",
    "## answer" + " " * 200_000 + "x",
    "## answer: a" + " \t" * 100_000 + "b",
    "**answer" + " " * 200_000 + ":" + " " * 200_000 + "x",
    ("## " + " " * 1000 + "\n") * 200,
    "## final" + "_ -" * 70_000 + "answer!",
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("text", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_long_whitespace_runs_parse_in_linear_time(kernel, text):
    """~200k characters of adversarial whitespace in title lines are parsed (no polynomial backtracking)."""
    fields = [{"name": "answer"}, {"name": "final answer", "required": False}]
    try:
        kernel.parser("title").parse(text, fields)
    except ParseError:
        pass


def test_crlf_title_lines_are_titles(kernel):
    """A reply with CRLF line ends has its titles read (the \\r is part of the line break)."""
    fields = ["answer", {"name": "count", "type": "int"}]
    got = kernel.parser("title").parse("## Answer\r\nParis\r\n## Count: 3\r\n", fields)
    assert got == {"answer": "Paris", "count": 3}


def test_a_title_does_not_span_lines(kernel):
    """The words of a multi-word title must be on one line: '## final' then 'answer' is not a title."""
    with pytest.raises(ParseError):
        kernel.parser("title").parse("## final\nanswer\nParis", ["final answer"])
