"""Lenient, honest reading: JSON objects in every mode, any list-item tag in xml, placeholder echoes refused,
and a repair prompt that shows a filled-in example (issue 22, finding 1)."""

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from zagent import Completion, Message, ParseError
from zagent.agentkit.fields import compile_fields

from parsers_strategies import PLAIN, specs_and_values

LENIENT_MODES = ["title", "xml", "json"]
QA = [{"name": "answer", "type": "string", "description": "the answer"}]
PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
TEXT = PLAIN.filter(lambda s: s.strip() == s and "<" not in s and "{" not in s)


def _label(field):
    from zagent.plugins.parsers.lenient import label

    return label(compile_fields([field]).fields[0])


@PROPS
@given(specs_and_values(text=TEXT))
def test_every_mode_reads_a_json_object_holding_the_fields(kernel, case):
    """title and xml read a reply that is a JSON object of the declared fields exactly as json mode does."""
    fields, values = case
    if not values:  # an empty object holds no field: no evidence of an answer in title or xml mode
        return
    reply = kernel.parser("json").render(values, fields)
    want = kernel.parser("json").parse(reply, fields)
    for mode in ("title", "xml"):
        assert kernel.parser(mode).parse(reply, fields) == want


@pytest.mark.parametrize("mode, reply", [
    (mode, reply) for mode in ("title", "xml", "str")
    for reply in ('{"answer": "Paris is the capital."}', '```json\n{"Answer": "Paris is the capital."}\n```')
] + [(mode, 'Sure:\n```json\n{"Answer": "Paris is the capital."}\n```') for mode in ("title", "xml")])
def test_json_answer_accepted_in_non_json_modes(kernel, mode, reply):
    """The qa_agent case: a small model answers {"answer": ...} (bare or fenced; in prose too, except in
    str mode, where prose around it makes the whole reply the answer) and the mode reads it."""
    assert kernel.parser(mode).parse(reply, QA) == {"answer": "Paris is the capital."}


def test_section_holding_its_own_json_object_is_unwrapped(kernel):
    """'## answer' then '{"answer": "x"}' gives x, not the JSON text."""
    assert kernel.parser("title").parse('## answer\n{"answer": "Paris"}', QA) == {"answer": "Paris"}


@pytest.mark.parametrize("mode", ["json", "title", "xml"])
def test_text_field_given_json_structure_keeps_it_as_json_text(kernel, mode):
    """{"answer": ["a", "b"]} for a text field is the text '["a","b"]', not a type error."""
    assert kernel.parser(mode).parse('{"answer": ["a", {"b": 1}]}', QA) == {"answer": '["a",{"b":1}]'}


def test_copied_example_markers_are_dropped(kernel):
    """A repair answer that copied the prompt's <example> markers around its section keeps only the value."""
    assert kernel.parser("title").parse("<example>\n## answer\nParis\n</example>", QA) == {"answer": "Paris"}


def test_json_without_every_required_field_is_not_used(kernel):
    """A JSON object lacking a required field is no fallback: the mode's ParseError stands."""
    fields = QA + [{"name": "count", "type": "integer"}]
    with pytest.raises(ParseError) as info:
        kernel.parser("title").parse('{"answer": "x"}', fields)
    assert "count" in info.value.missing


@PROPS
@given(specs_and_values(text=TEXT), st.sampled_from(LENIENT_MODES))
def test_placeholder_echo_is_a_parse_error(kernel, case, mode):
    """A reply whose string field repeats the format's placeholder (<type, required: ...>) never parses."""
    fields, values = case
    strings = [f for f in fields if f["type"] == "string"]
    if not strings:
        return
    target = strings[0]
    values = {**values, target["name"]: f"<{_label(target)}>"}
    reply = kernel.parser(mode).render(values, fields)
    with pytest.raises(ParseError) as info:
        kernel.parser(mode).parse(reply, fields)
    assert target["name"] in info.value.invalid


@pytest.mark.parametrize("reply", ["## answer\n<string, required: the answer>",
                                   "## answer\nstring, required: the answer",
                                   "## Answer\n< string , required : the answer >",
                                   "## answer\n<France, required: Paris>", "## answer\nParis, required"])
def test_title_placeholder_variants_refused(kernel, reply):
    """The placeholder is refused with or without brackets and with odd spacing."""
    with pytest.raises(ParseError, match="placeholder"):
        kernel.parser("title").parse(reply, QA)


def test_xml_placeholder_as_shown_in_its_instructions_refused(kernel):
    """xml instructions show '<answer>string, required: the answer</answer>'; copying it is a ParseError."""
    reply = kernel.parser("xml").instructions(QA).splitlines()[1]
    with pytest.raises(ParseError, match="placeholder"):
        kernel.parser("xml").parse(reply, QA)


