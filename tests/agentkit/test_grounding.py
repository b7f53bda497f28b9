"""Tool calls with made-up required values are refused, never run (``zagent.agentkit.grounding``)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from zagent import Kernel, Tool
from zagent.agentkit.grounding import conversation_text, ground_calls
from zagent.plugins.react import ReActLoop
from zagent.types import Message, ToolCall, ToolSpec

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react"]

TRAIN = ToolSpec(name="book_train", description="Reserve a train ticket.", parameters={
    "type": "object", "required": ["to", "date", "seats", "class_", "insured"],
    "properties": {
        "to": {"type": "string", "description": "The arrival city, such as 'Los Angeles, CA'."},
        "date": {"type": "string", "description": "The date in the format 'YYYY-MM-DD', such as '2023-04-15'."},
        "seats": {"type": "integer", "description": "Seats, between 1 and 5.", "default": 1},
        "class_": {"type": "string", "enum": ["Value", "Business"]},
        "insured": {"type": "boolean"},
        "note": {"type": "string", "description": "Optional, e.g. 'window seat'."},
    }})


def _call(**arguments):
    return ToolCall(id="c1", name="book_train", arguments=arguments)


def _seen(text):
    return conversation_text([Message(role="user", content=text)])


GOOD = {"to": "Seattle", "date": "2024-01-02", "seats": 1, "class_": "Value", "insured": False}


def test_a_value_copied_from_the_schema_example_is_refused():
    """The description's example date, never said by the user, marks the call refused with a reason."""
    calls = ground_calls([_call(**{**GOOD, "date": "2023-04-15"})], [TRAIN], _seen("a ticket to Seattle"), "schema")
    assert calls[0].refused and "'2023-04-15'" in calls[0].refused and "ask_clarification" in calls[0].refused


def test_the_same_value_said_by_the_user_is_kept():
    """When the user gave the value, a match with the schema's example does not matter."""
    calls = ground_calls([_call(**{**GOOD, "date": "2023-04-15"})], [TRAIN],
                         _seen("to Seattle on 2023-04-15, please"), "schema")
    assert calls[0].refused is None


def test_enums_booleans_defaults_and_optional_values_are_never_checked():
    """A value from an enum, a boolean, the parameter's default and an optional parameter pass unchecked."""
    args = {**GOOD, "date": "2024-01-02", "note": "window seat"}
    calls = ground_calls([_call(**args)], [TRAIN], _seen("Seattle, 2024-01-02"), "words")
    assert calls[0].refused is None


def test_words_level_refuses_a_string_with_no_word_from_the_conversation():
    """At ``words`` a required string sharing no word with the conversation is refused; ``schema`` keeps it."""
    call = _call(**{**GOOD, "to": "Boston", "date": "2024-01-02"})
    seen = _seen("a ticket on 2024-01-02")
    assert ground_calls([call], [TRAIN], seen, "words")[0].refused
    assert ground_calls([call], [TRAIN], seen, "schema")[0].refused is None


def test_a_whole_float_said_as_an_integer_is_grounded():
    """``20.0`` in the call, ``20`` in the request: the same number, not made up."""
    spec = ToolSpec(name="area", description="Area, e.g. 20.0", parameters={
        "type": "object", "required": ["base"], "properties": {"base": {"type": "number"}}})
    call = ToolCall(id="c", name="area", arguments={"base": 20.0})
    assert ground_calls([call], [spec], _seen("a base of 20"), "schema")[0].refused is None


def test_the_tools_section_is_not_part_of_the_conversation():
    """The prompt-mode tools section in the system message does not count as something said."""
    section = "Tools: book_train, date such as '2023-04-15'"
    seen = conversation_text([Message(role="system", content=f"Be brief.\n\n{section}"),
                              Message(role="user", content="to Seattle")], section)
    assert "2023-04-15" not in seen and "be brief" in seen


