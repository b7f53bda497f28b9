"""Attack: a spec's ``llm_config`` numbers are resources (``timeout: 1e9``, ``max_retries: 10**6``) or garbage
(NaN, inf, a bool, a string), and its ``prices`` would distort the cost the app reports and budgets.

Every provider's model is made through the kernel's model factory, which bounds an untrusted spec's numbers
(``zagent.speckit.sizes.LLM_NUMBERS``) and refuses its ``prices`` before the provider sees them: a
``ConfigError`` at load naming the key and the range, nothing built, nothing sent.
"""

import pytest

from zagent import ConfigError

from .conftest import agent_spec, make_kernel

PROVIDERS = ["zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama", "zagent.plugins.fallback"]
MODELS = ["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku", "ollama:llama3.2", "test:offline",
          ["test:offline", "openai:gpt-4o-mini"], "record:test:offline"]
BAD = [("timeout", float("nan")), ("timeout", float("inf")), ("timeout", 1e9), ("timeout", -1), ("timeout", None),
       ("timeout", {"connect": 5, "read": 1e9}), ("read_timeout", None), ("deadline", 1e12),
       ("max_retries", 10**6), ("max_retries", -1), ("max_retries", True), ("max_retries", 2.5),
       ("retry_max_wait", 1e9), ("max_connections", 10**6), ("max_response_bytes", 2**40),
       ("temperature", float("nan")), ("temperature", "hot"), ("temperature", -1), ("max_tokens", 10**12),
       ("max_tokens", -5), ("max_tokens", "many"), ("top_p", True), ("top_p", 7), ("n", 1000),
       ("extra_body", {"max_tokens": 10**12}), ("options", {"num_ctx": 10**12}),
       ("thinking", {"type": "enabled", "budget_tokens": 10**12})]


@pytest.fixture
def kernel(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-user")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-user")
    monkeypatch.chdir(tmp_path)
    k = make_kernel(config={"spec_paths": [str(tmp_path)]}, plugins=PROVIDERS)
    yield k
    k.close()


def config_of(model, key, value):
    config = {"model": model, key: value}
    if isinstance(model, str) and model.startswith("record:"):
        config["path"] = "run.jsonl"
    return config


@pytest.mark.parametrize("model", MODELS, ids=str)
@pytest.mark.parametrize("key, value", BAD, ids=lambda v: repr(v)[:30])
def test_a_bad_number_in_llm_config_is_a_config_error_naming_key_and_range(kernel, model, key, value):
    """Each bad llm_config number, for every provider wrapper, is refused at load, naming the key and range."""
    with pytest.raises(ConfigError, match=r"must be a (whole )?number from .* to .*, got"):
        kernel.agent(agent_spec(llm_config=config_of(model, key, value)))


def test_the_error_names_the_key_and_the_range(kernel):
    """``timeout: 1e9`` says which key, the allowed range and how to set more."""
    with pytest.raises(ConfigError) as err:
        kernel.agent(agent_spec(llm_config={"model": "openai:gpt-4o-mini", "timeout": 1e9}))
    assert "timeout must be a number from 0.001 to 3600, got 1000000000.0" in str(err.value)
    assert "ZAGENT_TIMEOUT" in str(err.value) and "--trust" in str(err.value)


def test_a_fallback_entry_with_a_bad_number_is_refused(kernel):
    """A fallback chain entry's own ``max_retries: 10**6`` is refused like a top-level one."""
    with pytest.raises(ConfigError, match=r"models\[0\]\.max_retries must be a whole number from 0 to 10"):
        kernel.agent(agent_spec(llm_config={"model": [{"model": "openai:gpt-4o-mini", "max_retries": 10**6},
                                                      "test:offline"]}))


@pytest.mark.parametrize("model", MODELS, ids=str)
def test_a_spec_setting_its_own_prices_is_refused(kernel, model):
    """``prices: [0, 0]`` in a spec (cost reported as zero, usage_limits cost budget escaped) is refused."""
    with pytest.raises(ConfigError, match="prices"):
        kernel.agent(agent_spec(llm_config=config_of(model, "prices", [0, 0])))


def test_a_trusted_spec_and_python_code_set_any_value(kernel):
    """Python code and ``trust=True`` set prices and large numbers (the app's own choice)."""
    kernel.llm("openai:gpt-4o-mini", timeout=7200, prices=[1, 2], max_retries=20)
    kernel.agent(agent_spec(llm_config={"model": "openai:gpt-4o-mini", "timeout": 7200, "prices": [1, 2]}),
                 trust=True)


def test_ordinary_values_still_load(kernel):
    """Values inside the ranges load for every provider."""
    for model in MODELS:
        kernel.agent(agent_spec(llm_config={**config_of(model, "timeout", 60), "max_retries": 3,
                                            "temperature": 0.2, "top_p": 0.9, "max_tokens": 4096,
                                            "timeout": {"connect": 5, "read": 300}} | (
            {} if not isinstance(model, str) or not model.startswith("record:") else {"path": "run.jsonl"})))


def test_a_schema_property_named_like_an_option_is_not_checked(kernel):
    """A ``response_format`` schema in extra_body whose property is ``n`` or ``max_tokens`` loads (not an option)."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "max_tokens": {"type": "string"}}}
    kernel.agent(agent_spec(llm_config={"model": "openai:gpt-4o-mini", "extra_body": {
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}}}))
