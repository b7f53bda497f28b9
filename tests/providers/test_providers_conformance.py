"""The built-in providers pass zagent's provider conformance suite (zagent.testing.providers)."""

from __future__ import annotations

import pytest

from zagent.testing.providers import ProviderTests
from tests.servers.anthropic_server import AnthropicServer
from tests.servers.ollama_server import OllamaServer
from tests.servers.openai_server import OpenAIServer
from tests.servers.responses_server import ResponsesServer


class TestTestModel(ProviderTests):
    plugins = ["zagent.plugins.offline"]
    model = "test:offline"


class TestOpenAI(ProviderTests):
    plugins = ["zagent.plugins.openai"]
    model = "openai:gpt-4o-mini"
    secret = "sk-conformance-secret"

    @pytest.fixture(autouse=True)
    def _server(self):
        with OpenAIServer(key=self.secret) as server:
            self.options = {"base_url": server.url, "api_key": self.secret, "retry_backoff": 0.001}
            yield

    def make_failing_llm(self, kernel):
        return kernel.llm(self.model, **{**self.options, "api_key": "sk-wrong"})


class TestAnthropic(ProviderTests):
    plugins = ["zagent.plugins.anthropic"]
    model = "anthropic:claude-test"
    secret = "sk-ant-conformance"

    @pytest.fixture(autouse=True)
    def _server(self):
        with AnthropicServer(key=self.secret) as server:
            self.options = {"base_url": server.url, "api_key": self.secret, "retry_backoff": 0.001}
            yield

    def make_failing_llm(self, kernel):
        return kernel.llm(self.model, **{**self.options, "api_key": "wrong"})


class TestOllama(ProviderTests):
    plugins = ["zagent.plugins.ollama"]
    model = "ollama:llama3.2"

    @pytest.fixture(autouse=True)
    def _server(self):
        with OllamaServer() as server:
            self.options = {"base_url": server.url, "retry_backoff": 0.001}
            yield

    def make_failing_llm(self, kernel):
        return kernel.llm("ollama:missing", **self.options)


class TestOpenAIResponses(ProviderTests):
    plugins = ["zagent.plugins.openai"]
    model = "openai-responses:gpt-4o-mini"
    secret = "sk-responses-conformance"

    @pytest.fixture(autouse=True)
    def _server(self):
        with ResponsesServer(key=self.secret) as server:
            self.options = {"base_url": server.url, "api_key": self.secret, "retry_backoff": 0.001}
            yield

    def make_failing_llm(self, kernel):
        return kernel.llm(self.model, **{**self.options, "api_key": "sk-wrong"})