def test_off_checks_nothing():
    """``off`` returns the calls unchanged."""
    calls = [_call(**{**GOOD, "date": "2023-04-15"})]
    assert ground_calls(calls, [TRAIN], _seen("hi"), "off") is calls


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["to", "date", "seats", "note"]),
                       st.one_of(st.text(max_size=20), st.integers(), st.floats(allow_nan=False),
                                 st.none(), st.lists(st.integers(), max_size=3))),
       st.text(max_size=60))
def test_any_arguments_give_a_verdict_and_said_values_are_never_refused(arguments, said):
    """Whatever the arguments, grounding returns one call per call; with every value said, none is refused."""
    spoken = said + " " + " ".join(str(v) for v in arguments.values())
    out = ground_calls([_call(**arguments)], [TRAIN], _seen(spoken), "words")
    assert len(out) == 1 and out[0].refused is None


def _prompt_loop(k, reply):
    ran = []

    def book(**kwargs):
        ran.append(kwargs)
        return "booked"

    k.add_tool(Tool(name="book_train", description=TRAIN.description, parameters=TRAIN.parameters, handler=book))
    llm = k.llm("scripted:m", replies=[reply, "Which date would you like to travel?"],
                profile={"native_tools": False, "tool_format": "pycall"})
    return ReActLoop(kernel=k, llm=llm, tools=["book_train"], max_iterations=3), ran


def test_a_react_run_in_prompt_mode_never_runs_a_call_with_a_copied_example():
    """Prompt mode, default profile: the made-up call is not run; the model reads why and asks the user."""
    k = Kernel(plugins=PLUGINS, entry_points=False)
    try:
        loop, ran = _prompt_loop(k, '[book_train(to="Seattle", date="2023-04-15", seats=1, class_="Value", '
                                    'insured=False)]')
        result = loop.run("I need a train ticket to Seattle")
        step = loop.state.steps[0]
    finally:
        k.close()
    assert ran == [] and step.is_blocked and "'2023-04-15'" in step.reason
    assert result.content == "Which date would you like to travel?"


def test_native_calls_are_not_grounded_unless_the_profile_says_so():
    """A native call (the server's own tool calls) runs as given by default; ``ground_arguments`` turns it on."""
    native = {"tool_calls": [{"id": "n1", "name": "book_train", "arguments": {
        "to": "Seattle", "date": "2023-04-15", "seats": 1, "class_": "Value", "insured": False}}]}
    outcomes = []
    for profile in (None, {"ground_arguments": "schema"}):
        k = Kernel(plugins=PLUGINS, entry_points=False)
        ran = []
        k.add_tool(Tool(name="book_train", description="", parameters=TRAIN.parameters,
                        handler=lambda **kw: ran.append(kw) or "booked"))
        try:
            llm = k.llm("scripted:m", replies=[native, "done"], profile=profile)
            ReActLoop(kernel=k, llm=llm, tools=["book_train"], max_iterations=3).run("a ticket to Seattle")
        finally:
            k.close()
        outcomes.append(len(ran))
    assert outcomes == [1, 0]


WEATHER = ToolSpec(name="weather", description="Weather now.", parameters={
    "type": "object", "required": ["location"],
    "properties": {"location": {"type": "string"},
                   "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "fahrenheit"},
                   "days": {"type": "integer"}}})


def test_an_optional_value_never_said_is_left_out_and_logged(caplog):
    """``unit="celsius"`` and ``days=3`` for "weather in Boston": left out (the tool's defaults apply), logged."""
    call = ToolCall(id="w", name="weather", arguments={"location": "Boston, MA", "unit": "celsius", "days": 3})
    with caplog.at_level("INFO", logger="zagent.grounding"):
        out = ground_calls([call], [WEATHER], _seen("weather in Boston"), "schema")
    assert out[0].arguments == {"location": "Boston, MA"} and out[0].refused is None
    assert "unit='celsius'" in caplog.text and "days=3" in caplog.text


