# mypy --strict on the whole kernel package (kernel/: the core, the agent kit, the provider kit and the testing
# kit), so a new or moved module is checked without being listed anywhere. mypy comes with the test extra; if it
# could not be installed, this step says so and skips.
if ! python -c "import mypy" 2>/dev/null; then
    echo "== mypy is not installed (test extra): skipping the strict type check"
else
    echo "== mypy --strict on the kernel package (kernel/)"
    (cd "$ROOT" && python -m mypy --strict --no-incremental kernel)
fi
