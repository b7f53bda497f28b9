# contrib/zagent-ray: installs the contrib with its test extra (pulls Ray), then runs its tests on a
# local Ray with 2 CPUs. Ray publishes wheels for a limited set of platforms and Python versions:
# when it cannot be installed here, the step says so in one line and skips.
echo "== installing contrib/zagent-ray[test] (depends on zagent and ray)"
if ! python -m pip install -q --disable-pip-version-check -e 'contrib/zagent-ray[test]'; then
    echo "skipping the zagent-ray tests: ray cannot be installed for $(python -V 2>&1) on $(uname -m)"
else
    echo "== running the zagent-ray tests"
    if command -v timeout >/dev/null; then
        timeout 600 python -m pytest -q contrib/zagent-ray/tests
    else
        python -m pytest -q contrib/zagent-ray/tests
    fi
    echo "== running contrib/zagent-ray/README.md's blocks (tests/docs)"
    python -m pytest -q -p no:cacheprovider tests/docs/test_docs_snippets.py -k "zagent-ray/README.md"
fi
