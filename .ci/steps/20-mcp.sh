# contrib/zagent-mcp: installs the contrib with its test extra (the mcp SDK and
# mcp-server-time), the npm "everything" server when npm is there, then its tests.
echo "== installing contrib/zagent-mcp[test] (depends on zagent and the mcp SDK; pulls mcp-server-time)"
python -m pip install -q --disable-pip-version-check -e 'contrib/zagent-mcp[test]'
if command -v npm >/dev/null; then
    echo "== installing @modelcontextprotocol/server-everything (npm) into contrib/zagent-mcp"
    if ! (cd contrib/zagent-mcp && npm install --no-save --no-audit --no-fund --loglevel=error \
            @modelcontextprotocol/server-everything); then
        echo "npm install failed: the server-everything tests will be skipped"
        export ZAGENT_MCP_TEST_NPX=0
    fi
fi
echo "== running the zagent-mcp tests"
if command -v timeout >/dev/null; then
    timeout 1200 python -m pytest -q contrib/zagent-mcp/tests
else
    python -m pytest -q contrib/zagent-mcp/tests
fi
echo "== running contrib/zagent-mcp/README.md's blocks (tests/docs, now that zagent-mcp is installed)"
python -m pytest -q -p no:cacheprovider tests/docs/test_docs_snippets.py -k "zagent-mcp/README.md"
echo "== running the MCP attack tests of tests/security (skipped by the main suite, which has no zagent-mcp)"
python -m pytest -q -p no:cacheprovider tests/security/test_security_mcp_hostile.py \
    tests/security/test_security_url_userinfo.py tests/security/test_security_terminal.py
