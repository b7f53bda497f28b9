"""CustomizeAgent declarations: validation errors, round trips, files, secrets."""

import json

import pytest

from zagent import ConfigError
from zagent.plugins.actions import CustomizeAgent

from .conftest import qa_spec


@pytest.mark.parametrize("change, message", [
    ({"inputs": [{"name": "question", "type": "strin"}]}, "strin"),
    ({"inputs": [{"name": "question"}, {"name": "question"}]}, "duplicate"),
    ({"inputs": [{"name": "question"}, {"name": "extra"}]}, "extra"),
    ({"tools": ["nope"]}, "unknown tool 'nope'"),
    ({"colour": "red"}, "colour"),
    ({"prompt_template": {"instruction": "{question}"}}, "exactly one"),
    ({"parse_mode": "yaml"}, "unknown parse_mode"),
    ({"tools": ["nomodule_xyz:fn"]}, "not trusted"),
])
def test_bad_declarations_get_precise_errors(kernel, change, message):
    """Each kind of bad declaration is a ConfigError naming the problem."""
    with pytest.raises(ConfigError, match=message):
        kernel.agent(qa_spec(**change))


def test_dict_round_trip(kernel):
    """to_dict() then from_dict() gives an equivalent agent."""
    agent = kernel.agent(qa_spec(tools=["add"], llm="test:x", description="d"))
    again = CustomizeAgent.from_dict(agent.to_dict(), kernel)
    assert again.to_dict() == agent.to_dict()
    assert again.llm.name == "test:x"


def test_to_dict_never_holds_secrets(kernel):
    """API keys given in llm_config never appear in to_dict() or the saved file."""
    agent = kernel.agent(qa_spec(llm_config={"model": "openai:gpt-x", "api_key": "sk-SECRET", "temperature": 0}))
    data = agent.to_dict()
    assert "sk-SECRET" not in json.dumps(data)
    assert data["llm_config"] == {"model": "openai:gpt-x", "temperature": 0}
    assert "sk-SECRET" not in repr(agent) + repr(agent.llm)


def test_nested_auth_headers_never_reach_the_saved_file(kernel, tmp_path):
    """An Authorization header inside llm_config is dropped from to_dict() and save(); ${VAR} references stay."""
    agent = kernel.agent(qa_spec(llm_config={
        "model": "openai:gpt-x", "api_key": "${OPENAI_API_KEY}",
        "headers": {"Authorization": "Bearer sk-NESTED", "X-Trace": "on"}}))
    agent.save(tmp_path / "a.json")
    saved = (tmp_path / "a.json").read_text()
    assert "sk-NESTED" not in saved and "sk-NESTED" not in json.dumps(agent.to_dict())
    assert agent.to_dict()["llm_config"] == {"model": "openai:gpt-x", "api_key": "${OPENAI_API_KEY}",
                                             "headers": {"X-Trace": "on"}}


def test_json_file_round_trip(kernel, tmp_path):
    """save() as JSON then load() rebuilds the same declaration."""
    agent = kernel.agent(qa_spec())
    agent.save(tmp_path / "a.json")
    assert CustomizeAgent.load(tmp_path / "a.json", kernel).to_dict() == agent.to_dict()


def test_yaml_file_round_trip(kernel, tmp_path):
    """save() as YAML then load() rebuilds the same declaration."""
    pytest.importorskip("yaml")
    agent = kernel.agent(qa_spec(outputs=[{"name": "items", "type": "array", "items": {"name": "i", "type": "integer"}}],
                                 parse_mode="json"))
    agent.save(tmp_path / "a.yaml")
    assert CustomizeAgent.load(tmp_path / "a.yaml", kernel).to_dict() == agent.to_dict()


def test_template_with_structured_output_defaults_to_json(kernel):
    """With a prompt_template and an object/array output, the parse mode becomes json."""
    spec = qa_spec(prompt=None, parse_mode=None, prompt_template={"instruction": "List for {question}"},
                   outputs=[{"name": "items", "type": "array", "items": {"name": "i", "type": "string"}}])
    agent = kernel.agent(spec)
    assert agent.action().parse_mode == "json"


def test_tool_by_import_path_resolves_next_to_agent_file(kernel, tmp_path):
    """A tool named 'module:function' in a trusted agent file is imported relative to the file's folder."""
    (tmp_path / "mytools_abc.py").write_text("def shout(text: str) -> str:\n    'Shout.'\n    return text.upper()\n")
    (tmp_path / "agent.json").write_text(json.dumps(qa_spec(tools=["mytools_abc:shout"])))
    agent = CustomizeAgent.load(tmp_path / "agent.json", kernel, trust=True)
    agent.llm = kernel.llm("scripted:m", replies=[{"tool_calls": [{"name": "shout", "arguments": {"text": "hi"}}]}, "ok"])
    assert agent(question="q").tool_results[0].content == "HI"


def test_stray_braces_in_prompt_are_kept(kernel):
    """Braces in the prompt that are not inputs stay literal (JSON examples survive)."""
    agent = kernel.agent(qa_spec(prompt='Answer {question} like {"answer": "..."}'))
    assert '{"answer": "..."}' in agent.prompt_preview({"question": "q"})


def test_prompt_template_without_the_template_namespace_is_a_config_error():
    """A prompt_template on a kernel whose parsers come from a plugin without the template namespace is a
    ``ConfigError`` naming the plugin to add, not an ``AttributeError``."""
    from zagent import Kernel
    from zagent.plugins.parsers.modes import StrParser

    class OnlyStr:
        @staticmethod
        def zagent_register_parsers(register):
            register("str", StrParser())

    with Kernel(plugins=["zagent.plugins.actions", OnlyStr], entry_points=False) as k:
        with pytest.raises(ConfigError, match="prompt templates come from the parsers plugin"):
            k.agent(qa_spec(prompt=None, prompt_template={"instruction": "Answer {question}"}))
