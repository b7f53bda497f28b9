"""Hypothesis strategies for field specs, matching values, and messy text (shared by the property tests)."""

import re

from hypothesis import strategies as st

NAMES = ["answer", "count", "score", "ok", "tags", "meta", "reason", "items", "title_text", "notes",
         "final answer", "class", "Größe"]
INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
ANY_TEXT = st.text(max_size=60)
# Text a title-mode section can hold: no edge whitespace, no line-break oddities.
PLAIN = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="#*_"),
                max_size=40)
TITLE_TEXT = st.lists(PLAIN, min_size=1, max_size=3).map("\n".join).map(str.strip)

SCALARS = ["string", "integer", "number", "boolean"]


@st.composite
def field_specs(draw, max_fields=4, nested=True):
    """A list of Field dicts with unique names: scalars, arrays of scalars, one-level objects."""
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=max_fields, unique=True))
    fields = []
    for name in names:
        kind = draw(st.sampled_from(SCALARS + (["array", "object"] if nested else [])))
        field = {"name": name, "type": kind, "required": draw(st.booleans())}
        if kind == "array":
            item_kind = draw(st.sampled_from(SCALARS + ["object"]))
            field["items"] = {"name": "item", "type": item_kind}
            if item_kind == "object":
                field["items"]["fields"] = [{"name": "a", "type": "string"}, {"name": "b", "type": "integer"}]
        if kind == "object":
            field["fields"] = [{"name": "a", "type": "string"}, {"name": "b", "type": "integer"}]
        fields.append(field)
    return fields


def value_for(field, text):
    kind = field["type"]
    if kind == "string":
        return text
    if kind == "integer":
        return INT64
    if kind == "number":
        return FLOATS
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(value_for(field["items"], ANY_TEXT), max_size=4)
    return st.fixed_dictionaries({"a": ANY_TEXT, "b": INT64})  # object: members a (string), b (integer)


@st.composite
def specs_and_values(draw, text=ANY_TEXT, max_fields=4, nested=True):
    """(fields, values): optional fields are sometimes left out."""
    fields = draw(field_specs(max_fields=max_fields, nested=nested))
    values = {}
    for f in fields:
        if f["required"] or draw(st.booleans()):
            values[f["name"]] = draw(value_for(f, text))
    return fields, values


def expected(fields, values):
    """What parse returns: every declared field, None for absent optional ones."""
    return {f["name"]: values.get(f["name"]) for f in fields}


TOKENS = [
    "{", "}", "[", "]", '"', "'", ",", ":", " ", "\n", "```", "```json\n", "<answer>", "</answer>", "<count>",
    "<![CDATA[", "]]>", "## answer", "## count", "**Answer**", "true", "1", "3.5", "answer", '"answer"', "\\",
    "null", "<tool_call>", "</tool_call>", "[TOOL_CALLS]", "[ARGS]", '{"name": "f"', '"arguments"',
    '"parameters"', "<|python_tag|>", "<function=f>", "</function>", "&amp;", "&#99999999;", "é",
]
MESSY = st.one_of(st.text(max_size=200), st.lists(st.sampled_from(TOKENS), max_size=40).map("".join))


def title_line_clash(value, names):
    """True if some line of ``value`` could be read as a section title for one of ``names``."""
    loose = {re.sub(r"[\s_-]+", " ", n.lower()) for n in names}
    for line in value.splitlines():
        if re.sub(r"[\s_-]+", " ", line.strip(" \t#*_:").lower()) in loose:
            return True
    return False
