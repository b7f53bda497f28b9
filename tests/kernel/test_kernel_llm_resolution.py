"""``k.llm("provider:model")``: resolution, defaults and errors that name what is installed."""

import types

import pytest

from zagent import LLM, ConfigError, Kernel


class FakeLLM(LLM):
    """A provider model that records its options."""


def provider_plugin(name="fake"):
    mod = types.ModuleType(f"{name}_provider")
    mod.zagent_register_providers = lambda register: register(
        name, lambda model, **opts: FakeLLM(provider=name, model=model, **opts))
    return mod


def test_resolves_provider_and_model():
    """``provider:model`` calls the provider's factory with the model name."""
    llm = Kernel([provider_plugin()], entry_points=False).llm("fake:model-x")
    assert (llm.provider, llm.model) == ("fake", "model-x")


def test_same_spec_returns_same_instance():
    """The same spec and options return the same instance, so connections are reused."""
    k = Kernel([provider_plugin()], entry_points=False)
    assert k.llm("fake:m") is k.llm("fake:m") and k.llm("fake:m") is not k.llm("fake:other")


def test_unknown_provider_names_installed_ones():
    """An unknown provider raises ``ConfigError`` naming the installed providers."""
    k = Kernel([provider_plugin("alpha"), provider_plugin("beta")], entry_points=False)
    with pytest.raises(ConfigError, match="Installed providers: alpha, beta"):
        k.llm("gamma:x")


def test_missing_prefix_says_how_to_write_it():
    """A model without ``provider:`` raises ``ConfigError`` showing the expected form."""
    with pytest.raises(ConfigError, match="provider:model"):
        Kernel([provider_plugin()], entry_points=False).llm("gpt-4o-mini")


def test_zagent_model_is_the_default(monkeypatch):
    """Without a spec, ``ZAGENT_MODEL`` names the model."""
    monkeypatch.setenv("ZAGENT_MODEL", "fake:from-env")
    assert Kernel([provider_plugin()], entry_points=False).llm().model == "from-env"


def test_config_model_beats_environment(monkeypatch):
    """``Kernel(config={"model": ...})`` wins over ``ZAGENT_MODEL``."""
    monkeypatch.setenv("ZAGENT_MODEL", "fake:from-env")
    k = Kernel([provider_plugin()], entry_points=False, config={"model": "fake:from-config"})
    assert k.llm().model == "from-config"


def test_profile_overrides_from_config():
    """Per-model profile overrides in config change the model's capability profile."""
    k = Kernel([provider_plugin()], entry_points=False, config={"profiles": {"fake:m": {"native_tools": False}}})
    assert k.llm("fake:m").profile.native_tools is False
