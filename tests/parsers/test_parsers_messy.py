"""A table of realistic messy model replies, across output modes and tool-call formats.

Each row names the rule it checks; every reply is the kind of thing models
really send (prose around the answer, fences, trailing commas, wrong case...).
"""

import pytest
from zagent import ParseError

QA = [{"name": "answer", "type": "string"}, {"name": "confidence", "type": "number", "required": False}]
COUNT = [{"name": "answer", "type": "string"}, {"name": "count", "type": "integer"}]
LIST = [{"name": "steps", "type": "array", "items": {"name": "s", "type": "string"}}]
FLAG = [{"name": "done", "type": "boolean"}, {"name": "reason", "type": "string", "required": False}]
NESTED = [{"name": "person", "type": "object", "fields": [{"name": "name"}, {"name": "age", "type": "integer"}]}]

PARSE_CASES = [
    # (id / rule, mode, reply, fields, options, expected)
    ("json: prose before and after", "json",
     'Sure! Here is the answer:\n{"answer": "Paris", "confidence": 0.9}\nLet me know if you need more.',
     QA, {}, {"answer": "Paris", "confidence": 0.9}),
    ("json: inside a json code fence", "json",
     'Here you go:\n```json\n{"answer": "Paris", "confidence": 0.75}\n```', QA, {},
     {"answer": "Paris", "confidence": 0.75}),
    ("json: fence without language", "json", '```\n{"answer": "Rome"}\n```', QA, {},
     {"answer": "Rome", "confidence": None}),
    ("json: trailing commas", "json", '{"steps": ["a", "b",],}', LIST, {}, {"steps": ["a", "b"]}),
    ("json: single-quoted keys and strings", "json", "{'answer': 'it is Paris', 'count': 2}", COUNT, {},
     {"answer": "it is Paris", "count": 2}),
    ("json: integer given as a string", "json", '{"answer": "x", "count": "42"}', COUNT, {},
     {"answer": "x", "count": 42}),
    ("json: number for a string field becomes text", "json", '{"answer": 42, "count": 1}', COUNT, {},
     {"answer": "42", "count": 1}),
    ("json: key in the wrong case", "json", '{"Answer": "Paris", "COUNT": 3}', COUNT, {},
     {"answer": "Paris", "count": 3}),
    ("json: Python literals", "json", "{'done': True, 'reason': None}", FLAG, {},
     {"done": True, "reason": None}),
    ("json: raw newline inside a string", "json", '{"answer": "line one\nline two", "count": 1}', COUNT, {},
     {"answer": "line one\nline two", "count": 1}),
    ("json: example object in prose is skipped for the real one", "json",
     'The format is {} as asked.\n{"answer": "Oslo", "count": 5}', COUNT, {}, {"answer": "Oslo", "count": 5}),
    ("json: nested object with lax integer", "json", '{"person": {"name": "Ada", "age": "36"}}', NESTED, {},
     {"person": {"name": "Ada", "age": 36}}),
    ("json: braces inside strings do not confuse the scan", "json",
     'Result: {"answer": "use {x} and }", "count": 0} done', COUNT, {}, {"answer": "use {x} and }", "count": 0}),
    ("title: wrong case in titles", "title", "## ANSWER\nParis\n\n## Count\n3", COUNT, {},
     {"answer": "Paris", "count": 3}),
    ("title: prose before the first section", "title",
     "Let me think step by step.\n\n## answer\nParis\n## count\n7\n", COUNT, {}, {"answer": "Paris", "count": 7}),
    ("title: other heading level and trailing colon", "title", "### Answer:\nBerlin\n#### count:\n2", COUNT, {},
     {"answer": "Berlin", "count": 2}),
    ("title: bold titles", "title", "**Answer**\nLima\n\n**Count:**\n4", COUNT, {}, {"answer": "Lima", "count": 4}),
    ("title: bold title with the value on the same line", "title", "**Answer:** Paris\n**Count:** 3", COUNT, {},
     {"answer": "Paris", "count": 3}),
    ("title: heading with the value after a colon", "title", "## Answer: Paris\n## Count: 3\n\nThanks!", COUNT, {},
     {"answer": "Paris", "count": 3}),
    ("title: missing optional field", "title", "## answer\nParis", QA, {}, {"answer": "Paris", "confidence": None}),
    ("title: array as a bullet list", "title", "## steps\n- boil water\n- add tea\n", LIST, {},
     {"steps": ["boil water", "add tea"]}),
    ("title: array as fenced JSON", "title", '## steps\n```json\n["a", "b"]\n```', LIST, {},
     {"steps": ["a", "b"]}),
    ("title: configured title format", "title", "Answer: \nParis\nCount:\n1", COUNT, {"title_format": "{title}:"},
     {"answer": "Paris", "count": 1}),
    ("title: unknown sections stay inside the field", "title", "## answer\nParis\n### Details\nCapital.", QA, {},
     {"answer": "Paris\n### Details\nCapital.", "confidence": None}),
    ("title: boolean yes", "title", "## done\nYes\n## reason\nall steps ran", FLAG, {},
     {"done": True, "reason": "all steps ran"}),
    ("xml: nested markup kept as text", "xml", "<answer>Use <b>bold</b> here</answer><count>1</count>", COUNT, {},
     {"answer": "Use <b>bold</b> here", "count": 1}),
    ("xml: CDATA kept verbatim", "xml", "<answer><![CDATA[a < b && c]]></answer>\n<count>2</count>", COUNT, {},
     {"answer": "a < b && c", "count": 2}),
    ("xml: prose around and wrong-case tags", "xml", "Thinking...\n<ANSWER>Paris</ANSWER>\n<Count> 3 </Count>\nBye",
     COUNT, {}, {"answer": "Paris", "count": 3}),
    ("xml: entities decoded", "xml", "<answer>fish &amp; chips</answer><count>0</count>", COUNT, {},
     {"answer": "fish & chips", "count": 0}),
    ("xml: nested object as child elements", "xml", "<person><name>Ada</name><age>36</age></person>", NESTED, {},
     {"person": {"name": "Ada", "age": 36}}),
    ("xml: array as item elements", "xml", "<steps><item>one</item><item>two</item></steps>", LIST, {},
     {"steps": ["one", "two"]}),
    ("xml: attributes on the tag are ignored", "xml", '<answer lang="en">Paris</answer><count>1</count>', COUNT, {},
     {"answer": "Paris", "count": 1}),
    ("xml: missing closing tag on the last element", "xml", "<count>2</count>\n<answer>Paris is the capital",
     COUNT, {}, {"answer": "Paris is the capital", "count": 2}),
    ("str: whole reply, stripped", "str", "\n  The capital is Paris.  \n", [{"name": "answer"}], {},
     {"answer": "The capital is Paris."}),
    ("str: integer field from a bare number", "str", " 42\n", [{"name": "n", "type": "integer"}], {}, {"n": 42}),
    ("custom: user function", "custom", "ANSWER=Paris;COUNT=3", COUNT,
     {"parse_func": lambda t: dict(kv.split("=") for kv in t.lower().split(";"))},
     {"answer": "paris", "count": 3}),
]


