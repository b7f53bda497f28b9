"""GenAI semantic-convention attributes, one trace per agent call, and an exit that never waits on a collector."""

import importlib
import importlib.util
import pathlib
import socket
import sys
import threading

from opentelemetry.trace import StatusCode

from zagent_otel.setup import shutdown_within

from .test_otel_otlp import run_child


def _loopback_servers():
    """The checkout's loopback servers (tests/servers), loaded by file path: this suite's ``tests`` is another package."""
    folder = pathlib.Path(__file__).resolve().parents[3] / "tests" / "servers"
    if "zagent_loopback_servers" not in sys.modules:
        spec = importlib.util.spec_from_file_location("zagent_loopback_servers", folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return importlib.import_module("zagent_loopback_servers.openai_server")


def by_name(spans, name):
    return [s for s in spans if s.name == name]


def test_a_chat_span_carries_the_request_settings_the_server_and_the_response(make_kernel, exporter):
    """temperature and max_tokens of the call, server.address/port of the base URL, response model and id."""
    k = make_kernel()
    k.add_plugin(__import__("zagent.plugins.openai", fromlist=["x"]), "openai")
    servers = _loopback_servers()
    with servers.OpenAIServer(key="sk-test") as server:
        server.then(servers.completion("hi", model="gpt-test-2026"))
        llm = k.llm("openai:gpt-test", base_url=server.url, api_key="sk-test")
        llm.complete("hello", temperature=0.25, max_tokens=64)
        port = server.port
    chat = by_name(exporter.get_finished_spans(), "chat gpt-test")[0]
    attrs = chat.attributes
    assert attrs["gen_ai.request.temperature"] == 0.25 and attrs["gen_ai.request.max_tokens"] == 64
    assert attrs["server.address"] == "127.0.0.1" and attrs["server.port"] == port
    assert attrs["gen_ai.response.model"] == "gpt-test-2026" and attrs["gen_ai.response.id"] == "chatcmpl-1"


def test_the_agent_file_s_temperature_and_max_tokens_reach_the_chat_span(make_kernel, exporter):
    """temperature and max_tokens set in an agent's llm_config (not per call) are the chat span's request settings."""
    k = make_kernel()
    k.add_plugin(__import__("zagent.plugins.openai", fromlist=["x"]), "openai")
    servers = _loopback_servers()
    with servers.OpenAIServer(key="sk-test") as server:
        server.then(servers.completion("hi"))
        agent = k.agent({"name": "Greeter", "prompt": "Greet {who}", "inputs": [{"name": "who", "type": "string"}],
                         "llm_config": {"model": "openai:gpt-test", "base_url": server.url, "api_key": "sk-test",
                                        "temperature": 0.3, "max_tokens": 50}})
        agent(who="Ada")
    attrs = by_name(exporter.get_finished_spans(), "chat gpt-test")[0].attributes
    assert attrs["gen_ai.request.temperature"] == 0.3 and attrs["gen_ai.request.max_tokens"] == 50


def test_a_tool_span_carries_the_tool_s_description(make_kernel, exporter):
    """execute_tool spans have gen_ai.tool.description from the registered tool."""
    k = make_kernel()

    def lookup(city: str) -> str:
        """Look a city up in the atlas."""
        return city

    k.add_tool(lookup)
    k.run_tool({"name": "lookup", "arguments": {"city": "Oslo"}})
    span = by_name(exporter.get_finished_spans(), "execute_tool lookup")[0]
    assert span.attributes["gen_ai.tool.description"] == "Look a city up in the atlas."


def test_a_chat_s_routing_call_is_inside_the_agent_s_trace(make_kernel, exporter):
    """agent.chat() with tools: the routing call (tools or not?) and the run share one trace under invoke_agent."""
    k = make_kernel()

    def word_count(text: str) -> int:
        """Count words."""
        return len(text.split())

    k.add_tool(word_count)
    k.agent({"type": "react", "name": "helper", "tools": ["word_count"]}).chat("How many words in 'a b'?")
    spans = exporter.get_finished_spans()
    assert len({s.context.trace_id for s in spans}) == 1
    roots = [s for s in spans if s.parent is None]
    assert [r.name for r in roots] == ["invoke_agent helper"] and roots[0].status.status_code != StatusCode.ERROR


def test_a_tool_that_raises_has_the_exception_class_as_error_type(make_kernel, exporter):
    """A tool raising ValueError: error.type is ValueError (not _OTHER)."""
    k = make_kernel()

    def picky() -> str:
        """Refuse."""
        raise ValueError("no")

    k.add_tool(picky)
    k.run_tool({"name": "picky", "arguments": {}})
    assert by_name(exporter.get_finished_spans(), "execute_tool picky")[0].attributes["error.type"] == "ValueError"


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_no_collector_gives_one_line_and_no_retry_noise():
    """ZAGENT_OTEL=1 with nothing listening: the script ends normally with one notice, no SDK retry warnings."""
    out = run_child({"ZAGENT_OTEL": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{_closed_port()}",
                     "OTEL_METRIC_EXPORT_INTERVAL": "100000"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stderr.count("zagent-otel: no OpenTelemetry collector answered") == 1
    assert "Transient error" not in out.stderr and "Traceback" not in out.stderr


class _StuckExporter:
    """An exporter whose flush waits until it is shut down (a collector that never answers)."""

    def __init__(self):
        self.stopped = threading.Event()

    def shutdown(self):
        self.stopped.set()


class _Provider:
    def __init__(self, exporter):
        self.exporter = exporter

    def shutdown(self):
        self.exporter.stopped.wait()  # returns only once the exporter was told to give up


def test_the_exit_flush_gives_up_after_its_grace():
    """shutdown_within stops exporters that are still retrying once the grace is over (it returns at all)."""
    stuck = _StuckExporter()
    shutdown_within([(_Provider(stuck), stuck)], 0.05)
    assert stuck.stopped.is_set()
