"""A small OTLP/HTTP receiver on 127.0.0.1 for tests: decodes what exporters POST (protobuf).

``/v1/traces`` bodies are ``ExportTraceServiceRequest`` and ``/v1/metrics`` bodies
``ExportMetricsServiceRequest`` (opentelemetry-proto); gzip bodies are inflated.
Bodies are capped at 16 MiB; anything else gets 404 / 413 / 400.
"""

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

MAX_BODY = 16 * 1024 * 1024
KINDS = {"/v1/traces": (ExportTraceServiceRequest, ExportTraceServiceResponse),
         "/v1/metrics": (ExportMetricsServiceRequest, ExportMetricsServiceResponse)}


class Receiver:
    """``with Receiver() as r:`` ... ``r.spans()``; ``r.endpoint`` is the base URL."""

    def __init__(self):
        self.requests = {"/v1/traces": [], "/v1/metrics": []}
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                kind = KINDS.get(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                if kind is None:
                    return self._reply(404, b"")
                if length > MAX_BODY:
                    return self._reply(413, b"")
                body = self.rfile.read(length)
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                message = kind[0]()
                try:
                    message.ParseFromString(body)
                except Exception:
                    return self._reply(400, b"")
                with receiver.lock:
                    receiver.requests[self.path].append(message)
                self._reply(200, kind[1]().SerializeToString())

            def _reply(self, status, body):
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def spans(self):
        """Every span received, as decoded protobuf ``Span`` messages."""
        with self.lock:
            return [span for req in self.requests["/v1/traces"] for rs in req.resource_spans
                    for ss in rs.scope_spans for span in ss.spans]

    def resources(self):
        with self.lock:
            return [{a.key: a.value.string_value for a in rs.resource.attributes}
                    for req in self.requests["/v1/traces"] for rs in req.resource_spans]

    def metric_names(self):
        with self.lock:
            return {m.name for req in self.requests["/v1/metrics"] for rm in req.resource_metrics
                    for sm in rm.scope_metrics for m in sm.metrics}


def attributes(span):
    """A protobuf span's attributes as a plain dict (string, int, bool, double, string arrays)."""
    out = {}
    for a in span.attributes:
        v = a.value
        kind = v.WhichOneof("value")
        out[a.key] = [x.string_value for x in v.array_value.values] if kind == "array_value" else getattr(v, kind)
    return out


def proto_shape(spans):
    """Like conftest.shape, for protobuf spans."""
    ids = {s.span_id for s in spans}
    by_parent = {}
    for s in spans:
        by_parent.setdefault(s.parent_span_id if s.parent_span_id in ids else None, []).append(s)

    def walk(span):
        return (span.name, sorted(walk(c) for c in by_parent.get(span.span_id, [])))

    return sorted(walk(r) for r in by_parent.get(None, []))
