"""zagent.agentkit.fields: declarations, result Structs, lax conversion, schema and description."""

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from zagent import ConfigError, Field, ParseError
from zagent.agentkit import fields as F


def test_dict_and_field_declarations_are_equivalent():
    """A dict declaration normalises to the same Field as the Field object."""
    a = F.normalize([{"name": "answer", "type": "string", "description": "d"}])
    b = F.normalize([Field(name="answer", description="d")])
    assert a == b


def test_type_aliases_are_accepted():
    """str/int/float/bool/dict/list are aliases of the JSON type names."""
    spec = F.normalize([{"name": n, "type": t} for n, t in
                        [("a", "str"), ("b", "int"), ("c", "float"), ("d", "bool"), ("e", "dict"), ("f", "list")]])
    assert [f.type for f in spec] == ["string", "integer", "number", "boolean", "object", "array"]


def test_unknown_type_is_a_config_error_naming_the_field():
    """An unknown type raises ConfigError naming the field and the valid types."""
    with pytest.raises(ConfigError, match="'answer' has unknown type 'strng'.*string, integer"):
        F.normalize([{"name": "answer", "type": "strng"}])


def test_duplicate_names_are_a_config_error():
    """Two fields with one name raise ConfigError naming it."""
    with pytest.raises(ConfigError, match="duplicate field name 'a'"):
        F.normalize([{"name": "a"}, {"name": "a", "type": "int"}])


def test_nested_duplicate_names_are_named_with_their_path():
    """A duplicate inside a nested object is reported with its dotted path."""
    with pytest.raises(ConfigError, match="'p.x'"):
        F.normalize([{"name": "p", "type": "object", "fields": [{"name": "x"}, {"name": "x"}]}])


def test_compile_is_cached_per_declaration():
    """The same declaration compiles once: the same FieldSpec (and Struct type) comes back."""
    decl = [{"name": "answer"}, {"name": "n", "type": "int"}]
    assert F.compile_fields(decl) is F.compile_fields([dict(d) for d in decl])
    assert F.compile_fields(decl).struct is F.compile_fields(decl).struct


def test_result_is_a_msgspec_struct_with_nested_structs():
    """convert returns a Struct; nested objects are nested Structs and arrays keep their item type."""
    decl = [{"name": "p", "fields": [{"name": "age", "type": "int"}]},
            {"name": "xs", "type": "array", "items": {"name": "x", "type": "int"}}]
    value = F.convert({"p": {"age": "3"}, "xs": ["1", 2]}, decl)
    assert isinstance(value, msgspec.Struct) and isinstance(value.p, msgspec.Struct)
    assert (value.p.age, value.xs) == (3, [1, 2])


def test_names_that_are_not_identifiers_still_work():
    """Field names with spaces or keywords map to attributes but keep their name in dicts."""
    decl = [{"name": "final answer"}, {"name": "class", "type": "int"}]
    value = F.convert({"final answer": "x", "class": 1}, decl)
    assert F.to_dict(value) == {"final answer": "x", "class": 1}


@pytest.mark.parametrize("raw,want", [("42", 42), (" 7 ", 7), (42, 42), ("**5**", 5)])
def test_integer_conversion_is_lax(raw, want):
    """Integer fields accept integer text (stripped of spaces and emphasis)."""
    assert F.convert({"n": raw}, [{"name": "n", "type": "int"}]).n == want


@pytest.mark.parametrize("raw", ["3.5", 3.5, "many", True])
def test_integer_conversion_rejects_non_integers(raw):
    """3.5, "3.5", words and booleans are not integers: ParseError names the field."""
    with pytest.raises(ParseError) as info:
        F.convert({"n": raw}, [{"name": "n", "type": "int"}])
    assert list(info.value.invalid) == ["n"]


@pytest.mark.parametrize("raw,want", [("true", True), ("False", False), ("yes", True), ("no", False), (1, True)])
def test_boolean_conversion_is_lax(raw, want):
    """Boolean fields accept true/false/yes/no text in any case."""
    assert F.convert({"b": raw}, [{"name": "b", "type": "bool"}]).b is want


def test_parse_error_names_all_missing_and_invalid_fields_and_keeps_raw():
    """One ParseError lists every missing and every invalid field, with the raw reply."""
    decl = [{"name": "a"}, {"name": "b", "type": "int"}, {"name": "c", "type": "bool"}]
    with pytest.raises(ParseError) as info:
        F.convert({"b": "x", "c": "maybe"}, decl, raw="RAW")
    err = info.value
    assert (err.missing, sorted(err.invalid), err.raw) == (["a"], ["b", "c"], "RAW")
    assert "missing required field(s): a" in str(err) and "expected integer" in str(err)


def test_optional_fields_get_defaults():
    """An absent optional field gets its default (a fresh copy for lists)."""
    decl = [{"name": "tags", "type": "list", "required": False, "default": []}, {"name": "n", "required": False}]
    one, two = F.convert({}, decl), F.convert({}, decl)
    assert (one.tags, one.n) == ([], None) and one.tags is not two.tags


def test_json_schema_has_properties_required_and_nesting():
    """json_schema is an object schema with properties, required names, items and nested objects."""
    schema = F.json_schema([{"name": "a", "description": "the a"},
                            {"name": "xs", "type": "array", "items": {"name": "x", "type": "int"}, "required": False}])
    assert schema == {"type": "object", "required": ["a"], "properties": {
        "a": {"type": "string", "description": "the a"},
        "xs": {"type": "array", "items": {"type": "integer"}}}}


def test_describe_is_json_for_prompts():
    """describe renders the spec as a JSON list of name/type/description/required."""
    text = F.describe([{"name": "a", "description": "the a"}])
    assert msgspec.json.decode(text) == [{"name": "a", "type": "string", "description": "the a", "required": True}]


def test_shorthands_work_at_any_depth():
    """A bare name is a string field and "items": "int" an array of integers, also inside nested objects."""
    decl = [{"name": "p", "fields": ["x", {"name": "ys", "items": "int"}]}]
    assert F.to_dict(F.convert({"p": {"x": "a", "ys": ["2"]}}, decl)) == {"p": {"x": "a", "ys": [2]}}


@given(st.sampled_from([float("inf"), float("-inf"), float("nan"), "inf", "-Infinity", " NaN "]),
       st.sampled_from(["number", "integer"]))
def test_non_finite_numbers_are_refused_with_the_field_named(value, type_):
    """inf/nan (as floats or text) are not numbers a reply can mean: a ParseError names the field."""
    spec = F.compile_fields([Field(name="n", type=type_)])
    with pytest.raises(ParseError, match="n: .* is not a finite number"):
        F.convert({"n": value}, spec)
