"""Fuzz: whatever a spec file or an input holds, zagent answers with a result or a zagent error.

"Never another exception": no ``RecursionError``, ``TypeError``,
``UnicodeEncodeError``, ``KeyError``... escapes from building an agent from a
file (JSON, YAML or raw bytes, of any agent type) or from running a declared
or chat agent on arbitrary input values (issue 15).
"""

from __future__ import annotations

import itertools
import json
import os
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zagent import Kernel
from zagent.errors import ZagentError
from zagent._trust.limits import data_problem

from tests.kernels import with_add

from .conftest import PLUGINS

# Text with some lone surrogates mixed in (hypothesis leaves category Cs out by default).
CHARS = st.one_of(st.characters(), st.characters(categories=["Cs"]), st.sampled_from("{}[]:\"'\\\n#&*!|>-"))
TEXT = st.text(CHARS, max_size=30)
KEYS = st.one_of(TEXT, st.sampled_from(["name", "type", "prompt", "inputs", "outputs", "tools", "llm",
                                        "llm_config", "parse_mode", "on_error", "agents", "max_iterations",
                                        "prompt_template", "rails", "agent_config", "description", "model"]))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), TEXT)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(KEYS, inner, max_size=4)), max_leaves=25)
BASE = {"name": "fuzzed", "prompt": "Answer {question}", "inputs": [{"name": "question"}],
        "outputs": [{"name": "answer"}], "llm": "test:offline"}
TYPES = st.sampled_from(["customize", "react", "groupchat", "nope", None])
FRESH = itertools.count()  # a new model name per example: the kernel reuses an LLM made with the same options
SETTINGS = settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def kernel():
    k = with_add(Kernel(plugins=PLUGINS, entry_points=False, strict=True))
    yield k
    k.close()


def deep(levels: int, leaf: object = 0) -> object:
    for _ in range(levels):
        leaf = [leaf]
    return leaf


def build(kernel, name: str, content: bytes):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(content)
        try:
            return kernel.agent(path)
        except ZagentError:
            return None


def json_bytes(value: object) -> bytes:
    """JSON text of ``value``; lone surrogates written as \\uXXXX escapes, as a JSON file can hold them."""
    return json.dumps(value, ensure_ascii=True).encode()


@SETTINGS
@given(extra=st.dictionaries(KEYS, VALUES, max_size=5), type_=TYPES, drop=st.sets(st.sampled_from(sorted(BASE))))
def test_a_json_spec_file_builds_or_is_a_zagent_error(kernel, extra, type_, drop):
    """A spec mutated by adding, replacing and dropping keys: an agent, or a ZagentError."""
    spec = {k: v for k, v in {**BASE, **extra}.items() if k not in drop}
    if type_ is not None:
        spec["type"] = type_
    build(kernel, "agent.json", json_bytes(spec))


@SETTINGS
@given(value=VALUES)
def test_any_json_document_builds_or_is_a_zagent_error(kernel, value):
    """Any JSON value at all as the file."""
    build(kernel, "agent.json", json_bytes(value))


