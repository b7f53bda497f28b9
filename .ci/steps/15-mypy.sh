# mypy --strict on the kernel package (kernel/: must stay clean) and on plugins/ (as zagent.plugins), each held to
# its error count in tools/mypy_baseline.txt: a count may fall, never grow (tools/typecheck.py says how it checks).
# The contrib packages are checked by 45-mypy-contrib.sh, once their steps have installed them. mypy comes with
# the test extra; if it could not be installed, this step says so and skips.
if ! python -c "import mypy" 2>/dev/null; then
    echo "== mypy is not installed (test extra): skipping the strict type check"
else
    echo "== mypy --strict on kernel/ and plugins/ (tools/typecheck.py, counts in tools/mypy_baseline.txt)"
    (cd "$ROOT" && python tools/typecheck.py kernel plugins)
fi
