# contrib/zagent-otel: installs the contrib with its test extra (OpenTelemetry API/SDK, the OTLP/HTTP
# exporter and opentelemetry-proto for the loopback receiver), then runs its tests.
echo "== installing contrib/zagent-otel[test] (OpenTelemetry API/SDK, OTLP/HTTP exporter, opentelemetry-proto)"
python -m pip install -q --disable-pip-version-check -e 'contrib/zagent-otel[test]'
echo "== running the zagent-otel tests"
if command -v timeout >/dev/null; then
    timeout 300 python -m pytest -q -p no:cacheprovider contrib/zagent-otel/tests
else
    python -m pytest -q -p no:cacheprovider contrib/zagent-otel/tests
fi
echo "== running contrib/zagent-otel/README.md's blocks (tests/docs, now that zagent-otel is installed)"
python -m pytest -q -p no:cacheprovider tests/docs/test_docs_snippets.py -k "zagent-otel/README.md"