@SETTINGS
@given(content=st.one_of(st.binary(max_size=200), TEXT.map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_any_bytes_as_a_spec_file_are_a_zagent_error(kernel, content):
    """Random bytes (and text with raw surrogates) in .json and .yaml files."""
    build(kernel, "agent.json", content)
    build(kernel, "agent.yaml", content)


@SETTINGS
@given(extra=st.dictionaries(KEYS, VALUES, max_size=5), type_=TYPES)
def test_a_yaml_spec_file_builds_or_is_a_zagent_error(kernel, extra, type_):
    """The same specs written as YAML (with YAML's own syntax chars in the text)."""
    yaml = pytest.importorskip("yaml")
    spec = {**BASE, **extra}
    if type_ is not None:
        spec["type"] = type_
    try:
        text = yaml.safe_dump(spec, allow_unicode=False)
    except (yaml.YAMLError, UnicodeError):
        return  # not representable as YAML: nothing to test
    build(kernel, "agent.yaml", text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("levels", [150, 5_000, 100_000])
def test_deep_spec_files_of_every_format_are_a_zagent_error(kernel, levels):
    """Nesting at, past and far past what Python recursion allows."""
    text = '{"name": "a", "agent_config": {"x": ' + "[" * levels + "]" * levels + "}}"
    assert build(kernel, "deep.json", text.encode()) is None
    assert build(kernel, "deep.yaml", text.encode()) is None


INPUT_TYPES = ["string", "integer", "number", "boolean", "array", "object"]


@pytest.fixture(scope="module")
def declared(kernel):
    fields = [{"name": f"in_{t}", "type": t, "required": False} for t in INPUT_TYPES]
    return kernel.agent({"name": "typed", "prompt": " ".join("{" + f["name"] + "}" for f in fields),
                         "inputs": fields, "outputs": [{"name": "answer"}], "llm": "test:offline"})


@SETTINGS
@given(inputs=st.dictionaries(st.sampled_from([f"in_{t}" for t in INPUT_TYPES] + ["other", "\ud800"]),
                              st.one_of(VALUES, st.integers(min_value=0, max_value=3).map(lambda n: deep(10 ** n))),
                              max_size=4))
def test_any_input_values_give_a_result_or_a_zagent_error(declared, inputs):
    """Values of any type, text with lone surrogates, nesting up to 1,000 deep, unknown names."""
    try:
        result = declared(**inputs)
    except ZagentError:
        return
    assert isinstance(result.answer, str)


@SETTINGS
@given(message=TEXT)
def test_any_chat_message_gives_an_answer_or_a_zagent_error(kernel, message):
    """A ReAct agent's chat on any text."""
    agent = kernel.agent({"type": "react", "name": "r", "tools": ["add"], "llm": "test:offline"})
    try:
        response = agent.chat(message)
    except ZagentError:
        return
    assert isinstance(response.content, str)


WORKFLOW = {"goal": "g", "inputs": [{"name": "topic"}], "nodes": [
    {"name": "a", "description": "d", "inputs": [{"name": "topic"}], "outputs": [{"name": "x"}], "agents": ["w"]}]}


@SETTINGS
@given(extra=st.dictionaries(KEYS | st.sampled_from(["nodes", "edges", "conditional_edges", "state", "goal"]),
                             VALUES, max_size=4))
def test_a_workflow_file_loads_and_validates_or_is_a_zagent_error(extra):
    """A workflow file mutated the same way: WorkFlowGraph.load and validate() give a graph or a ZagentError."""
    from zagent.plugins.workflow import WorkFlowGraph

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "wf.json")
        with open(path, "wb") as f:
            f.write(json_bytes({**WORKFLOW, **extra}))
        try:
            WorkFlowGraph.load(path).validate()
        except ZagentError:
            pass


LLM_OPTIONS = ["timeout", "connect_timeout", "max_retries", "retry_backoff", "retry_max_wait", "rpm", "api_key",
               "base_url", "headers", "extra_body", "profile", "temperature", "max_tokens", "price", "model"]


@SETTINGS
@given(config=st.dictionaries(st.sampled_from(LLM_OPTIONS), VALUES, max_size=3),
       model=st.sampled_from(["openai:m", "anthropic:m", "ollama:m", "test:offline"]))
def test_llm_config_of_any_shape_builds_or_is_a_zagent_error(kernel, config, model):
    """A spec's llm_config with provider options of the wrong type (a list as base_url, a string as
    headers...) is a ConfigError naming the model, never AttributeError/TypeError from inside a provider."""
    try:
        kernel.agent({**BASE, "llm": model, "llm_config": config})
    except ZagentError:
        pass


@SETTINGS
@given(arguments=st.one_of(VALUES, TEXT, st.sampled_from([1, 150, 600]).map(lambda n: {"a": deep(n)})),
       native=st.booleans())
def test_a_models_tool_arguments_of_any_shape_never_end_the_run(kernel, arguments, native):
    """Whatever a model sends as arguments (any JSON, text, 600-deep nesting, lone surrogates), natively
    or as a text tool call, the call becomes a result the model reads and the ReAct run completes."""
    from zagent.plugins.react import ReActLoop

    if native:  # a provider hands a dict, or the raw text when the model's arguments are not an object
        # (JSON text with lone surrogates is never decoded into a dict: msgspec refuses \ud800 escapes)
        as_text = not isinstance(arguments, (dict, str)) or "surrogate" in (data_problem(arguments) or "")
        sent = json.dumps(arguments, ensure_ascii=True) if as_text else arguments
        first = {"tool_calls": [{"name": "add", "arguments": sent}]}
    else:
        first = '<tool_call>{"name": "add", "arguments": ' + json.dumps(arguments, ensure_ascii=True) + "}</tool_call>"
    llm = kernel.llm(f"scripted:m{next(FRESH)}", replies=[first, "done"], profile={"native_tools": native})
    result = ReActLoop(kernel=kernel, llm=llm, tools=["add"]).run("add")
    assert result.status == "completed" and result.content == "done"


FIELD = st.fixed_dictionaries(
    {"name": st.sampled_from(["answer", "items", "n", "ok", "obj"])},
    optional={"type": st.sampled_from(["string", "integer", "number", "boolean", "array", "object", "list", "nope"]),
              "required": st.booleans(), "default": VALUES, "description": TEXT})


@SETTINGS
@given(outputs=st.lists(FIELD, max_size=3), mode=st.sampled_from([None, "title", "json", "xml", "str", "custom", "x"]),
       extra=st.dictionaries(st.sampled_from(["prompt_template", "system_prompt", "title_format", "tools", "max_steps",
                                              "tool_format"]), VALUES, max_size=2),
       value=VALUES)
def test_a_fuzzed_declared_agent_runs_or_is_a_zagent_error(kernel, outputs, mode, extra, value):
    """Built from a fuzzed spec (outputs, parse mode, template...) and run on a fuzzed input with the offline
    model: a result or a ZagentError, both when building and when running."""
    spec = {**BASE, "outputs": outputs, **extra, **({"parse_mode": mode} if mode else {})}
    try:
        agent = kernel.agent(spec)
        agent(question=value)
    except ZagentError:
        pass


REACT_KEYS = ["max_iterations", "max_tool_call_concurrency", "tool_limit", "max_context_messages",
              "max_context_tokens", "rails", "agent_config", "on_error", "memory_size", "pinned_tools", "tools",
              "system_prompt", "tool_format"]


@SETTINGS
@given(extra=st.dictionaries(st.sampled_from(REACT_KEYS), st.one_of(st.integers(-3, 5), VALUES), max_size=3),
       message=TEXT, use_react=st.sampled_from([None, True, False]))
def test_a_fuzzed_react_agent_chats_or_is_a_zagent_error(kernel, extra, message, use_react):
    """A ReAct spec with fuzzed settings (bounds, rails, tools...) chatting on fuzzed text."""
    try:
        agent = kernel.agent({"type": "react", "name": "r", "tools": ["add"], "llm": "test:offline", **extra})
        agent.chat(message, use_react=use_react)
    except ZagentError:
        pass
