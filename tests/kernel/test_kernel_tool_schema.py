"""Tool schemas from type hints and docstrings, and argument validation a model can act on."""

import enum
import keyword
from typing import Annotated, Literal, Optional

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zagent import Tool, ToolError, tool
from zagent._tools.tool import ArgumentsError, parse_docstring


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(msgspec.Struct):
    x: float
    y: float


def search(query: str, limit: Annotated[int, msgspec.Meta(ge=1, le=50)] = 10, lang: Optional[str] = None) -> list:
    """Search the web.

    Args:
        query: words to look for.
        limit: how many results.
    """
    return []


def test_schema_required_and_defaults():
    """Parameters without defaults are required; defaults appear in the schema."""
    params = Tool.from_function(search).parameters
    assert params["required"] == ["query"]
    assert params["properties"]["limit"]["default"] == 10


def test_schema_annotated_constraints():
    """``Annotated[int, Meta(ge=, le=)]`` becomes ``minimum``/``maximum``."""
    limit = Tool.from_function(search).parameters["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (1, 50)


def test_schema_optional_allows_null():
    """``Optional[str]`` accepts a string or null."""
    lang = Tool.from_function(search).parameters["properties"]["lang"]
    assert {"type": "null"} in lang["anyOf"] and {"type": "string"} in lang["anyOf"]


def test_schema_descriptions_from_google_docstring():
    """The summary is the tool description; ``Args:`` entries describe parameters."""
    t = Tool.from_function(search)
    assert t.description == "Search the web."
    assert t.parameters["properties"]["query"]["description"] == "words to look for."


def test_schema_descriptions_from_rest_docstring():
    """reST ``:param name:`` lines describe parameters too."""
    def f(a: int):
        """Do it.

        :param a: the amount
        """
    assert Tool.from_function(f).parameters["properties"]["a"]["description"] == "the amount"


def test_schema_enum_and_literal():
    """Enums and ``Literal`` become ``enum`` lists."""
    def paint(color: Color, finish: Literal["matte", "gloss"]):
        """Paint."""
    params = Tool.from_function(paint).parameters
    assert params["$defs"]["Color"]["enum"] == ["blue", "red"]
    assert params["properties"]["finish"]["enum"] == ["gloss", "matte"]


def test_schema_nested_struct():
    """A nested ``msgspec.Struct`` parameter is described in ``$defs`` and validated as an object."""
    def move(to: Point):
        """Move."""
    t = Tool.from_function(move)
    assert t.parameters["$defs"]["Point"]["required"] == ["x", "y"]
    assert t.validate({"to": {"x": 1, "y": 2.5}})["to"] == Point(1.0, 2.5)


def test_run_context_parameter_is_hidden():
    """A parameter annotated ``RunContext`` is injected by the kernel, not shown to the model."""
    from zagent import RunContext

    def f(a: int, ctx: RunContext):
        """F."""
    t = Tool.from_function(f)
    assert list(t.parameters["properties"]) == ["a"] and t.ctx_param == "ctx"


def test_decorator_with_options():
    """``@tool(name=, toolset=, timeout=)`` makes a ``Tool`` with those settings."""
    @tool(name="adder", toolset="math", timeout=5)
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b
    assert (add.name, add.toolset, add.timeout, add.handler(1, 2)) == ("adder", "math", 5, 3)


def test_invalid_tool_name_is_refused():
    """A tool name models cannot use is refused with the rule."""
    with pytest.raises(ToolError, match="invalid tool name"):
        Tool.from_function(lambda: 1, name="has space")


def test_unsupported_parameter_type_is_refused():
    """A parameter type msgspec cannot describe is an error naming the tool."""
    def f(x: object.__class__):  # 'type' is not JSON-describable
        """F."""
    with pytest.raises(ToolError, match="'f'"):
        Tool.from_function(f)


def test_wrong_type_error_names_field_and_schema():
    """Wrong argument types raise ``ArgumentsError`` naming the field and showing the schema."""
    with pytest.raises(ArgumentsError) as info:
        Tool.from_function(search).validate({"query": "x", "limit": "many"})
    assert "$.limit" in str(info.value) and '"minimum":1' in str(info.value)


def test_a_huge_schema_is_named_not_quoted_in_the_error():
    """An argument error names a schema over 4,000 characters instead of quoting it (the model was given it with
    the tool; a 256 KiB schema in every error would fill the model's context); the wrong field is still named."""
    props = {f"p{i}": {"type": "integer", "description": "x" * 100} for i in range(60)}
    big = Tool(name="big", description="d", handler=lambda **kw: None,
               parameters={"type": "object", "properties": props, "required": ["p0"]})
    with pytest.raises(ArgumentsError) as info:
        big.validate({"p0": "many"})
    assert "$.p0" in str(info.value) and "the schema listed with the tool 'big'" in str(info.value)
    assert len(str(info.value)) < 1000


def test_missing_required_argument_is_named():
    """A missing required argument is named in the error."""
    with pytest.raises(ArgumentsError, match="query"):
        Tool.from_function(search).validate({})


def test_unknown_argument_is_refused():
    """Arguments the tool does not have are refused, not silently dropped."""
    with pytest.raises(ArgumentsError, match="unknown"):
        Tool.from_function(search).validate({"query": "x", "page": 2})


def test_null_for_a_parameter_defaulting_to_none_is_its_default():
    """``auth: dict = None`` (implicitly optional) takes an explicit ``null`` as its default: a model sends it for
    an argument it leaves out, and a rail's rewrite of the filled-in arguments carries it; other nulls are refused."""

    def post(url: str, auth: dict = None, retries: int = 2) -> str:  # type: ignore[assignment]
        """POST."""
        return url

    t = Tool.from_function(post)
    assert t.validate({"url": "u", "auth": None}) == {"url": "u", "auth": None, "retries": 2}
    with pytest.raises(ArgumentsError, match="retries"):
        t.validate({"url": "u", "auth": None, "retries": None})


def test_a_rail_rewrite_keeps_a_none_default_valid():
    """A before-tool-call rail that adds an argument and returns the rest as given (defaults filled in, so
    ``auth: None``) runs the tool, where it was refused as 'rewrote the arguments into invalid ones'."""
    from zagent import Kernel, Rewrite
    from zagent.hookspecs import hookimpl

    class Vault:
        @hookimpl
        def zagent_before_tool_call(self, call, ctx):
            return Rewrite({**call.arguments, "token": "t"})

    def post(url: str, auth: dict = None, token: str = "") -> str:  # type: ignore[assignment]
        """POST."""
        return f"sent {url} {auth} {token}"

    k = Kernel([Vault()], entry_points=False)
    k.add_tool(post)
    try:
        result = k.run_tool({"name": "post", "arguments": {"url": "u"}})
    finally:
        k.close()
    assert result.state == "success" and result.content == "sent u None t"


def test_json_text_arguments_are_decoded():
    """Arguments sent as JSON text are decoded; invalid JSON gets a clear error."""
    t = Tool.from_function(search)
    assert t.validate('{"query": "x"}')["query"] == "x"
    with pytest.raises(ArgumentsError, match="not valid JSON"):
        t.validate("{query: x")


def test_lax_conversion_of_numeric_strings():
    """``"42"`` is accepted for an ``int`` parameter (lax conversion, as models often quote numbers)."""
    assert Tool.from_function(search).validate({"query": "x", "limit": "42"})["limit"] == 42


def test_parse_docstring_summary_stops_at_sections():
    """The summary is the text before the first section."""
    assert parse_docstring("Sum.\n\nMore text.\n\nReturns:\n    int")[0] == "Sum.\n\nMore text."


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-10**6, max_value=10**6))
def test_property_constraint_accepts_exactly_the_range(n):
    """For every integer, validation succeeds iff it lies within the Annotated bounds."""
    t = Tool.from_function(search)
    try:
        t.validate({"query": "q", "limit": n})
        accepted = True
    except ArgumentsError as exc:
        accepted = False
        assert "limit" in str(exc)
    assert accepted == (1 <= n <= 50)


