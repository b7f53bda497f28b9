"""The offline test model gives string parameters with a regex ``pattern`` a value that matches it."""

from __future__ import annotations

import re
from typing import Annotated

import msgspec
import pytest
from hypothesis import given, settings, strategies as st

from zagent import ConfigError, Kernel
from zagent.plugins.offline.patterns import PatternError, matching
from zagent.plugins.offline.values import from_schema

ATOMS = ["a", "Z", "7", r"\d", r"\w", r"\s", r"\S", r"\D", r"\W", ".", r"\.", r"\-", "[a-z]", "[A-Z0-9_]",
         "[^0-9]", r"[^\W\d]", "[xyz]", r"[\d.]", "(ab|cd)", r"(\d{2}|x)", "(?:foo)", "[+-]"]
QUANTIFIERS = ["", "?", "*", "+", "{2}", "{1,3}", "{2,}", "*?", "+?"]

piece = st.tuples(st.sampled_from(ATOMS), st.sampled_from(QUANTIFIERS)).map("".join)
patterns = st.tuples(st.booleans(), st.lists(piece, min_size=1, max_size=5), st.booleans()).map(
    lambda t: ("^" if t[0] else "") + "".join(t[1]) + ("$" if t[2] else ""))

REAL_WORLD = [r"^[A-Z]{3}-\d{4}$", r"^\w+@\w+\.com$", r"^#[0-9a-fA-F]{6}$", r"^v\d+\.\d+\.\d+(-[a-z]+)?$",
              r"^\+?[1-9]\d{1,14}$", r"^[a-z][a-z0-9_]*$", r"^\d{4}-\d{2}-\d{2}$", r"^(\d)\1$", r"^[^\s@]+@[^\s@]+$",
              r"^https?://\S+$", r"^[A-Z]{2}\d{2} ?\d{4}$", r"\bid-\d+\b"]


@settings(max_examples=300, deadline=None)
@given(patterns)
def test_generated_value_matches_simple_patterns(pattern):
    """For any pattern built from common classes, groups and quantifiers, the value matches it (search)."""
    value = matching(pattern)
    assert re.search(pattern, value), (pattern, value)


@settings(max_examples=200, deadline=None)
@given(patterns, st.integers(min_value=0, max_value=12))
def test_generated_value_respects_min_length_or_says_it_cannot(pattern, min_length):
    """With minLength, the value matches and is long enough, or PatternError is raised (never a bad value)."""
    try:
        value = matching(pattern, min_length)
    except PatternError:
        return
    assert re.search(pattern, value) and len(value) >= min_length


@pytest.mark.parametrize("pattern", REAL_WORLD)
def test_common_real_world_patterns(pattern):
    """Typical parameter patterns (codes, emails, colours, versions, phone numbers) get a matching value."""
    assert re.search(pattern, from_schema({"type": "string", "pattern": pattern}))


def test_schema_parameter_with_pattern_gets_a_matching_value():
    """from_schema fills a required 'code' parameter with a value matching its pattern, not 'a'."""
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": r"^[A-Z]{3}-\d{4}$"}},
              "required": ["code"]}
    assert from_schema(schema) == {"code": "AAA-0000"}


@pytest.mark.parametrize("schema, why", [
    ({"type": "string", "pattern": r"^(?=.*\d)[a-z]+$"}, "cannot build a string matching it"),
    ({"type": "string", "pattern": r"^\d{3}$", "minLength": 5}, "with length 5.."),
    ({"type": "string", "pattern": r"^(unclosed$"}, "not a valid regular expression"),
])
def test_unsatisfiable_pattern_names_parameter_and_pattern(schema, why):
    """A pattern it cannot satisfy raises ConfigError naming the parameter path and the pattern."""
    outer = {"type": "object", "properties": {"filter": {"type": "object", "properties": {"code": schema},
                                                         "required": ["code"]}}, "required": ["filter"]}
    with pytest.raises(ConfigError) as info:
        from_schema(outer)
    message = str(info.value)
    assert "'filter.code'" in message and repr(schema["pattern"]) in message and why in message


def test_examples_are_an_escape_hatch_for_hard_patterns():
    """A schema's first example is used as the value, so a hard pattern can be given one."""
    schema = {"type": "string", "pattern": r"^(?=.*\d)[a-z\d]+$", "examples": ["abc1"]}
    assert from_schema(schema) == "abc1"


def test_test_model_tool_call_with_pattern_passes_validation():
    """test:offline calls a tool whose parameter has a pattern, and run_tool accepts the arguments."""
    k = Kernel(["zagent.plugins.offline"], entry_points=False)

    def lookup(code: Annotated[str, msgspec.Meta(pattern=r"^[A-Z]{3}-\d{4}$")]) -> str:
        """Look an order up by its code."""
        return f"found {code}"

    k.add_tool(lookup)
    try:
        (call,) = k.llm("test:offline").complete("find it", tools=k.tools()).tool_calls
        result = k.run_tool(call)
    finally:
        k.close()
    assert result.ok, result.error
    assert result.content == "found AAA-0000"


def test_test_model_names_the_tool_when_it_cannot_call_it():
    """When no value fits, the test model's error names the tool, the parameter and the pattern."""
    k = Kernel(["zagent.plugins.offline"], entry_points=False)

    def strict(pin: Annotated[str, msgspec.Meta(pattern=r"^(?!0000)\d{4}$")]) -> str:
        """Check a PIN."""
        return pin

    k.add_tool(strict)
    try:
        with pytest.raises(ConfigError, match=r"tool 'strict'.*parameter 'pin' has pattern"):
            k.llm("test:offline").complete("go", tools=k.tools())
    finally:
        k.close()


def test_an_array_asking_for_more_items_than_the_offline_model_makes_is_a_config_error():
    """A tool's schema (a hostile MCP server's) with ``minItems`` of a billion: the offline model says it cannot fill
    the parameter, naming it, instead of building a list of a billion items (a ``MemoryError``, or minutes)."""
    schema = {"type": "object", "required": ["rows"],
              "properties": {"rows": {"type": "array", "minItems": 10**9, "items": {"type": "integer"}}}}
    with pytest.raises(ConfigError, match="'rows'.*1,000,000,000 items"):
        from_schema(schema)


def test_an_array_within_the_bound_is_filled_to_min_items():
    """Guard: ``minItems`` up to the bound gives that many items."""
    schema = {"type": "array", "minItems": 10_000, "items": {"type": "string"}}
    assert len(from_schema(schema)) == 10_000