def test_optional_values_said_or_default_are_kept():
    """An optional value the user said, or equal to the default, stays."""
    call = ToolCall(id="w", name="weather", arguments={"location": "Boston", "unit": "fahrenheit", "days": 3})
    out = ground_calls([call], [WEATHER], _seen("Boston for 3 days in Celsius"), "schema")
    assert out[0].arguments == call.arguments
    said = ToolCall(id="w", name="weather", arguments={"location": "Boston", "unit": "celsius"})
    assert ground_calls([said], [WEATHER], _seen("Boston in Celsius"), "schema")[0].arguments == said.arguments


def test_an_unknown_level_is_a_config_error_naming_the_levels():
    """``ground_arguments="strict"`` is refused with the valid levels, not ignored."""
    import pytest

    from zagent.errors import ConfigError

    with pytest.raises(ConfigError, match="'off', 'schema', 'words'"):
        ground_calls([_call(**GOOD)], [TRAIN], _seen("x"), "strict")


def test_a_number_said_with_digit_groups_or_a_scale_word_is_kept():
    """``200000`` after "$200,000" and ``2000000`` after "$2 million" were said: optional values stay, required
    ones are not refused (a value the user gave is never dropped for how it was written)."""
    call = ToolCall(id="w", name="weather", arguments={"location": "Boston", "days": 200000})
    assert ground_calls([call], [WEATHER], _seen("Boston over $200,000 days"), "words")[0].arguments == \
        call.arguments
    big = ToolCall(id="w", name="weather", arguments={"location": "Boston", "days": 2000000})
    assert ground_calls([big], [WEATHER], _seen("Boston for $2 million days"), "words")[0].arguments == \
        big.arguments
    half = ToolCall(id="w", name="weather", arguments={"location": "Boston", "days": 1500})
    assert ground_calls([half], [WEATHER], _seen("Boston for 1.5k days"), "words")[0].arguments == half.arguments


def test_a_number_never_said_in_any_spelling_is_still_left_out():
    """Folding digit groups does not invent numbers: ``days=3000`` after "2,000 days" is left out."""
    call = ToolCall(id="w", name="weather", arguments={"location": "Boston", "days": 3000})
    assert ground_calls([call], [WEATHER], _seen("Boston for 2,000 days"), "schema")[0].arguments == \
        {"location": "Boston"}


def test_a_percentage_said_is_kept_as_its_fraction():
    """``rate=0.045`` after "4.5%" and ``0.05`` after "5 percent" were said: the model converted them, kept."""
    for said, value in (("a rate of 4.5%", 0.045), ("5 percent a year", 0.05), ("at 12% interest", 0.12)):
        call = ToolCall(id="w", name="weather", arguments={"location": "Boston", "days": value})
        assert ground_calls([call], [WEATHER], _seen(f"Boston, {said}"), "schema")[0].arguments == \
            call.arguments, said


def test_a_number_said_as_a_word_is_kept():
    """``days=3`` after "three days" and ``12`` after "a dozen" were said; ``days=4`` after "three" is not."""
    three = ToolCall(id="w", name="weather", arguments={"location": "Boston", "days": 3})
    assert ground_calls([three], [WEATHER], _seen("Boston for the next three days"), "schema")[0].arguments == \
        three.arguments
    dozen = ToolCall(id="w", name="weather", arguments={"location": "Boston", "days": 12})
    assert ground_calls([dozen], [WEATHER], _seen("Boston, a dozen days"), "schema")[0].arguments == \
        dozen.arguments
    four = ToolCall(id="w", name="weather", arguments={"location": "Boston", "days": 4})
    assert ground_calls([four], [WEATHER], _seen("Boston for the next three days"), "schema")[0].arguments == \
        {"location": "Boston"}


FILTER = ToolSpec(name="find_places", description="Places in a city.", parameters={
    "type": "object", "required": ["city"],
    "properties": {"city": {"type": "string"},
                   "good_for_kids": {"type": "string", "enum": ["True", "False", "dontcare"], "default": "dontcare"},
                   "open_late": {"type": "boolean"},
                   "sort": {"type": "string", "enum": ["name", "rating"]}}})


