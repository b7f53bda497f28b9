"""The Python-call tool-call format (``[f(a=1), g.h(b="x")]``): read with ast, never evaluated."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from zagent import ToolCall, ToolSpec

NAME = st.from_regex(r"[a-z_][a-z0-9_]{0,8}(\.[a-z_][a-z0-9_]{0,8})?", fullmatch=True).filter(
    lambda n: not any(p in {"true", "false", "null", "none"} for p in n.split(".")))
KEY = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda k: k not in {"if", "in", "is", "or", "and", "not", "for", "def", "del", "as", "try", "with", "from",
                        "else", "elif", "pass", "None", "True", "False", "class", "while", "yield", "raise",
                        "break", "async", "await", "global", "import", "lambda", "return", "assert", "except",
                        "finally", "continue", "nonlocal"})
SCALAR = (st.none() | st.booleans() | st.integers(-10**12, 10**12)
          | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20))
VALUE = st.recursive(SCALAR, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)
CALLS = st.lists(st.builds(lambda n, a: ToolCall(id="x", name=n, arguments=a), NAME,
                           st.dictionaries(KEY, VALUE, max_size=4)), min_size=1, max_size=4)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(calls=CALLS)
def test_rendered_calls_read_back_the_same(kernel, calls):
    """Any calls written by the format (names dotted or not, literal arguments) read back equal."""
    fmt = kernel.parser("pycall")
    found = fmt.extract(fmt.render_calls(calls))
    assert [(c.name, c.arguments) for c in found.calls] == [(c.name, c.arguments) for c in calls]
    assert not found.errors


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.sampled_from(list("[](){}=,.'\"\\ \nabfx_0129-+*:#`")) | st.characters(),
                    max_size=200))
def test_any_text_reads_without_crashing(kernel, text):
    """Arbitrary text never raises: it gives calls, errors and the rest of the text."""
    found = kernel.parser("pycall").extract(text)
    assert isinstance(found.text, str)
    assert all(isinstance(c.arguments, (dict, str)) for c in found.calls)


def test_nothing_is_evaluated(kernel):
    """An expression as an argument is a malformed call, never run: no import, no attribute access."""
    found = kernel.parser("pycall").extract('[f(a=__import__("os").system("echo hi"))]')
    assert not found.calls and found.errors and "literal" in found.errors[0].message


def test_several_dotted_calls_in_one_list(kernel):
    """Two calls of a dotted name in one list, as a 0.5B model writes parallel calls."""
    text = '[spotify.play(artist="Taylor Swift", duration=20), spotify.play(artist="Maroon 5", duration=15)]'
    calls = kernel.parser("pycall").extract(text).calls
    assert [(c.name, c.arguments["artist"]) for c in calls] == [("spotify.play", "Taylor Swift"),
                                                                ("spotify.play", "Maroon 5")]


@pytest.mark.parametrize("text", [
    "Sure:\n```python\n[get_weather(city='Paris')]\n```",
    "<TOOLCALL>[get_weather(city='Paris')]</TOOLCALL>",
    "get_weather(city='Paris')",
    "I will check. [get_weather(city='Paris')]",
])
def test_calls_in_fences_tags_prose_or_bare(kernel, text):
    """A call list fenced, in BFCL's TOOLCALL tags, after prose, or a bare call is read."""
    calls = kernel.parser("pycall").extract(text).calls
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", {"city": "Paris"})]


def test_prose_with_a_positional_call_is_an_answer(kernel):
    """An answer mentioning max(a, b) in prose is text, not a malformed call (irrelevance answers stay answers)."""
    found = kernel.parser("pycall").extract("Use max(3, 5) to get the larger one.")
    assert not found.calls and not found.errors and found.text.startswith("Use max")


def test_a_bare_positional_call_is_told_to_the_model(kernel):
    """A reply that is only a call with a positional argument is a malformed call with a fix in its message."""
    found = kernel.parser("pycall").extract('get_weather("Paris")')
    assert not found.calls and "name=value" in found.errors[0].message


def test_other_formats_read_a_reply_of_python_calls(kernel):
    """A model asked for <tool_call> JSON that answers with nothing but Python calls still gets them run."""
    calls = kernel.parser("tool_call").extract("[get_weather(city='Paris')]").calls
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", {"city": "Paris"})]


def test_tools_section_shows_the_functions_and_the_no_tool_rule(kernel):
    """The section lists the functions as JSON, the call syntax, and says answering without a call is right."""
    text = kernel.parser("pycall").render_tools([ToolSpec(name="spotify.play", description="Play music.")])
    assert '"name":"spotify.play"' in text and "[spotify.play()]" in text and "none of the tools fits" in text


def test_a_tool_named_like_a_python_keyword_is_read():
    """``[as(a=1), x.import(b="import (y)")]``: keyword call names are read; string values keep their text."""
    from zagent.plugins.parsers.pycall import read

    found = read('[as(a=1), x.import(b="import (y)")]')
    assert [(c.name, c.arguments) for c in found.calls] == [("as", {"a": 1}), ("x.import", {"b": "import (y)"})]