@pytest.mark.parametrize("rule,mode,reply,fields,options,want", PARSE_CASES, ids=[c[0] for c in PARSE_CASES])
def test_messy_reply_parses(kernel, rule, mode, reply, fields, options, want):
    """Each messy but readable reply parses to the expected values (rule in the test id)."""
    assert kernel.parser(mode).parse(reply, fields, **options) == want


ERROR_CASES = [
    # (id / rule, mode, reply, fields, missing, invalid field names)
    ("json: 3.5 for an integer field is invalid", "json", '{"answer": "x", "count": 3.5}', COUNT, [], ["count"]),
    ('json: "3.5" for an integer field is invalid', "json", '{"answer": "x", "count": "3.5"}', COUNT, [], ["count"]),
    ("json: no object at all", "json", "I am not sure, sorry.", COUNT, ["answer", "count"], []),
    ("json: missing required field named", "json", '{"answer": "x"}', COUNT, ["count"], []),
    ("title: missing required section", "title", "## answer\nParis", COUNT, ["count"], []),
    ("title: not a boolean", "title", "## done\nmaybe", FLAG, [], ["done"]),
    ("xml: missing required and invalid together", "xml", "<count>many</count>", COUNT, ["answer"], ["count"]),
    ("str: not an integer", "str", "forty-two", [{"name": "n", "type": "integer"}], [], ["n"]),
]


