"""Arguments are checked against the MCP tool's inputSchema before the server is called."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import zagent

from mcp_helpers import demo_stdio
from zagent_mcp.schema import check_arguments, declared_types, json_type


def test_a_missing_required_argument_is_the_kernels_bad_arguments_error(make_kernel):
    """A missing required property comes back as the same error result as bad arguments to any zagent tool."""
    k = make_kernel({"demo": demo_stdio(tools=["add"])})

    @zagent.tool
    def native_add(a: int, b: int) -> int:
        return a + b

    k.add_tool(native_add)
    mcp = k.run_tool({"name": "demo.add", "arguments": {"a": 1}})
    native = k.run_tool({"name": "native_add", "arguments": {"a": 1}})
    assert mcp.state == native.state == "error"
    for result, name in ((mcp, "demo.add"), (native, "native_add")):
        assert result.content.startswith(f"Error: invalid arguments for tool {name!r}: ")
        assert "Call it again with arguments matching this schema: {" in result.content
    assert "missing required argument(s) 'b'" in mcp.content


def test_a_wrong_json_type_is_refused_naming_the_argument(make_kernel):
    """A top-level argument of the wrong JSON type is refused before the call, naming argument and types."""
    k = make_kernel({"demo": demo_stdio(tools=["add", "echo"])})
    result = k.run_tool({"name": "demo.add", "arguments": {"a": [1], "b": 2}})
    # the kernel checks the tool's schema first (zagent._tools.schemaargs), in msgspec's words
    assert result.state == "error" and "Expected `int`, got `array` - at `$.a`" in result.content
    result = k.run_tool({"name": "demo.echo", "arguments": {"text": {"x": 1}}})
    assert "Expected `str`, got `object` - at `$.text`" in result.content


def test_unknown_arguments_are_refused_when_the_schema_forbids_them(make_kernel):
    """With `additionalProperties: false` an unknown argument is refused, naming it and the allowed ones."""
    k = make_kernel({"demo": demo_stdio(tools=["configure", "echo"])})
    result = k.run_tool({"name": "demo.configure", "arguments": {"name": "x", "colour": "red"}})
    assert result.state == "error"
    assert "unknown field `colour`" in result.content  # the kernel's schema check; the schema shown lists the rest
    assert '"additionalProperties":false' in result.content
    ok = k.run_tool({"name": "demo.echo", "arguments": {"text": "hi", "extra": 1}})  # schema allows extras
    assert "unknown argument" not in ok.content


def test_valid_and_laxly_convertible_arguments_reach_the_server(make_kernel):
    """Valid arguments pass unchanged; a string spelling a declared number is converted, as for zagent tools;
    a nullable (anyOf string/null) argument accepts null."""
    k = make_kernel({"demo": demo_stdio(tools=["add", "configure"])})
    assert k.run_tool({"name": "demo.add", "arguments": {"a": "20", "b": 22}}).value == {"sum": 42}
    result = k.run_tool({"name": "demo.configure", "arguments": {"name": "x", "level": 3, "note": None}})
    assert result.state == "success", result.content
    assert json.loads(result.content) == {"name": "x", "level": 3, "note": None}
    refused = k.run_tool({"name": "demo.configure", "arguments": {"name": "x", "note": 5}})
    assert "argument 'note' must be string or null, got integer" in refused.content


# -- the validator on its own: properties over generated schemas and arguments ------------------

_VALUES = {
    "string": st.text(max_size=5),
    "integer": st.integers(-10**6, 10**6),
    "number": st.floats(allow_nan=False, allow_infinity=False) | st.integers(-99, 99),
    "boolean": st.booleans(),
    "array": st.lists(st.integers(), max_size=3),
    "object": st.dictionaries(st.text(max_size=3), st.integers(), max_size=3),
    "null": st.none(),
}
_NAMES = st.text("abcdefgh", min_size=1, max_size=4)


@st.composite
def schema_and_arguments(draw):
    """An object schema (typed properties, some required, maybe closed) and arguments that satisfy it."""
    names = draw(st.lists(_NAMES, unique=True, max_size=5))
    types = {n: draw(st.lists(st.sampled_from(sorted(_VALUES)), min_size=1, max_size=2, unique=True)) for n in names}
    props = {n: {"type": t[0] if len(t) == 1 else t} for n, t in types.items()}
    required = [n for n in names if draw(st.booleans())]
    schema = {"type": "object", "properties": props, "required": required,
              "additionalProperties": draw(st.sampled_from([False, True, None]))}
    present = [n for n in names if n in required or draw(st.booleans())]
    args = {n: draw(_VALUES[draw(st.sampled_from(types[n]))]) for n in present}
    return schema, args


@settings(max_examples=300, deadline=None)
@given(schema_and_arguments())
def test_arguments_that_satisfy_the_schema_pass_unchanged(case):
    """Property: arguments with every required property, only known ones and declared types pass as they are."""
    schema, args = case
    assert check_arguments(schema, args) == (args, [])


@settings(max_examples=300, deadline=None)
@given(schema_and_arguments(), st.data())
def test_a_missing_required_property_is_always_reported(case, data):
    """Property: dropping a required property gives a problem naming it."""
    schema, args = case
    present = [r for r in schema["required"] if r in args]
    if not present:
        return
    gone = data.draw(st.sampled_from(present))
    _, problems = check_arguments(schema, {k: v for k, v in args.items() if k != gone})
    assert any("missing required" in p and repr(gone) in p for p in problems)


@settings(max_examples=300, deadline=None)
@given(schema_and_arguments(), st.text("XYZ", min_size=1, max_size=3), st.integers())
def test_an_unknown_property_is_refused_only_when_the_schema_is_closed(case, extra, value):
    """Property: an unknown property is a problem iff `additionalProperties` is false."""
    schema, args = case
    _, problems = check_arguments(schema, {**args, extra: value})
    refused = any("unknown argument" in p and repr(extra) in p for p in problems)
    assert refused == (schema["additionalProperties"] is False)


@settings(max_examples=300, deadline=None)
@given(schema_and_arguments(), st.data())
def test_a_value_of_an_undeclared_type_is_refused(case, data):
    """Property: a value whose JSON type the property does not allow is refused, naming the property
    (arrays, objects, booleans and null are never converted, so none can slip through)."""
    schema, args = case
    if not args:
        return
    name = data.draw(st.sampled_from(sorted(args)))
    allowed = declared_types(schema["properties"][name])
    wrong = [t for t in ("array", "object", "boolean", "null") if t not in allowed]
    if not wrong:
        return
    value = data.draw(_VALUES[data.draw(st.sampled_from(wrong))])
    _, problems = check_arguments(schema, {**args, name: value})
    assert any(f"argument {name!r} must be" in p and json_type(value) in p for p in problems)


@settings(max_examples=200, deadline=None)
@given(st.integers(-10**9, 10**9), st.booleans())
def test_strings_spelling_a_declared_number_or_boolean_are_converted(number, flag):
    """Property: lax conversion turns "42" into 42 for integer and "true" into True for boolean, and leaves
    a string alone when string is also allowed."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "f": {"type": "boolean"},
                                               "s": {"type": ["string", "integer"]}}}
    args = {"n": str(number), "f": json.dumps(flag), "s": str(number)}
    assert check_arguments(schema, args) == ({"n": number, "f": flag, "s": str(number)}, [])
