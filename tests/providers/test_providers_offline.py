"""The offline providers: scripted replies, the schema-driven test model, streaming and profiles."""

from __future__ import annotations

import json

import msgspec
import pytest

from zagent import Completion, ConfigError, Field, Message, ModelProfile, ToolCall, Usage


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


# -- scripted ------------------------------------------------------------------------


def test_scripted_replays_text_in_order(offline):
    """Replies come back in the order they were scripted."""
    llm = offline.llm("scripted:demo", replies=["one", "two"])
    assert llm.complete("a").text == "one"
    assert llm.complete("b").text == "two"


def test_scripted_records_every_request(offline):
    """Every request the model receives is kept in ``llm.requests``."""
    llm = offline.llm("scripted:demo", replies=["x", "y"])
    llm.complete("first")
    llm.complete([Message.system("be brief"), Message.user("second")], temperature=0)
    assert [r.messages[-1].content for r in llm.requests] == ["first", "second"]
    assert llm.requests[1].options == {"temperature": 0}


def test_scripted_tool_call_dict_gets_an_id(offline):
    """A dict reply with tool_calls becomes native ToolCalls; missing ids are generated."""
    llm = offline.llm("scripted:t", replies=[{"content": None, "tool_calls": [{"name": "add", "arguments": {"a": 2}}]}])
    completion = llm.complete("go")
    (call,) = completion.tool_calls
    assert call.name == "add" and call.arguments == {"a": 2} and call.id
    assert completion.finish_reason == "tool_calls"


def test_scripted_accepts_message_and_completion(offline):
    """A zagent.Message or Completion reply is returned as given."""
    done = Completion(message=Message.assistant("c"), finish_reason="length", usage=Usage(input_tokens=5, calls=1))
    llm = offline.llm("scripted:t", replies=[Message.assistant("m"), done])
    assert llm.complete("a").text == "m"
    assert llm.complete("b").finish_reason == "length"


def test_scripted_exception_is_raised(offline):
    """An Exception instance in the script is raised by that call (to test error paths)."""
    llm = offline.llm("scripted:t", replies=[TimeoutError("slow")])
    with pytest.raises(TimeoutError, match="slow"):
        llm.complete("a")


def test_scripted_callable_sees_the_request(offline):
    """A callable reply is called with the LLMRequest and its result is the reply."""
    llm = offline.llm("scripted:t", replies=[lambda req: f"got {req.messages[-1].content}"])
    assert llm.complete("ping").text == "got ping"


def test_scripted_exhaustion_says_how_many(offline):
    """Running out of replies is a ConfigError naming the scripted and made call counts."""
    llm = offline.llm("scripted:t", replies=["only"])
    llm.complete("a")
    with pytest.raises(ConfigError, match=r"1 reply but the 2nd call was made"):
        llm.complete("b")


def test_scripted_bad_reply_type_is_explained(offline):
    """A reply of an unsupported type raises ConfigError listing what is accepted."""
    llm = offline.llm("scripted:t", replies=[42])
    with pytest.raises(ConfigError, match="cannot use int as a scripted reply"):
        llm.complete("a")


