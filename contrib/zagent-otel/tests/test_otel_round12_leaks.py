"""Round twelve, leaks into OTel spans: a key a hostile server echoes in a form no ``Masker`` lists (every byte
percent-encoded, hex) reached a span's status and ``error`` event through the provider error; a tool's error
quoting a secret environment value as ``\\u`` escapes likewise. Both got through before the fix
(``mask_pieces`` reads error texts decoded too)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from zagent import Kernel, ZagentError

KEY = "sk-r12-OTELKEY-0123456789abcdef"


class _Refusing:
    """``with _Refusing(message) as url:`` a server on 127.0.0.1 answering every POST 401 with ``message``."""

    def __init__(self, message):
        body = json.dumps({"error": {"message": message}}).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(401)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def _spans(exporter):
    return json.dumps([{"name": s.name, "attributes": dict(s.attributes or {}), "status": s.status.description,
                        "events": [dict(e.attributes or {}) for e in s.events]} for s in exporter.get_finished_spans()])


@pytest.mark.parametrize("form", ["".join(f"%{b:02X}" for b in KEY.encode()), KEY.encode().hex()],
                         ids=["percent", "hex"])
def test_a_key_a_server_echoes_encoded_is_not_in_the_spans(tracer_provider, exporter, form):
    """Attack: a 401 quoting the key with every byte percent-encoded (or hex); the failed call's span keeps the
    error text. Defence: masked before it reaches the span (got through before)."""
    k = Kernel(["zagent.plugins.openai", "zagent_otel.plugin"], entry_points=False,
               config={"otel": {"tracer_provider": tracer_provider, "capture_content": True}})
    try:
        with _Refusing(f"bad key {form}") as url:
            with pytest.raises(ZagentError):
                k.llm("openai:gpt-x", base_url=url, api_key=KEY, max_retries=0).complete("hi")
    finally:
        k.close()
    recorded = _spans(exporter)
    assert "bad key" in recorded
    assert form[:30] not in recorded and KEY not in recorded


def test_a_tool_error_quoting_an_environment_key_as_u_escapes_is_not_in_the_spans(tracer_provider, exporter,
                                                                                  monkeypatch):
    """Attack: a tool fails with a message quoting ``OPENAI_API_KEY`` as ``\\uXXXX`` escapes (a library printing
    JSON it escaped). Defence: the span's error and content are masked (got through before)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    form = "".join(f"\\u{ord(c):04x}" for c in KEY)

    def call_api() -> str:
        """Call the API."""
        raise RuntimeError(f'refused: {{"key": "{form}"}}')

    k = Kernel(["zagent_otel.plugin"], entry_points=False,
               config={"otel": {"tracer_provider": tracer_provider, "capture_content": True}})
    k.add_tool(call_api)
    try:
        k.run_tool({"name": "call_api", "arguments": {}})
    finally:
        k.close()
    recorded = _spans(exporter)
    assert "refused" in recorded
    assert form[:36] not in recorded and form[:36].replace("\\", "\\\\") not in recorded
