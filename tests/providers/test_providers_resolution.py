"""Providers resolve through the kernel: a third party's provider plugin, and ZAGENT_MODEL switching backends."""

from __future__ import annotations

import sys
import textwrap

import attrs
import pytest

from zagent import LLM, Completion, Kernel, Message

THIRD_PARTY = '''
"""A throwaway third-party provider plugin: answers in upper case."""
import attrs
from zagent import LLM, Completion, Message


@attrs.define(repr=False, eq=False, kw_only=True)
class ShoutLLM(LLM):
    async def _acomplete(self, request):
        return Completion(message=Message.assistant(request.messages[-1].content.upper()), finish_reason="stop")


def zagent_register_providers(register):
    register("shout", lambda model, **options: ShoutLLM(provider="shout", model=model))
'''


@attrs.define(repr=False, eq=False, kw_only=True)
class EchoLLM(LLM):
    async def _acomplete(self, request):
        return Completion(message=Message.assistant(f"{self.model} says {request.messages[-1].content}"))


class EchoPlugin:
    """A provider plugin passed as an object, as an embedding app would."""

    @staticmethod
    def zagent_register_providers(register):
        register("echo", lambda model, **options: EchoLLM(provider="echo", model=model))


def test_third_party_plugin_object_resolves():
    """A plugin object registering a provider makes k.llm('echo:...') resolve to it."""
    with Kernel(plugins=[EchoPlugin], entry_points=False) as k:
        assert k.llm("echo:parrot").complete("hi").text == "parrot says hi"


def test_third_party_distribution_resolves_through_entry_points(tmp_path, monkeypatch):
    """A distribution on sys.path with a zagent entry point provides 'shout:' to a plain Kernel()."""
    (tmp_path / "zagent_shout.py").write_text(THIRD_PARTY)
    dist = tmp_path / "zagent_shout-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: zagent-shout\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[zagent]\nshout = zagent_shout\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("ZAGENT_PLUGINS", "shout,offline")
    with Kernel() as k:
        info = {p.name: p for p in k.plugins()}["shout"]
        assert (info.distribution, info.version) == ("zagent_shout", "0.1.0")
        assert k.llm("shout:any").complete("quiet please").text == "QUIET PLEASE"
    sys.modules.pop("zagent_shout", None)


def test_zagent_model_switches_the_backend(monkeypatch):
    """ZAGENT_MODEL picks the provider and model of k.llm() without code changes."""
    with Kernel(plugins=[EchoPlugin, "zagent.plugins.offline"], entry_points=False) as k:
        monkeypatch.setenv("ZAGENT_MODEL", "echo:owl")
        assert k.llm().complete("hoot").text == "owl says hoot"
        monkeypatch.setenv("ZAGENT_MODEL", "test:offline")
        assert k.llm().name == "test:offline"


def test_zagent_model_selects_openai_with_its_env(monkeypatch):
    """ZAGENT_MODEL=openai:... with OPENAI_BASE_URL/OPENAI_API_KEY talks to that server."""
    from tests.servers.openai_server import OpenAIServer

    with OpenAIServer(key="sk-env") as server, \
            Kernel(plugins=["zagent.plugins.openai"], entry_points=False) as k:
        monkeypatch.setenv("ZAGENT_MODEL", "openai:gpt-4o-mini")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
        assert k.llm().complete("hello").text == "echo: hello"
    assert server.requests[0].json["model"] == "gpt-4o-mini"


def test_unknown_provider_lists_installed_ones():
    """An unknown provider prefix is a ConfigError that lists the installed providers."""
    from zagent import ConfigError

    with Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.openai"], entry_points=False) as k:
        with pytest.raises(ConfigError, match="openai, openai-responses, record, replay, scripted, test"):
            k.llm("nope:model")


def test_plugins_import_without_httpx():
    """Importing the provider plugins does not import httpx (it loads with the first model)."""
    import subprocess

    code = textwrap.dedent("""
        import sys
        import zagent.plugins.openai, zagent.plugins.anthropic, zagent.plugins.ollama, zagent.plugins.offline
        from zagent import Kernel
        Kernel(plugins=["zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama",
                        "zagent.plugins.offline"], entry_points=False)
        print("httpx" in sys.modules, "asyncio" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[0] == "False"
