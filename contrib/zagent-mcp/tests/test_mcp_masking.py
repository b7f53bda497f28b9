"""Values that came from `${VAR}` in a server's command line are masked wherever the target is shown."""

import json
import logging
import sys

import zagent
from zagent import Kernel
from zagent.plugins.cli import main

from mcp_helpers import DEMO
from zagent_mcp.config import load_settings
from zagent_mcp.plugin import runtime_of

TOKEN = "tok-s3cret-4711"
TELLS_TOKEN = "import sys; print('refused token', sys.argv[1], file=sys.stderr); sys.exit(2)"


class Events:
    """A plugin that keeps every event."""

    def __init__(self):
        self.seen = []

    @zagent.hookimpl
    def zagent_event(self, event):
        self.seen.append(event)


def test_a_token_passed_in_args_never_appears_in_list_output_warnings_reprs_or_events(monkeypatch, caplog, capsys):
    """A token given as `${TOKEN}` in `args` is shown as `${TOKEN}` in the target, and scrubbed from errors
    (a server's stderr, an OS error quoting the command): never in `zagent mcp list` (text or JSON), the
    start-up warnings, reprs or events."""
    monkeypatch.setenv("ZAGENT_MCP_TEST_TOKEN", TOKEN)
    caplog.set_level(logging.DEBUG)
    events = Events()
    servers = {
        "demo": {"command": sys.executable, "args": [DEMO, "--token=${ZAGENT_MCP_TEST_TOKEN}"]},
        "teller": {"command": sys.executable, "args": ["-c", TELLS_TOKEN, "${ZAGENT_MCP_TEST_TOKEN}"]},
        "missing": {"command": "/nonexistent/${ZAGENT_MCP_TEST_TOKEN}/server"},
        "invalid": {"command": "srv", "args": ["${ZAGENT_MCP_TEST_TOKEN}", "${ZAGENT_MCP_TEST_UNSET}"]},
    }
    k = Kernel(plugins=["zagent_mcp.plugin", "zagent.plugins.cli", events], entry_points=False,
               config={"mcp": {"mcpServers": servers}})
    try:
        runtime = runtime_of(k)
        runtime.wait(None)  # servers connect in the background
        assert runtime.connections["demo"].state == "ready"
        assert runtime.connections["demo"].config.args[-1] == f"--token={TOKEN}"  # the server got the value
        assert runtime.connections["teller"].state == "failed"
        assert "refused token ***" in runtime.connections["teller"].error
        k.run_tool({"name": "demo.echo", "arguments": {"text": "hi"}})
        k.run_tool({"name": "demo.crash", "arguments": {}})
        assert main(["mcp", "list"], kernel=k) == 1
        assert main(["mcp", "list", "--json"], kernel=k) == 1
        out = capsys.readouterr().out
        assert "--token=${ZAGENT_MCP_TEST_TOKEN}" in out and "/nonexistent/${ZAGENT_MCP_TEST_TOKEN}/server" in out
        shown = [out, caplog.text, repr(runtime), str(runtime.status()), str(events.seen)]
        shown += [repr(c.config) for c in runtime.connections.values()]
        assert events.seen and all(TOKEN not in text for text in shown)
    finally:
        k.close()


def test_config_reprs_and_targets_mask_expanded_values_but_show_defaults():
    """`ServerConfig` repr/target show `${VAR}` for environment values (command, args, URL) and the
    written default for an unset `${VAR:-default}`."""
    settings = load_settings({"mcpServers": {
        "s": {"command": "srv", "args": ["--key", "${KEY}", "--mode=${MODE:-fast}"]},
        "h": {"url": "https://${HOST}/mcp/${KEY}?k=${KEY}"},
    }}, environ={"KEY": TOKEN, "HOST": "example.org"})
    s, h = settings.servers["s"], settings.servers["h"]
    assert s.args == ("--key", TOKEN, "--mode=fast")
    assert s.target == "srv --key ${KEY} --mode=fast"
    assert h.url == f"https://example.org/mcp/{TOKEN}?k={TOKEN}" and h.target == "https://${HOST}/mcp/${KEY}"
    assert TOKEN not in repr(s) + repr(h) + json.dumps([s.target, h.target])