def test_a_flag_spelled_as_text_is_kept_like_a_boolean():
    """``good_for_kids="True"`` for "suitable for children" is the model's reading of the request, as a boolean would
    be: an optional flag spelled as text is never left out; an enum value that is no flag and was never said is."""
    call = ToolCall(id="p", name="find_places", arguments={"city": "Paris", "good_for_kids": "True",
                                                           "open_late": False, "sort": "rating"})
    out = ground_calls([call], [FILTER], _seen("places in Paris suitable for children"), "schema")
    assert out[0].arguments == {"city": "Paris", "good_for_kids": "True", "open_late": False}


@given(st.sampled_from(["True", "False", "true", "FALSE", " false "]), st.text(max_size=40))
@settings(max_examples=50, deadline=None)
def test_flags_spelled_as_text_are_never_left_out_nor_refused(flag, said):
    """Whatever was said, a ``"true"``/``"false"`` value (any case) stays and never makes a call refused."""
    call = ToolCall(id="p", name="find_places", arguments={"city": "Paris", "good_for_kids": flag})
    out = ground_calls([call], [FILTER], _seen(f"in Paris {said}"), "words")
    assert out[0].arguments["good_for_kids"] == flag and out[0].refused is None


FETCH = ToolSpec(name="fetch", description="GET a URL.", parameters={
    "type": "object", "required": ["url"],
    "properties": {"url": {"type": "string"}, "headers": {"type": "object"}}})


def test_a_template_stand_in_at_any_depth_makes_the_call_refused():
    """``"Bearer YOUR_ACCESS_TOKEN"`` in a header (optional, nested) is a value the model does not have: the call
    is refused with the stand-in named, at ``schema`` level too."""
    call = ToolCall(id="f", name="fetch", arguments={"url": "https://stocks.example/prices",
                                                     "headers": {"Authorization": "Bearer YOUR_ACCESS_TOKEN"}})
    out = ground_calls([call], [FETCH], _seen("stock prices from the exchange"), "schema")
    assert out[0].refused and "'YOUR_ACCESS_TOKEN'" in out[0].refused
    lower = ToolCall(id="f", name="fetch", arguments={"url": "https://x.example/?key=your_api_key"})
    assert ground_calls([lower], [FETCH], _seen("get x"), "schema")[0].refused


def test_the_counting_number_and_the_example_domain_are_stand_ins():
    """``user_id=12345`` after "help" and a URL on ``example.com`` are made up; ``12346``, the user's own
    ``12345`` and a real domain are not."""
    def refused(arguments, said):
        return ground_calls([ToolCall(id="f", name="fetch", arguments=arguments)], [FETCH], _seen(said),
                            "schema")[0].refused

    assert refused({"url": "https://a.example", "headers": {"user_id": 12345}}, "https://a.example help")
    assert refused({"url": "https://api.example.com/v1/prices"}, "stock prices")
    assert refused({"url": "https://a.example", "headers": {"from": "me@example.org"}}, "https://a.example")
    assert not refused({"url": "https://a.example", "headers": {"user_id": 12346}}, "https://a.example")
    assert not refused({"url": "https://a.example", "headers": {"user_id": "12345"}}, "https://a.example, id 12345")
    assert not refused({"url": "https://counterexample.com"}, "fetch https://counterexample.com")


def test_a_stand_in_that_is_the_parameters_default_or_enum_value_is_the_tools_own():
    """``base="https://api.example.com"`` when that is the schema's default (or an enum value) is kept."""
    spec = ToolSpec(name="ping", description="Ping.", parameters={
        "type": "object", "required": ["host"],
        "properties": {"host": {"type": "string", "enum": ["example.org", "a.test"]},
                       "base": {"type": "string", "default": "https://api.example.com"}}})
    call = ToolCall(id="p", name="ping", arguments={"host": "example.org", "base": "https://api.example.com"})
    assert ground_calls([call], [spec], _seen("ping it"), "schema")[0].refused is None