@settings(max_examples=200, deadline=None)
@given(st.text(), st.integers(1, 50), st.one_of(st.none(), st.text()))
def test_property_valid_arguments_round_trip(query, limit, lang):
    """Valid arguments come back unchanged as the handler's keyword arguments."""
    assert Tool.from_function(search).validate({"query": query, "limit": limit, "lang": lang}) == {
        "query": query, "limit": limit, "lang": lang}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(json_values, st.text(), st.binary()))
def test_property_any_input_gives_result_or_arguments_error(value):
    """Whatever a model sends, validation returns arguments or raises ``ArgumentsError``, nothing else."""
    try:
        Tool.from_function(search).validate(value)
    except ArgumentsError:
        pass


def test_non_empty_list_default_is_copied_per_call():
    """A non-empty list default works, shows in the schema and is a fresh copy for each call."""
    def f(xs: list = [1, 2]):  # noqa: B006 - the point of the test
        """F."""
    t = Tool.from_function(f)
    first = t.validate({})["xs"]
    first.append(3)
    assert t.validate({})["xs"] == [1, 2] and t.parameters["properties"]["xs"]["default"] == [1, 2]


def test_positional_only_parameter_is_refused():
    """A positional-only parameter is refused with a message saying to remove the '/'."""
    def g(a: int, /):
        """G."""
    with pytest.raises(ToolError, match="positional-only"):
        Tool.from_function(g)


TYPES = {int: ("integer", st.integers()), str: ("string", st.text()), float: ("number", st.floats(allow_nan=False, allow_infinity=False)),
         bool: ("boolean", st.booleans())}
param_lists = st.lists(
    st.tuples(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(lambda n: not keyword.iskeyword(n)),
              st.sampled_from(list(TYPES)), st.booleans()),
    min_size=1, max_size=6, unique_by=lambda p: p[0])


def function_with(params):
    """A function whose signature and annotations are ``params`` = [(name, type, has_default)]."""
    import inspect

    def fn(**kwargs):
        return kwargs
    fn.__signature__ = inspect.Signature([
        inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=t, default=t() if d else inspect.Parameter.empty)
        for n, t, d in params])
    fn.__annotations__ = {n: t for n, t, _ in params}
    return fn


@settings(max_examples=100, deadline=None)
@given(param_lists, st.data())
def test_property_schema_matches_signature(params, data):
    """For any signature of JSON types: required = parameters without defaults, types map to JSON types,
    a matching argument object validates unchanged, and leaving out a required one is named in the error."""
    t = Tool.from_function(function_with(params), name="generated")
    assert sorted(t.parameters["required"]) == sorted(n for n, _, d in params if not d)
    assert {n: p["type"] for n, p in t.parameters["properties"].items()} == {n: TYPES[ty][0] for n, ty, _ in params}
    args = {n: data.draw(TYPES[ty][1]) for n, ty, _ in params}
    assert t.validate(args) == args
    required = [n for n, _, d in params if not d]
    if required:
        with pytest.raises(ArgumentsError, match=required[0]):
            t.validate({k: v for k, v in args.items() if k != required[0]})
