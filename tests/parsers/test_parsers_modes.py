"""Output modes: instructions, options and misuse errors (the parse tables live in test_parsers_messy)."""

import functools
import json

import pytest
from hypothesis import given, settings, strategies as st
from zagent import ConfigError, ParseError

NESTED = [{"name": "p", "fields": [{"name": "a"}, {"name": "b", "type": "int"}]},
          {"name": "xs", "type": "array", "items": {"fields": ["q"]}}]


@pytest.mark.parametrize("mode", ["title", "json", "xml"])
def test_instructions_show_nested_members(kernel, mode):
    """Instructions spell out nested object members and array item types."""
    text = kernel.parser(mode).instructions(NESTED)
    assert "object {a: string, b: integer}" in text and "array of object {q: string}" in text


def test_instructions_are_cached_per_spec_and_options(kernel):
    """The same spec and options give the same (cached) instructions string."""
    p = kernel.parser("title")
    assert p.instructions(NESTED, title_format="# {title}") is p.instructions(NESTED, title_format="# {title}")


def test_custom_accepts_a_two_argument_partial(kernel):
    """parse_func may take (text, fields), also as a functools.partial."""
    def parse(text, fields, key):
        return {fields[0].name: json.loads(text)[key]}

    got = kernel.parser("custom").parse('{"k": "v"}', [{"name": "answer"}], parse_func=functools.partial(parse, key="k"))
    assert got == {"answer": "v"}


def test_custom_function_errors_become_parse_errors(kernel):
    """An exception inside parse_func becomes a ParseError naming the function, with the raw text."""
    def broken(text):
        raise KeyError("nope")

    with pytest.raises(ParseError, match="'broken' failed: KeyError") as info:
        kernel.parser("custom").parse("reply", [{"name": "a"}], parse_func=broken)
    assert info.value.raw == "reply"


def test_custom_without_parse_func_is_a_config_error(kernel):
    """Mode custom without parse_func says how to give one."""
    with pytest.raises(ConfigError, match="parse_func"):
        kernel.parser("custom").parse("x", [{"name": "a"}])


def test_str_mode_needs_an_output_field(kernel):
    """Mode str without any field is a ConfigError saying to declare one."""
    with pytest.raises(ConfigError, match="at least one output field"):
        kernel.parser("str").parse("x", [])


@given(text=st.text(min_size=1, max_size=40).filter(str.strip), names=st.lists(
    st.sampled_from(["a", "b", "c", "answer"]), min_size=2, max_size=4, unique=True))
@settings(max_examples=50, deadline=None)
def test_str_mode_puts_the_raw_text_in_every_field(text, names):
    """Seed 000 (EvoAgentX parse modes): "str	随便输出	原文赋给每个字段" (str: any output, the raw text is
    given to every field). With several string fields, each one holds the whole (stripped) reply."""
    from zagent import Kernel

    k = Kernel(plugins=["zagent.plugins.parsers"], entry_points=False)
    assert k.parser("str").parse(text, [{"name": n} for n in names]) == {n: text.strip() for n in names}


def test_title_format_must_hold_the_title(kernel):
    """A title_format without {title} is a ConfigError showing the expected form."""
    with pytest.raises(ConfigError, match="must contain"):
        kernel.parser("title").parse("x", [{"name": "a"}], title_format="## heading")


def test_unknown_option_names_the_accepted_ones(kernel):
    """An unknown option raises TypeError listing what the mode accepts."""
    with pytest.raises(TypeError, match="accepts: title_format"):
        kernel.parser("title").parse("x", [{"name": "a"}], fence=True)


def test_non_text_reply_is_a_parse_error(kernel):
    """A reply that is not a str (e.g. a Completion passed by mistake) is a ParseError saying what to pass."""
    with pytest.raises(ParseError, match="completion.text"):
        kernel.parser("json").parse(None, [{"name": "a"}])


def test_blank_reply_with_only_optional_fields_gives_defaults(kernel):
    """A blank reply is valid when no field is required: every field gets its default."""
    fields = [{"name": "a", "required": False, "default": "x"}]
    assert kernel.parser("xml").parse("  ", fields) == {"a": "x"}
