"""json-mode actions ask for structured output (response_format) when the model's profile supports it.

Run against the loopback provider servers: what is checked is the request
body each provider actually receives.
"""

from __future__ import annotations

import json

import pytest

from zagent import Kernel
from tests.kernels import with_add
from tests.servers import anthropic_server, ollama_server
from tests.servers.anthropic_server import AnthropicServer
from tests.servers.ollama_server import OllamaServer
from tests.servers.openai_server import OpenAIServer, completion

from .conftest import PLUGINS, qa_spec

KEY = "sk-structured-test"
OUTPUTS = [{"name": "answer", "type": "string", "description": "the answer"}, {"name": "score", "type": "integer"}]
SCHEMA = {"title": "QA", "type": "object",
          "properties": {"answer": {"type": "string", "description": "the answer"}, "score": {"type": "integer"}},
          "required": ["answer", "score"]}
REPLY = '{"answer": "four", "score": 4}'


@pytest.fixture
def k(make_kernel):
    """A fresh kernel with the actions tests' plugins, the anthropic and ollama providers and ``add``."""
    return with_add(make_kernel(*PLUGINS, "zagent.plugins.anthropic", "zagent.plugins.ollama", strict=False))


@pytest.fixture
def server():
    with OpenAIServer(key=KEY) as s:
        yield s


def run_openai(k, server, model="gpt-4o", replies=(REPLY,), spec=None, **options):
    """Run a json-mode QA agent on openai:<model>; return the result and the request bodies sent."""
    server.then(*[completion(r) if isinstance(r, str) else r for r in replies])
    agent = k.agent(spec or qa_spec(outputs=OUTPUTS, parse_mode="json"))
    agent.llm = k.llm(f"openai:{model}", base_url=server.url, api_key=KEY, **options)
    result = agent(question="2+2?")
    return result, [json.loads(r.body) for r in server.requests]


def test_openai_json_mode_sends_the_output_schema(k, server):
    """gpt-4o (json_schema_output) gets response_format json_schema built from the output fields."""
    result, (body,) = run_openai(k, server)
    assert body["response_format"] == {"type": "json_schema", "json_schema": {"name": "QA", "schema": SCHEMA}}
    assert (result.answer, result.score) == ("four", 4)


def test_profile_without_json_schema_output_stays_prompt_based(k, server):
    """A model whose profile says no (gpt-3.5-turbo, unknown local models) gets no response_format."""
    for model in ("gpt-3.5-turbo", "my-local-model"):
        result, bodies = run_openai(k, server, model=model)
        assert "response_format" not in bodies[-1]
        assert "answer" in bodies[-1]["messages"][-1]["content"]  # the format is asked for in the prompt
        assert result.score == 4


def test_profile_override_per_model_turns_it_off(k, server):
    """profile={"json_schema_output": False} on k.llm stops response_format for a server that rejects it."""
    _, (body,) = run_openai(k, server, profile={"json_schema_output": False})
    assert "response_format" not in body


def test_kernel_config_profiles_override_by_provider_and_model(server):
    """Kernel(config={"profiles": ...}) overrides per model ("openai:<model>") and per provider ("openai:*")."""
    config = {"profiles": {"openai:*": {"json_schema_output": False}, "openai:vllm-qwen": {"json_schema_output": True}}}
    k = Kernel(plugins=PLUGINS, entry_points=False, config=config)
    try:
        _, bodies = run_openai(k, server, model="gpt-4o")
        assert "response_format" not in bodies[-1]
        _, bodies = run_openai(k, server, model="vllm-qwen")
        assert bodies[-1]["response_format"]["json_schema"]["schema"] == SCHEMA
    finally:
        k.close()


def test_tool_turns_stay_prompt_based(k, server):
    """A json-mode action with tools sends no response_format on the turns that offer tools."""
    spec = qa_spec(outputs=OUTPUTS, parse_mode="json", tools=["add"])
    call = completion(tool_calls=[{"id": "c1", "name": "add", "arguments": '{"a": 2, "b": 2}'}])
    result, bodies = run_openai(k, server, replies=(call, REPLY), spec=spec)
    assert [("tools" in b, "response_format" in b) for b in bodies] == [(True, False), (True, False)]
    assert bodies[1]["messages"][-1] == {"role": "tool", "tool_call_id": "c1", "content": "4"}
    assert result.score == 4


def test_other_parse_modes_stay_prompt_based(k, server):
    """title mode on a model with json_schema_output sends no response_format."""
    spec = qa_spec(outputs=OUTPUTS, parse_mode="title")
    _, (body,) = run_openai(k, server, replies=("## answer\nfour\n\n## score\n4",), spec=spec)
    assert "response_format" not in body


def test_anthropic_without_support_gets_no_schema(k):
    """anthropic's profile says no: the body has no response_format, and no schema system instruction."""
    with AnthropicServer(key=KEY) as server:
        server.then(anthropic_server.message(REPLY))
        agent = k.agent(qa_spec(outputs=OUTPUTS, parse_mode="json"))
        agent.llm = k.llm("anthropic:claude-sonnet-4-5", base_url=server.url, api_key=KEY)
        assert agent(question="2+2?").score == 4
        body = server.requests[0].json
    assert "response_format" not in body and "output_format" not in body and "system" not in body


def test_ollama_gets_the_schema_as_format(k):
    """ollama supports JSON-schema output: the output schema is sent as its format field."""
    with OllamaServer() as server:
        server.then(ollama_server.reply(REPLY))
        agent = k.agent(qa_spec(outputs=OUTPUTS, parse_mode="json"))
        agent.llm = k.llm("ollama:llama3.2", base_url=server.url)
        assert agent(question="2+2?").answer == "four"
        body = server.requests[0].json
    assert body["format"] == SCHEMA


def test_scripted_model_records_no_response_format_unless_profiled(k):
    """The request an agent builds carries the schema only when the model's profile allows it."""
    agent = k.agent(qa_spec(outputs=OUTPUTS, parse_mode="json"))
    plain = k.llm("scripted:plain", replies=[REPLY])
    agent.llm = plain
    agent(question="q")
    able = k.llm("scripted:able", replies=[REPLY], profile={"json_schema_output": True})
    agent.llm = able
    agent(question="q")
    assert plain.requests[0].response_format is None
    assert able.requests[0].response_format == SCHEMA


def test_schema_name_is_made_valid_for_openai(k, server):
    """An action name with spaces and dots becomes a json_schema name OpenAI accepts."""
    spec = qa_spec(outputs=OUTPUTS, parse_mode="json", name="Order lookup v2.1")
    _, (body,) = run_openai(k, server, spec=spec)
    assert body["response_format"]["json_schema"]["name"] == "Order_lookup_v2_1"