def test_the_tools_section_shows_the_call_in_the_tools_own_names():
    """The example call names the offered tools and their parameters, with placeholders, never values."""
    from zagent.plugins.parsers.pycall import PyCallFormat

    spec = ToolSpec(name="add", description="Add.", parameters={
        "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}})
    section = PyCallFormat().render_tools([spec])
    assert "[add(a=<a>, b=<b>)]" in section and "func_name1" not in section


@pytest.mark.parametrize("text, arguments", [
    ("[find(cast='Lupita Nyong'o', genre='Horror')]", {"cast": "Lupita Nyong'o", "genre": "Horror"}),
    ("[find(name=e-commerce-website)]", {"name": "e-commerce-website"}),
    ("[find(date=2021-06-15, path=/foo/bar)]", {"date": "2021-06-15", "path": "/foo/bar"}),
    ("[find(genre=Horror movie, n=2)]", {"genre": "Horror movie", "n": 2}),
    ("[find(q='a=b, c)', date=2021-01-01)]", {"q": "a=b, c)", "date": "2021-01-01"}),
])
def test_a_reply_with_an_apostrophe_or_bare_text_values_is_repaired(kernel, text, arguments):
    """A word's apostrophe inside a quoted value, and unquoted text values (dates, paths, hyphenated names),
    are read as the text the model meant; quoted strings are never changed."""
    calls = kernel.parser("pycall").extract(text).calls
    assert [(c.name, c.arguments) for c in calls] == [("find", arguments)]


def test_repair_never_evaluates_nor_reads_calls_in_prose(kernel):
    """An expression stays a malformed call after repair, and a call inside prose is not repaired into one."""
    fmt = kernel.parser("pycall")
    found = fmt.extract('[f(a=__import__("os").system("echo hi"))]')
    assert not found.calls and found.errors
    prose = fmt.extract("You could try find(date=2021-06-15) later.")
    assert not prose.calls and not prose.errors


def test_a_copied_placeholder_is_never_repaired_into_a_value(kernel):
    """``[pay(receiver=<receiver>, amount=<amount>)]`` (the tools section's example, copied): no call runs."""
    found = kernel.parser("pycall").extract("[pay(receiver=<receiver>, amount=<amount>, note=x)]")
    assert not found.calls


def test_the_strict_reader_the_baseline_uses_is_not_repaired():
    """``_parse`` (BFCL's own reading, the benchmark's hand-written baseline) still refuses unquoted dates."""
    from zagent.plugins.parsers.pycall import _parse

    assert _parse("[find(date=2021-06-15)]") is None


def test_hostile_text_full_of_assignments_reads_as_text(kernel):
    """100,000 characters of ``a=b `` (no comma, no parenthesis) read as text: the repair's scan is bounded."""
    found = kernel.parser("pycall").extract("f(" + "a=b " * 25_000)
    assert not found.calls and isinstance(found.text, str)
    near = kernel.parser("pycall").extract("[f(" + "a=b " * 4_000 + ")]")
    assert not near.calls


def test_a_code_fence_inside_a_quoted_argument_is_no_fence(kernel):
    """``[f(a='```')]\n[g()]`` (found by hypothesis in CI): the ``` inside the quoted argument does not open a
    fence that hides the first call; a fence opens a line. Both calls are read, in order."""
    found = kernel.parser("pycall").extract("[f(a={'```': None})]\n[g()]")
    assert [(c.name, c.arguments) for c in found.calls] == [("f", {"a": {"```": None}}), ("g", {})]
    fenced = kernel.parser("pycall").extract("Here:\n```python\n[f(a=1)]\n```")
    assert [(c.name, c.arguments) for c in fenced.calls] == [("f", {"a": 1})]


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(groups=st.lists(CALLS, min_size=2, max_size=3), sep=st.sampled_from(["\n", "\n\n", ",\n", " "]))
def test_call_lists_one_after_another_are_all_read(kernel, groups, sep):
    """A reply of several call lists one after another (``[f(a=1)]\\n[g(b=2)]``, as small models write them): every
    call of every list is read, in order (the first list alone was taken)."""
    fmt = kernel.parser("pycall")
    found = fmt.extract(sep.join(fmt.render_calls(g) for g in groups))
    assert [(c.name, c.arguments) for c in found.calls] == [(c.name, c.arguments) for g in groups for c in g]
    assert not found.errors and found.text == ""


def test_a_second_list_inside_prose_is_not_read_as_calls(kernel):
    """Lists with prose between them stay as before: the first well-formed list in prose, the rest is text."""
    found = kernel.parser("pycall").extract("Here: [f(a=1)] and then [g(b=2)]")
    assert [c.name for c in found.calls] == ["f"] and "and then" in found.text


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(calls=CALLS, data=st.data())
def test_calls_written_as_quoted_strings_or_in_a_nested_list_are_all_read(kernel, calls, data):
    """A reply whose list holds calls as quoted strings or nests them (``[["f(a=1)", g(b=2)]]``, as a 0.5B model
    wrote three calls): every call is read, in order (only the one unquoted call was read)."""
    from zagent.plugins.parsers.pycall import render

    fmt = kernel.parser("pycall")
    items = []
    for call in calls:
        text = render([call])[1:-1]
        items.append(data.draw(st.sampled_from([text, repr(text), "[" + text + "]"])))
    reply = "[" + ", ".join(items) + "]"
    if data.draw(st.booleans()):
        reply = "[" + reply + "]"
    found = fmt.extract(reply)
    assert [(c.name, c.arguments) for c in found.calls] == [(c.name, c.arguments) for c in calls]
    assert not found.errors


@pytest.mark.parametrize("text", ['["Paris", "London"]', '["get_weather(city=\'Paris\')", "and London"]',
                                  '[["get_weather(city=\'Paris\')", 42]]', 'Try ["get_weather(city=\'Paris\')"] later',
                                  '["__import__(\'os\').system(\'x\')"]'])
def test_a_list_with_anything_but_quoted_calls_is_not_unquoted(kernel, text):
    """A list of plain strings, or one mixing a quoted call with text or a number, is not read as quoted calls;
    inside prose nothing is unquoted; an expression in quotes stays unreadable (nothing is evaluated)."""
    found = kernel.parser("pycall").extract(text)
    assert [c.name for c in found.calls] in ([], ["get_weather"])
    assert not any(c.name == "__import__" for c in found.calls)
    from zagent.plugins.parsers.pycall import unquote

    assert unquote(text) is None


def test_a_quoted_call_with_a_bare_date_is_repaired():
    """A quoted call is mended like a reply: ``["find(date=2021-06-15)"]`` reads the date as its text."""
    from zagent.plugins.parsers.pycall import read

    found = read('[["find(date=2021-06-15)", "find(date=2021-06-16)"]]')
    assert [c.arguments for c in found.calls] == [{"date": "2021-06-15"}, {"date": "2021-06-16"}]



@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(calls=CALLS, data=st.data())
def test_a_copied_placeholder_call_is_a_malformed_call_not_the_answer(kernel, calls, data):
    """A reply of calls where some argument is the example's ``<name>`` placeholder (``[lookup(artist=<artist>)]``,
    written by the 0.5B model though the request said the artist): each such call is a malformed call naming the
    placeholder and saying to write the request's values (it was the agent's final answer, raw), the others run."""
    from zagent.plugins.parsers.pycall import render

    fmt = kernel.parser("pycall")
    held = data.draw(st.lists(st.booleans(), min_size=len(calls), max_size=len(calls)).filter(any))
    parts = []
    for call, hold in zip(calls, held):
        text = render([call])[1:-1]
        parts.append(text[:-1] + (", " if call.arguments else "") + "zz_arg=<zz_arg>)" if hold else text)
    found = fmt.extract("[" + ", ".join(parts) + "]")
    assert [(c.name, c.arguments) for c in found.calls] == [
        (c.name, c.arguments) for c, hold in zip(calls, held) if not hold]
    assert [e.name for e in found.errors] == [c.name for c, hold in zip(calls, held) if hold]
    assert all("zz_arg=<zz_arg>" in e.raw and "placeholders" in e.message for e in found.errors)
    assert found.text == ""


def test_a_copied_placeholder_call_gets_feedback_and_a_second_try():
    """In a ReAct loop the copied example is told to the model, which then calls with the request's value; the
    raw placeholder call is never the run's answer."""
    import asyncio

    from zagent import Kernel, Tool

    kernel = Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions",
                             "zagent.plugins.react"], entry_points=False)
    kernel.add_tool(Tool(name="lookup", description="Find music.", handler=lambda **kw: "found",
                         parameters={"type": "object", "properties": {"artist": {"type": "string"}}}))
    replies = ["[lookup(artist=<artist>)]", "[lookup(artist='Imagine Dragons')]", "Found it."]
    agent = kernel.agent({"type": "react", "name": "b", "tools": ["lookup"], "max_iterations": 3,
                          "llm": "scripted:b", "llm_config": {"replies": replies, "profile": {
                              "native_tools": False, "tool_format": "pycall"}}})
    try:
        result = asyncio.run(agent.loop().arun("play imagine dragons"))
    finally:
        kernel.close()
    assert result.content == "Found it."
    assert [(s.tool, s.parameters) for s in result.steps if s.action == "use_tool" and s.tool] == [
        ("lookup", {"artist": "Imagine Dragons"})]
    assert any(s.is_error and "placeholders" in str(s.result) for s in result.steps)