def test_str_placeholder_refused(kernel):
    """str mode: the '(string, required: the answer)' of its instructions is no answer."""
    with pytest.raises(ParseError):
        kernel.parser("str").parse("(string, required: the answer)", QA)


@pytest.mark.parametrize("text", ["A string is required here, and an integer is optional.",
                                  "Paris, France. A passport is required: bring one.", "Required: yes"])
def test_answer_mentioning_types_is_not_a_placeholder(kernel, text):
    """A real answer that talks about strings and required fields still parses."""
    assert kernel.parser("title").parse(f"## answer\n{text}", QA) == {"answer": text}


def test_bulleted_bold_title_is_a_title(kernel):
    """'- **answer**: Paris' (a small model's favourite) is the answer section."""
    assert kernel.parser("title").parse("- **answer**: Paris", QA) == {"answer": "Paris"}


@PROPS
@given(st.lists(TEXT.filter(bool), min_size=1, max_size=4),
       st.sampled_from(["item", "string", "li", "tag", "value"]))
def test_xml_list_items_under_any_child_tag(kernel, items, tag):
    """xml mode reads <string>..</string> (or <li>, <value>...) children of an array field as its items."""
    body = "".join(f"<{tag}>{i}</{tag}>" for i in items)
    fields = [{"name": "tags", "type": "array", "items": "string"}]
    assert kernel.parser("xml").parse(f"<tags>{body}</tags>", fields) == {"tags": items}


TWO = QA + [{"name": "count", "type": "integer"}]


@pytest.mark.parametrize("mode", LENIENT_MODES)
def test_repair_prompt_shows_a_filled_in_example_not_placeholders(kernel, mode):
    """The repair prompt renders a concrete example in the mode's own layout and no '<type, required' text."""
    p = kernel.parser(mode)
    with pytest.raises(ParseError) as info:
        p.parse(p.render({"answer": "<string, required: the answer>", "count": 1}, TWO), TWO)
    prompt = p.repair_prompt("bad", TWO, info.value)
    assert "required: the answer" not in prompt.split("## Output format")[1]
    assert "<example>" in prompt and "An example answer" in prompt and p.render(
        {"answer": "An example answer, written in full.", "count": 3}, TWO) in prompt
    assert "## What was wrong" in prompt and "placeholder" in prompt


@pytest.mark.parametrize("mode", ["title", "xml", "json", "str"])
def test_single_text_field_repair_shows_the_reply_in_the_layout(kernel, mode):
    """One string field: the repair example is the model's own reply put in the required layout."""
    p = kernel.parser(mode)
    reply = "- The sky is blue because air scatters blue light."
    prompt = p.repair_prompt(reply, QA, ParseError("no sections", missing=["answer"]))
    assert p.render({"answer": reply}, QA) in prompt.split("## Output format")[1]
    assert "An example answer" not in prompt


def test_placeholder_reply_is_never_the_repair_example(kernel):
    """A placeholder echo is not offered back as the example: the made-up example is shown instead."""
    p = kernel.parser("title")
    prompt = p.repair_prompt("<string, required: the answer>", QA, ParseError("x", missing=["answer"]))
    assert "An example answer" in prompt and "required: the answer" not in prompt.split("## Output format")[1]


@pytest.mark.parametrize("mode", LENIENT_MODES)
def test_copied_example_value_is_refused(kernel, mode):
    """A repair answer that copies the example's made-up value is a ParseError, not an answer."""
    from zagent.plugins.parsers.lenient import example_values

    p = kernel.parser(mode)
    reply = p.render(example_values(compile_fields(QA)), QA)
    with pytest.raises(ParseError):
        p.parse(reply, QA)


class _Scripted:
    def __init__(self, *replies):
        self.replies, self.prompts = list(replies), []

    async def acomplete(self, messages, ctx=None, **options):
        self.prompts.append(messages)
        return Completion(message=Message.assistant(self.replies.pop(0)))


def test_placeholder_then_repair_json_answer(kernel):
    """A placeholder first reply goes to repair (saying so), and a JSON repair answer is read in title mode."""
    llm = _Scripted('{"answer": "Paris"}')
    got = asyncio.run(kernel.parser("title").aparse_with_repair("## answer\n<string, required: the answer>",
                                                                 QA, llm))
    assert got == {"answer": "Paris"} and "placeholder" in llm.prompts[0]


def test_placeholder_after_repair_is_a_final_error(kernel):
    """If the repair answer is the placeholder too, the final ParseError says so: nothing is accepted."""
    llm = _Scripted("## answer\n<string, required: the answer>")
    with pytest.raises(ParseError, match="placeholder"):
        asyncio.run(kernel.parser("title").aparse_with_repair("I do not know the format", QA, llm))
