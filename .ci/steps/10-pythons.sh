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

# The venvs are made one after another (their editable installs write into the same tree), then the three runs go
# at once, each to its own log, printed when all have ended: on two cores that is about half the time of one after
# another (each run took up to 20 minutes here). Each has 45 minutes, as the main run.
runs=()
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
    runs+=("$want")
done
pids=()
for want in "${runs[@]}"; do
    echo "== running the tests on Python $want (log: $VENV-py$want.log)"
    if command -v timeout >/dev/null; then
        timeout 2700 "$VENV-py$want/bin/python" -m pytest -q -p no:cacheprovider > "$VENV-py$want.log" 2>&1 &
    else
        "$VENV-py$want/bin/python" -m pytest -q -p no:cacheprovider > "$VENV-py$want.log" 2>&1 &
    fi
    pids+=("$!")
done
failed=""
for i in "${!runs[@]}"; do
    rc=0
    wait "${pids[$i]}" || rc=$?
    echo "== the tests on Python ${runs[$i]} (exit $rc):"
    tail -n 40 "$VENV-py${runs[$i]}.log"
    [ "$rc" = 0 ] || failed="$failed ${runs[$i]}"
    rm -rf "$VENV-py${runs[$i]}" "$VENV-py${runs[$i]}.log"
done
if [ -n "$failed" ]; then
    echo "== the suite failed on Python$failed"
    false
fi
# the main venv's editable install points at the same tree: nothing to restore
