# mypy --strict on the kernel modules listed in .ci/mypy-strict.txt (those made clean so far; later work extends
# the list). mypy comes with the test extra; if it could not be installed, this step says so and skips.
if ! python -c "import mypy" 2>/dev/null; then
    echo "== mypy is not installed (test extra): skipping the strict type check"
else
    mapfile -t strict_modules < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$ROOT/.ci/mypy-strict.txt" | grep -v '^$')
    echo "== mypy --strict on ${#strict_modules[@]} kernel modules (.ci/mypy-strict.txt)"
    (cd "$ROOT" && python -m mypy --strict --follow-imports=silent --no-incremental "${strict_modules[@]}")
fi