def test_a_stand_in_the_user_said_or_plain_words_with_your_are_kept():
    """The user's own ``your_token`` is grounded; "your" in prose ("in your area") is no stand-in."""
    said = ToolCall(id="f", name="fetch", arguments={"url": "https://a.example/?t=your_token"})
    assert ground_calls([said], [FETCH], _seen("fetch https://a.example/?t=your_token"), "schema")[0].refused is None
    prose = ToolCall(id="f", name="fetch", arguments={"url": "https://a.example", "headers": {"Note": "in your area"}})
    assert ground_calls([prose], [FETCH], _seen("fetch https://a.example"), "schema")[0].refused is None


_JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=30),
                        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                      max_size=4), max_leaves=12)


@given(st.dictionaries(st.sampled_from(["url", "headers"]), _JSONISH, min_size=1), st.text(max_size=60))
@settings(max_examples=80, deadline=None)
def test_the_stand_in_rule_never_refuses_a_call_without_a_stand_in(arguments, said):
    """Arguments with no "your", "1234" or "example." anywhere are never refused as stand-ins (at ``schema``
    level, with a said url)."""
    if any(s in repr(arguments).casefold() for s in ("your", "1234", "example.")):
        return
    arguments = {**arguments, "url": "https://a.example"}
    out = ground_calls([ToolCall(id="f", name="fetch", arguments=arguments)], [FETCH],
                       _seen(f"https://a.example {said}"), "schema")
    assert out[0].refused is None


TICKETS = ToolSpec(name="buy_tickets", description="Buy event tickets.", parameters={
    "type": "object", "required": ["event", "date"],
    "properties": {"event": {"type": "string"}, "date": {"type": "string", "description": "As 'YYYY-MM-DD'."}}})


def test_a_required_date_when_nothing_says_which_day_is_refused():
    """"Get me something fun in London" and the 0.5B model buys tickets for 2023-04-15: a calendar date when
    nothing in the conversation says which day is made up, so the call is refused and the model told to ask."""
    call = ToolCall(id="t", name="buy_tickets", arguments={"event": "Theater in London", "date": "2023-04-15"})
    out = ground_calls([call], [TICKETS], _seen("Will you get me something fun in London, three of us?"), "schema")
    assert out[0].refused and "2023-04-15" in out[0].refused and "ask" in out[0].refused


@given(when=st.sampled_from(["this weekend", "tomorrow", "on Saturday", "next month", "on the 5th", "on 5/6",
                             "at 7 pm", "in December", "tonight", "on 2023.10.1"]),
       date=st.sampled_from(["2023-04-15", "05/05/2023", "2023-10-01 19:00"]))
@settings(max_examples=60, deadline=None)
def test_a_required_date_after_any_word_for_a_day_is_left_to_the_model(when, date):
    """A weekday, "tomorrow", "this weekend", an ordinal or a partial date: something says which day, so the
    model's date stands (the rule only refuses a date out of nowhere)."""
    call = ToolCall(id="t", name="buy_tickets", arguments={"event": "Theater in London", "date": date})
    out = ground_calls([call], [TICKETS], _seen(f"Get me theater tickets in London {when}"), "schema")
    assert out[0].refused is None


@given(said=st.text(alphabet=st.characters(categories=["L", "N", "P", "Zs"]), max_size=60))
@settings(max_examples=150, deadline=None)
def test_the_date_rule_never_refuses_a_date_the_user_said_nor_a_non_date(said):
    """A date written in the conversation, or a value that is no calendar date, is never refused by the rule;
    a conversation in another script than ASCII is not judged at all."""
    for date, seen in (("2023-04-15", f"{said} on 2023-04-15"), ("Theater", said)):
        call = ToolCall(id="t", name="buy_tickets", arguments={"event": "Theater", "date": date})
        out = ground_calls([call], [TICKETS], _seen(seen), "schema")
        assert out[0].refused is None or "the date" not in out[0].refused
    out = ground_calls([ToolCall(id="t", name="buy_tickets", arguments={"event": "Theater", "date": "2023-04-15"})],
                       [TICKETS], _seen(f"帮我买票 {said}"), "schema")
    assert out[0].refused is None
