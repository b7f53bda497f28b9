# The suite on the other supported Pythons (3.10, the oldest we claim, 3.12, and 3.13, the newest): a fresh venv for
# each with zagent[test], then the same test command. A failure on any of them fails CI. An interpreter that is
# not installed on this machine is reported in one line and skipped (pyenv versions lists what is there).
find_python() {
    local want="$1" found=""
    if command -v pyenv >/dev/null; then
        found="$(pyenv root)/versions/$(pyenv versions --bare 2>/dev/null | grep -E "^${want//./\\.}(\.[0-9]+)?$" | sort -V | tail -1)/bin/python"
    fi
    if [ ! -x "$found" ]; then
        found="$(command -v "python$want" || true)"
    fi
    [ -n "$found" ] && [ -x "$found" ] && echo "$found"
}

for want in 3.10 3.12 3.13; do
    py="$(find_python "$want" || true)"
    if [ -z "$py" ]; then
        echo "== Python $want is not installed here: skipping its run of the suite"
        continue
    fi
    venv="$VENV-py$want"
    echo "== Python $want ($py): creating $venv and installing zagent[test]"
    "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -e '.[test]'
    echo "== running the tests on Python $want"
    if command -v timeout >/dev/null; then
        timeout 1200 "$venv/bin/python" -m pytest -q -p no:cacheprovider
    else
        "$venv/bin/python" -m pytest -q -p no:cacheprovider
    fi
    rm -rf "$venv"
done
# the main venv's editable install points at the same tree: nothing to restore