def test_scripted_streams_text_tool_calls_and_done(offline):
    """Streaming yields text deltas, whole tool calls, then one done chunk with the assembled reply."""
    reply = {"content": "let me add", "tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}
    llm = offline.llm("scripted:t", replies=[reply])
    chunks = list(llm.stream("go"))
    assert "".join(c.text for c in chunks if c.type == "text") == "let me add"
    assert [c.tool_call.name for c in chunks if c.type == "tool_call"] == ["add"]
    assert chunks[-1].type == "done" and chunks[-1].completion.text == "let me add"


def test_scripted_usage_is_estimated(offline):
    """Usage is estimated at about four characters per token, one call."""
    llm = offline.llm("scripted:t", replies=["x" * 40])
    usage = llm.complete("y" * 80).usage
    assert (usage.input_tokens, usage.output_tokens, usage.calls) == (20, 10, 1)


def test_scripted_without_native_tools_writes_text_calls(offline):
    """With profile native_tools=False, scripted tool calls come back as <tool_call> text."""
    llm = offline.llm("scripted:t", replies=[{"tool_calls": [{"name": "add", "arguments": {"a": 1}}]}],
                      profile={"native_tools": False})
    completion = llm.complete("go")
    assert completion.tool_calls == []
    assert completion.text == '<tool_call>{"name":"add","arguments":{"a":1}}</tool_call>'


def test_scripted_unknown_option_is_rejected(offline):
    """An option the scripted provider does not know is a ConfigError (typos do not pass silently)."""
    with pytest.raises(ConfigError, match="unknown options"):
        offline.llm("scripted:t", replys=["a"])


# -- test model -----------------------------------------------------------------------


def test_fallback_model_is_the_test_model(offline, monkeypatch):
    """Without ZAGENT_MODEL the kernel resolves to the offline test model."""
    monkeypatch.delenv("ZAGENT_MODEL", raising=False)
    assert offline.llm().name == "test:offline"


def test_test_model_calls_each_offered_tool_once(offline):
    """On the first call it calls every offered tool, with arguments valid for the tool's schema."""
    t1 = offline.add_tool(add)
    llm = offline.llm("test:x")
    completion = llm.complete("go", tools=[t1])
    (call,) = completion.tool_calls
    assert call.name == "add"
    assert t1.validate(call.arguments) == call.arguments


def test_test_model_answers_after_tools_ran(offline):
    """Once the tools were called it answers with text naming the tool results."""
    t1 = offline.add_tool(add)
    llm = offline.llm("test:x")
    first = llm.complete("go", tools=[t1])
    history = [Message.user("go"), first.message, Message.tool("2", first.tool_calls[0].id, "add")]
    second = llm.complete(history, tools=[t1])
    assert second.tool_calls == [] and "add: 2" in second.text


def test_test_model_one_call_per_turn_without_parallel_calls(offline):
    """With parallel_tool_calls=False it calls one tool per turn."""

    def mul(a: int, b: int) -> int:
        return a * b

    tools = [offline.add_tool(add), offline.add_tool(mul)]
    llm = offline.llm("test:x", profile={"parallel_tool_calls": False})
    assert len(llm.complete("go", tools=tools).tool_calls) == 1


def test_test_model_schema_values(offline):
    """Arguments honour enums, defaults, nested $defs, bounds and formats of the JSON schema."""
    schema = {
        "type": "object",
        "properties": {
            "kind": {"enum": ["x", "y"]},
            "n": {"type": "integer", "minimum": 5},
            "when": {"type": "string", "format": "date"},
            "tags": {"type": "array", "items": {"type": "string", "minLength": 3}, "minItems": 2},
            "inner": {"$ref": "#/$defs/Inner"},
            "mode": {"type": "string", "default": "fast"},
            "optional": {"type": "string"},
        },
        "required": ["kind", "n", "when", "tags", "inner", "mode"],
        "$defs": {"Inner": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}},
    }
    llm = offline.llm("test:x")
    (call,) = llm.complete("go", tools=[{"name": "t", "parameters": schema}]).tool_calls
    assert call.arguments == {"kind": "x", "n": 5, "when": "2024-01-01", "tags": ["aaa", "aaa"],
                              "inner": {"ok": True}, "mode": "fast"}


def test_test_model_text_tool_calls_without_native_tools(offline):
    """With native_tools=False the test model writes <tool_call> JSON blocks in the text."""
    t1 = offline.add_tool(add)
    llm = offline.llm("test:x", profile={"native_tools": False})
    completion = llm.complete("go", tools=[t1])
    assert completion.tool_calls == []
    body = completion.text.removeprefix("<tool_call>").removesuffix("</tool_call>")
    assert json.loads(body)["name"] == "add"


