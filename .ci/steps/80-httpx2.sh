# The providers and the HTTP layer once more with httpx2 as the client (pip install 'zagent[httpx2]'
# makes it the default when installed). httpx2 is uninstalled afterwards, so later steps use httpx.
echo "== installing zagent[httpx2]"
if python -m pip install -q --disable-pip-version-check -e '.[httpx2]' && python -c "import httpx2" 2>/dev/null; then
    echo "== running tests/http and tests/providers with httpx2"
    status=0
    if command -v timeout >/dev/null; then
        timeout 1200 python -m pytest -q tests/http tests/providers || status=$?
    else
        python -m pytest -q tests/http tests/providers || status=$?
    fi
    python -m pip uninstall -y -q httpx2 httpcore2 >/dev/null 2>&1 || true
    [ "$status" -eq 0 ] || return "$status"
else
    echo "httpx2 could not be installed here: the httpx2 run of tests/http and tests/providers is skipped"
fi
