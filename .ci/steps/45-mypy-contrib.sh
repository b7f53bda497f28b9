# mypy --strict on each contrib package that the steps before this one installed (20-mcp, 30-otel, 40-ray: a
# package's own dependencies come with it), held to its count in tools/mypy_baseline.txt (0: clean). A package
# that is not installed here is named in one line and skipped; so is the whole step without mypy.
if ! python -c "import mypy" 2>/dev/null; then
    echo "== mypy is not installed (test extra): skipping the contrib type check"
else
    echo "== mypy --strict on the installed contrib packages (tools/typecheck.py contrib)"
    (cd "$ROOT" && python tools/typecheck.py contrib)
fi
