"""Text tool-call arguments converted to the tool schema's types, laxly, as native calls are."""

from hypothesis import given
from hypothesis import strategies as st
from zagent.agentkit.argtypes import coerce

SCHEMA = {"type": "object", "properties": {
    "n": {"type": "integer"}, "x": {"type": "number"}, "ok": {"type": "boolean"}, "s": {"type": "string"},
    "tags": {"type": "array", "items": {"type": "integer"}}, "opts": {"type": "object"}}}


def test_text_values_become_the_schema_types():
    """"42" for an integer, "2.5" for a number, "true" for a boolean, 7 for a string, JSON text for array/object."""
    out = coerce({"n": "42", "x": "2.5", "ok": "true", "s": 7, "tags": '["1", 2]', "opts": '{"a": 1}'}, SCHEMA)
    assert out == {"n": 42, "x": 2.5, "ok": True, "s": "7", "tags": [1, 2], "opts": {"a": 1}}


def test_values_that_do_not_convert_are_kept():
    """"3.5" for an integer and "maybe" for a boolean stay as sent: validation tells the model, nothing is guessed."""
    assert coerce({"n": "3.5", "ok": "maybe", "extra": "1"}, SCHEMA) == {"n": "3.5", "ok": "maybe", "extra": "1"}


@given(args=st.dictionaries(st.sampled_from(["n", "x", "ok", "s", "tags", "opts", "other"]),
                            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
                            | st.lists(st.text(max_size=3), max_size=3)))
def test_coerce_never_raises_and_keeps_every_key(args):
    """Any arguments: no exception, the same keys come back."""
    assert set(coerce(args, SCHEMA)) == set(args)


CITY = {"type": "object", "required": ["location"], "properties": {
    "location": {"type": "string", "enum": ["New York, USA", "Seoul, South Korea", "London, UK"]},
    "units": {"type": "string", "enum": ["metric", "imperial"]}}}


def test_a_string_naming_one_enum_member_becomes_that_member():
    """Another case ("Metric") or the member's part before a comma ("Seoul") is the member's own spelling."""
    assert coerce({"location": "seoul", "units": "Metric"}, CITY) == {"location": "Seoul, South Korea",
                                                                      "units": "metric"}


def test_a_string_naming_no_member_or_several_is_kept():
    """No member fits ("Paris"), a word inside a member is no leading part ("Korea"), two members fit: kept."""
    two = {"type": "object", "properties": {"c": {"type": "string", "enum": ["Springfield, IL", "Springfield, MA"]}}}
    assert coerce({"location": "Paris", "units": "kelvin"}, CITY) == {"location": "Paris", "units": "kelvin"}
    assert coerce({"location": "Korea"}, CITY) == {"location": "Korea"}
    assert coerce({"c": "Springfield"}, two) == {"c": "Springfield"}


def test_a_plural_or_a_flag_becomes_the_enum_members_spelling():
    """"pieces" for "piece", "Slices" for "slice"; ``True`` for a string enum ``["True", "False", ...]``; a flag
    for a string without such a member stays a boolean (validation tells the model)."""
    schema = {"type": "object", "properties": {
        "unit": {"type": "string", "enum": ["cup", "slice", "piece", "box"]},
        "unisex": {"type": "string", "enum": ["True", "False", "dontcare"]},
        "mode": {"type": "string", "enum": ["on", "off"]}}}
    assert coerce({"unit": "pieces", "unisex": True, "mode": False}, schema) == {"unit": "piece", "unisex": "True",
                                                                                 "mode": False}
    assert coerce({"unit": "Slices", "unisex": False}, schema) == {"unit": "slice", "unisex": "False"}
    assert coerce({"unit": "boxes"}, schema) == {"unit": "box"}


def _fits(value, member):
    v, m = value.strip().casefold(), member.casefold()
    lead = m.split(",")[0].split("(")[0].split("[")[0].strip()
    return v in (m, lead, m + "s", m + "es")


@given(value=st.text(max_size=12), enum=st.lists(st.text(max_size=12), max_size=5))
def test_an_enum_spelling_is_a_member_or_the_value_itself(value, enum):
    """Any value and string enum: the result is the value unchanged or a member the value spells (its folded
    text, leading part or plural), and never differs when the value is already a member."""
    schema = {"type": "object", "properties": {"e": {"type": "string", "enum": enum}}}
    out = coerce({"e": value}, schema)["e"]
    assert out == value or (out in enum and value not in enum and _fits(value, out))


@given(flag=st.booleans(), enum=st.lists(st.sampled_from(["True", "False", "true", "x", "dontcare"]), max_size=4))
def test_a_flag_for_a_string_enum_is_a_member_or_stays_a_boolean(flag, enum):
    """A boolean for a string enum comes back a member spelling it, or the same boolean."""
    schema = {"type": "object", "properties": {"e": {"type": "string", "enum": enum}}}
    out = coerce({"e": flag}, schema)["e"]
    assert out is flag or (out in enum and out.casefold() == str(flag).casefold())


def test_a_react_run_in_prompt_mode_calls_the_tool_with_the_enum_member():
    """A text call naming a city by its first part runs with the schema's member, not a validation error."""
    from zagent import Kernel, Tool
    from zagent.plugins.react import ReActLoop

    ran = []
    k = Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions",
                        "zagent.plugins.react"], entry_points=False)
    try:
        k.add_tool(Tool(name="weather", description="Current weather.", parameters=CITY,
                        handler=lambda **kw: ran.append(kw) or "sunny"))
        llm = k.llm("scripted:m", replies=['[weather(location="Seoul", units="Metric")]', "Sunny in Seoul."],
                    profile={"native_tools": False, "tool_format": "pycall"})
        result = ReActLoop(kernel=k, llm=llm, tools=["weather"], max_iterations=3).run(
            "Weather in Seoul, in metric units?")
    finally:
        k.close()
    assert ran == [{"location": "Seoul, South Korea", "units": "metric"}] and result.content == "Sunny in Seoul."
