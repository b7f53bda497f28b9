"""A tool registered with an explicit JSON schema (``Tool(parameters=...)``) has its arguments checked
against that schema in the one tool path: wrong types and missing required fields are errors the model
sees, naming the field, and the handler does not run."""

import pytest
from hypothesis import given, settings, strategies as st

from zagent import Kernel, Tool

SEED = ('Seed 004 (Agent-Z ToolRegistry.register): "def register(self, name, toolset, schema: Dict[str, Any], '
        'handler: Callable, ...)" (a tool is registered with its schema beside its handler).')

SCHEMA = {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"}, "metric": {"type": "boolean"},
    "unit": {"type": "string", "enum": ["C", "F"]}, "tags": {"type": "array", "items": {"type": "string"}}},
    "required": ["city", "days"]}


def kernel_with_schema_tool(seen):
    k = Kernel(entry_points=False)
    k.add_tool(Tool(name="forecast", description="Weather forecast.", parameters=SCHEMA,
                    handler=lambda **kw: seen.append(kw) or "ok"))
    return k


@pytest.mark.parametrize("arguments, field", [
    ({"city": "Oslo"}, "days"),                       # a required field missing
    ({"city": "Oslo", "days": "three"}, "days"),      # wrong type
    ({"city": 7, "days": 3}, "city"),
    ({"city": "Oslo", "days": 3, "metric": "maybe"}, "metric"),
    ({"city": "Oslo", "days": 3, "unit": "K"}, "unit"),   # not one of the enum
    ({"city": "Oslo", "days": 3, "tags": ["a", 2]}, "tags"),
])
def test_arguments_breaking_the_schema_are_an_error_naming_the_field(arguments, field):
    """Seed 004 (Agent-Z ToolRegistry.register): "register(self, name, toolset, schema: Dict[str, Any],
    handler, ...)" (the tool is registered with its schema). Arguments that break that schema -- a
    missing required field, a wrong type, a value outside the enum -- give an ``error`` result naming the
    field, and the handler is never called."""
    seen = []
    r = kernel_with_schema_tool(seen).run_tool({"name": "forecast", "arguments": arguments})
    assert r.state == "error" and field in r.content and r.content.startswith("Error:")
    assert seen == []


def test_arguments_matching_the_schema_reach_the_handler_as_sent():
    """Seed 004 (Agent-Z ToolRegistry.execute): "execute(name, params)" (the registry runs the handler with
    the params). Valid arguments, extra keys included, reach the handler unchanged."""
    seen = []
    args = {"city": "Oslo", "days": 3, "tags": ["rain"], "extra": {"x": 1}}
    r = kernel_with_schema_tool(seen).run_tool({"name": "forecast", "arguments": args})
    assert r.state == "success" and seen == [args]


# values that no lax conversion turns into another scalar type ("42" -> 42 and 1 -> True are accepted)
SCALARS = {"string": st.text(alphabet="abcxyz ", max_size=5).filter(lambda s: s not in ("true", "false")),
           "integer": st.integers(2, 1000) | st.integers(-1000, -1), "boolean": st.booleans()}


@given(kind=st.sampled_from(sorted(SCALARS)), other=st.sampled_from(sorted(SCALARS)), data=st.data())
@settings(max_examples=60, deadline=None)
def test_a_value_of_another_json_type_is_refused(kind, other, data):
    """Seed 004 (Agent-Z ToolEntry): "schema: Dict" / "get_schema()" (each tool carries its schema): for a
    one-field schema of any scalar type, a value of that type passes and a value of another type is an
    error naming the field."""
    value = data.draw(SCALARS[other])
    seen = []
    k = Kernel(entry_points=False)
    k.add_tool(Tool(name="t", description="d", handler=lambda **kw: seen.append(kw) or "ok",
                    parameters={"type": "object", "properties": {"v": {"type": kind}}, "required": ["v"]}))
    r = k.run_tool({"name": "t", "arguments": {"v": value}})
    if kind == other:
        assert r.state == "success" and seen == [{"v": value}]
    else:
        assert r.state == "error" and "v" in r.content and seen == []


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=4),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                    max_leaves=12)
SCHEMA_KEYS = st.sampled_from(["type", "properties", "items", "required", "enum", "additionalProperties", "anyOf"])
TYPES = st.sampled_from(["string", "integer", "number", "boolean", "array", "object", "null", "weird"])
SCHEMAS = st.recursive(
    st.fixed_dictionaries({"type": TYPES | st.lists(TYPES, max_size=3)}),
    lambda inner: st.fixed_dictionaries({"type": st.just("object"),
                                         "properties": st.dictionaries(st.sampled_from(["a", "b", "c d", "1"]), inner,
                                                                       max_size=3),
                                         "required": st.lists(st.sampled_from(["a", "b"]), max_size=2)})
    | st.fixed_dictionaries({"type": st.just("array"), "items": inner})
    | st.dictionaries(SCHEMA_KEYS, JSON | inner, max_size=3),
    max_leaves=10)


@given(schema=SCHEMAS, arguments=st.dictionaries(st.sampled_from(["a", "b", "c d"]), JSON, max_size=3))
@settings(max_examples=200, deadline=None)
def test_any_schema_gives_a_result_or_an_error_result_never_a_crash(schema, arguments):
    """Seed 004 (Agent-Z ToolRegistry.register): "schema: Dict[str, Any]" (the schema is any dict a tool
    source hands over, a hostile server's included): whatever it holds, a call gives a success or an
    ``error`` result, never an exception in the tool path."""
    k = Kernel(entry_points=False)
    k.add_tool(Tool(name="t", description="d", handler=lambda **kw: "ok", parameters=schema))
    r = k.run_tool({"name": "t", "arguments": arguments})
    assert r.state in ("success", "error")
    if r.state == "error":
        assert "invalid arguments for tool 't'" in r.content


def test_a_plugin_registers_a_handler_with_agent_z_schema_and_it_is_checked():
    """Seed 004 (Agent-Z ToolRegistry.register): "register(self, name: str, toolset: str, schema: Dict[str, Any],
    handler: Callable, ...)". A plugin's ``register(handler, name=..., toolset=..., schema=...)`` (or
    ``parameters=``) makes a tool whose schema is the one given, in its toolset, and a call missing a
    required field is an error result naming it; a good call reaches the handler."""
    seen = []

    class Weather:
        def zagent_register_tools(self, register):
            register(lambda **kw: seen.append(kw) or "ok", name="forecast", toolset="web", schema=SCHEMA)

    k = Kernel([Weather()], entry_points=False)
    assert k.tool("forecast").parameters == SCHEMA and k.tool("forecast").toolset == "web"
    r = k.run_tool({"name": "forecast", "arguments": {"city": "Oslo"}})
    assert r.state == "error" and "days" in r.content and seen == []
    assert k.run_tool({"name": "forecast", "arguments": {"city": "Oslo", "days": 2}}).state == "success"
    assert seen == [{"city": "Oslo", "days": 2}]


def test_every_missing_required_argument_is_named():
    """An explicit-schema tool called without two required arguments: the error names both, as for any tool."""
    from zagent import Kernel, Tool

    k = Kernel(plugins=[], entry_points=False)
    k.add_tool(Tool(name="pair", description="", handler=lambda **kw: "ok", parameters={
        "type": "object", "required": ["a", "b"], "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}))
    try:
        result = k.run_tool({"name": "pair", "arguments": {}})
    finally:
        k.close()
    assert result.state == "error" and "missing required argument(s) 'a', 'b'" in result.content
