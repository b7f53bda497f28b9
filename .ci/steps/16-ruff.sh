# ruff check (config: [tool.ruff] in pyproject.toml) on the package, its tests, benchmarks, examples and tools. ruff
# comes with the test extra; if it could not be installed, this step says so and skips.
if ! python -m ruff --version >/dev/null 2>&1; then
    echo "== ruff is not installed (test extra): skipping the lint"
else
    echo "== ruff check on kernel, plugins, contrib, tests, bench, examples and tools"
    (cd "$ROOT" && python -m ruff check kernel plugins contrib tests bench examples tools)
fi