def test_test_model_text_calls_count_as_called(offline):
    """A <tool_call> block in an earlier assistant turn counts as called, so it answers next."""
    t1 = offline.add_tool(add)
    llm = offline.llm("test:x", profile={"native_tools": False})
    first = llm.complete("go", tools=[t1])
    second = llm.complete([Message.user("go"), first.message, Message.user("result: 2")], tools=[t1])
    assert "<tool_call>" not in second.text


def test_test_model_output_spec_without_parser_is_json(offline):
    """An output_spec whose mode has no registered parser is answered as a JSON object of the fields."""
    fields = [Field(name="answer"), Field(name="score", type="number"), Field(name="ok", type="boolean"),
              Field(name="items", type="array", items=Field(name="item", type="integer"))]
    llm = offline.llm("test:x")
    text = llm.complete("q", output_spec={"mode": "json", "fields": fields}).text
    assert json.loads(text) == {"answer": "example answer", "score": 1.0, "ok": True, "items": [1]}


def test_test_model_output_spec_uses_registered_parser(offline):
    """With a parser registered for the mode, the answer is that parser's render of generated values."""

    class Upper:
        def render(self, values, fields, **opts):
            return "|".join(f"{f.name}={values[f.name]}" for f in fields).upper()

    class Plugin:
        @staticmethod
        def zagent_register_parsers(register):
            register("upper", Upper())

    offline.add_plugin(Plugin, "upper-parser")
    llm = offline.llm("test:x")
    text = llm.complete("q", output_spec={"mode": "upper", "fields": [{"name": "title"}]}).text
    assert text == "TITLE=EXAMPLE TITLE"


def test_test_model_response_format_json_schema(offline):
    """A response_format JSON schema gets a JSON document valid for that schema."""

    class Answer(msgspec.Struct):
        city: str
        population: int

    fmt = {"type": "json_schema", "json_schema": {"name": "a", "schema": msgspec.json.schema(Answer)}}
    text = offline.llm("test:x").complete("q", response_format=fmt).text
    assert msgspec.json.decode(text, type=Answer) == Answer(city="a", population=1)


def test_test_model_streams(offline):
    """The test model streams its answer as text deltas ending with a done chunk."""
    chunks = list(offline.llm("test:x", text="hello there").stream("q"))
    assert "".join(c.text for c in chunks if c.type == "text") == "hello there"
    assert chunks[-1].type == "done"


def test_test_model_profile_reports_json_output(offline):
    """The test model says it can produce JSON-schema output; user overrides still win."""
    assert offline.llm("test:x").profile.json_schema_output is True
    assert offline.llm("test:y", profile={"json_schema_output": False}).profile == ModelProfile(json_schema_output=False)


def test_tool_call_type_is_used(offline):
    """Scripted replies may hold zagent.ToolCall objects directly."""
    llm = offline.llm("scripted:t", replies=[{"tool_calls": [ToolCall(id="c1", name="add", arguments={})]}])
    assert llm.complete("x").tool_calls[0].id == "c1"


@pytest.mark.parametrize("mode", ["json", "xml", "title"])
def test_test_model_output_parses_with_the_real_parsers(mode):
    """With the parsers plugin loaded, the test model's answer parses back into the requested fields."""
    from zagent import Kernel

    fields = [Field(name="answer"), Field(name="score", type="integer"),
              Field(name="tags", type="array", items=Field(name="tag"))]
    with Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.parsers"], entry_points=False) as k:
        text = k.llm("test:offline").complete("q", output_spec={"mode": mode, "fields": fields}).text
        assert k.parser(mode).parse(text, fields) == {"answer": "example answer", "score": 1, "tags": ["example tag"]}


def test_offline_test_model_ignores_real_model_settings():
    """An agent file's temperature/max_tokens/timeout do not stop it running offline; a typo still fails."""
    import pytest
    from zagent import ConfigError, Kernel

    k = Kernel(plugins=["zagent.plugins.offline"], entry_points=False)
    assert k.llm("test:offline", temperature=0, max_tokens=100, timeout=5).complete("hi").text
    with pytest.raises(ConfigError, match="temprature"):
        k.llm("test:offline", temprature=0)