@pytest.mark.parametrize("rule,mode,reply,fields,missing,invalid", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_messy_reply_error_names_fields(kernel, rule, mode, reply, fields, missing, invalid):
    """An unusable reply raises ParseError naming the missing and invalid fields, keeping the raw text."""
    with pytest.raises(ParseError) as info:
        kernel.parser(mode).parse(reply, fields)
    assert (info.value.missing, sorted(info.value.invalid), info.value.raw) == (missing, invalid, reply)


TOOL_CASES = [
    # (id / rule, reply, [(name, arguments)], number of errors, remaining text)
    ("tool_call: one block with prose before",
     'Let me look that up.\n<tool_call>\n{"name": "search", "arguments": {"q": "paris"}}\n</tool_call>',
     [("search", {"q": "paris"})], 0, "Let me look that up."),
    ("tool_call: several blocks in one reply",
     '<tool_call>{"name": "a", "arguments": {}}</tool_call>\n<tool_call>{"name": "b", "arguments": {"x": 1}}'
     '</tool_call>', [("a", {}), ("b", {"x": 1})], 0, ""),
    ("tool_call: malformed block becomes an error, good one kept",
     '<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call><tool_call>{"name": "b", "arguments": {"x": </tool_call>',
     [("a", {"x": 1})], 1, ""),
    ("tool_call: unclosed last block still read",
     'Calling now <tool_call>{"name": "a", "arguments": {"k": "v"}}', [("a", {"k": "v"})], 0, "Calling now"),
    ("tool_call: arguments given as a JSON string (OpenAI style)",
     '<tool_call>{"name": "a", "arguments": "{\\"k\\": 2}"}</tool_call>', [("a", {"k": 2})], 0, ""),
    ("tool_call: block without a name is an error",
     '<tool_call>{"arguments": {"k": 2}}</tool_call>', [], 1, ""),
    ("tool_call: trailing comma inside the block is repaired",
     '<tool_call>{"name": "a", "arguments": {"k": 2,},}</tool_call>', [("a", {"k": 2})], 0, ""),
    ("hermes: Qwen-style block with code fence inside",
     '<tool_call>\n```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```\n</tool_call>',
     [("get_weather", {"city": "Oslo"})], 0, ""),
    ("fenced: tool_call fence",
     'I will search.\n```tool_call\n{"name": "search", "arguments": {"q": "x"}}\n```\n',
     [("search", {"q": "x"})], 0, "I will search."),
    ("fenced: json fence holding a list of calls",
     '```json\n[{"name": "a", "arguments": {}}, {"name": "b", "parameters": {"y": 2}}]\n```',
     [("a", {}), ("b", {"y": 2})], 0, ""),
    ("fenced: json fence that is not a call stays text",
     'Example:\n```json\n{"city": "Oslo"}\n```', [], 0, 'Example:\n```json\n{"city": "Oslo"}\n```'),
    ("fenced: malformed tool_call fence is an error",
     '```tool_call\n{"name": "search", "arguments": {"q": \n```', [], 1, ""),
    ("mistral: [TOOL_CALLS] list",
     '[TOOL_CALLS][{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {"y": "z"}}]',
     [("a", {"x": 1}), ("b", {"y": "z"})], 0, ""),
    ("mistral: v11 name[ARGS] form",
     '[TOOL_CALLS]get_time[ARGS]{"tz": "UTC"}', [("get_time", {"tz": "UTC"})], 0, ""),
    ("mistral: list not closed is an error", '[TOOL_CALLS][{"name": "a", "arguments": {}}', [], 1, ""),
    ("llama3: bare JSON with parameters",
     '{"name": "get_weather", "parameters": {"city": "Paris"}}', [("get_weather", {"city": "Paris"})], 0, ""),
    ("llama3: python_tag prefix and eom token",
     '<|python_tag|>{"name": "f", "parameters": {"a": 1}}<|eom_id|>', [("f", {"a": 1})], 0, ""),
    ("llama3: type function wrapper",
     '{"type": "function", "name": "f", "parameters": {"a": 1}}', [("f", {"a": 1})], 0, ""),
    ("llama3: JSON answer without parameters is not a call",
     'The record is {"name": "Bob", "age": 3}.', [], 0, 'The record is {"name": "Bob", "age": 3}.'),
    ("llama3: several calls separated by semicolons",
     '{"name": "a", "parameters": {}}; {"name": "b", "parameters": {"x": 1}}', [("a", {}), ("b", {"x": 1})], 0, ""),
    ("hermes: two call objects in one block",
     '<tool_call>\n{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {"x": 1}}\n</tool_call>',
     [("a", {}), ("b", {"x": 1})], 0, ""),
    ("function tag form", '<function=search>{"q": "x"}</function>', [("search", {"q": "x"})], 0, ""),
    ("openai-style function wrapper in a block",
     '<tool_call>{"id": "c1", "function": {"name": "f", "arguments": "{}"}}</tool_call>', [("f", {})], 0, ""),
    ("no calls: plain answer", "The answer is 42.", [], 0, "The answer is 42."),
]


@pytest.mark.parametrize("rule,reply,calls,errors,text", TOOL_CASES, ids=[c[0] for c in TOOL_CASES])
def test_messy_tool_calls(kernel, rule, reply, calls, errors, text):
    """Calls are extracted whatever the style; malformed ones become errors; the rest of the text is kept."""
    got = kernel.parser("tool_call").extract(reply)
    assert ([(c.name, c.arguments) for c in got.calls], len(got.errors), got.text) == (calls, errors, text)
