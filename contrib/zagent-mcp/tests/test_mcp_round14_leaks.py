"""Round fourteen, an MCP server's credentials written as literals in its entry (``--api-key VALUE``,
``--password=VALUE``, a URL's password in ``args``, ``user:password@`` or ``?api_key=`` in ``url``), shown where
the masked ``target`` is not used.

Got through before the fix: an entry skipped as invalid (a bad ``timeout``, an unknown key) listed its command
line and URL as written in ``status()`` and ``zagent mcp list`` (text and ``--json``); ``attrs.asdict`` and
``msgspec.to_builtins`` of a ``ServerConfig`` or of the runtime's ``McpSettings`` (an app's debug dump) showed its
``args``, ``url`` and ``shown`` as written. Held: a valid server's ``target``, ``repr`` and the values it is started
with.
"""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("zagent_mcp")

import attrs  # noqa: E402
import msgspec  # noqa: E402

from zagent import Kernel  # noqa: E402
from zagent.plugins.cli import main  # noqa: E402
from zagent_mcp.config import load_settings  # noqa: E402
from zagent_mcp.plugin import runtime_of  # noqa: E402

FLAG = "tk-r14-MCPFLAGTOKEN-5544332211"
PW = "pw-r14-MCPURLPASS-887766"
QK = "qk-r14-MCPQUERYKEY-13579"


def leaked(text):
    return [s for s in (FLAG, PW, QK) if s in text]


def _status(servers, capsys=None):
    """``(status rows, zagent mcp list, zagent mcp list --json)`` of a kernel with ``servers`` (none connects)."""
    k = Kernel(plugins=["zagent_mcp.plugin", "zagent.plugins.cli"], entry_points=False,
               config={"mcp": {"mcpServers": servers}})
    try:
        rows = runtime_of(k).status(wait=False)
        listed = ""
        if capsys is not None:
            capsys.readouterr()
            main(["mcp", "list"], kernel=k)
            main(["mcp", "list", "--json"], kernel=k)
            listed = capsys.readouterr().out
    finally:
        k.close()
    return rows, listed


@pytest.mark.parametrize("args", [["server", "--api-key", FLAG], ["server", f"--password={FLAG}"],
                                  ["server", "--db", f"postgres://app:{PW}@db.example/x"]],
                         ids=["flag", "flag=value", "url-arg"])
def test_an_invalid_stdio_servers_listing_hides_its_literal_credentials(args, capsys):
    """Attack: an entry with a literal ``--api-key VALUE`` (or ``--password=VALUE``, or a database URL's password)
    in ``args`` and a bad ``timeout``: it is skipped, and ``status()`` and ``zagent mcp list`` showed its command
    line as written, while a valid server's target masks the same values. Defence: an invalid entry's target is
    masked the same way (got through before)."""
    rows, listed = _status({"bad": {"command": "npx", "args": args, "timeout": -1}}, capsys)
    [row] = rows
    assert row["state"] == "invalid" and row["target"].startswith("npx server")
    assert "timeout" in row["error"] and "bad" in listed
    assert leaked(json.dumps(rows) + listed) == []


@pytest.mark.parametrize("url", [f"https://bob:{PW}@mcp.example/mcp", f"https://{PW}@mcp.example/mcp?api_key={QK}"],
                         ids=["user:password", "token@"])
def test_an_invalid_http_servers_listing_hides_its_url_credentials(url, capsys):
    """Attack: an HTTP entry whose ``url`` carries ``user:password@`` (or a bare token), with an unknown key:
    the listing cut the query string but kept the userinfo. Defence: masked (got through before)."""
    rows, listed = _status({"bad": {"url": url, "bogus": 1}}, capsys)
    assert rows[0]["state"] == "invalid" and "mcp.example/mcp" in rows[0]["target"]
    assert leaked(json.dumps(rows) + listed) == []


STDIO = {"command": sys.executable, "args": ["server.py", "--api-key", FLAG, f"--db=postgres://app:{PW}@db/x",
                                             "--verbose"]}
HTTP = {"url": f"https://bob:{PW}@mcp.example/mcp?api_key={QK}&region=eu", "headers": {"X-Region": "eu"}}


def _config(spec):
    return load_settings({"mcpServers": {"s": spec}}, environ={}, env_file=False, strict=True).servers["s"]


@pytest.mark.parametrize("spec", [STDIO, HTTP], ids=["stdio", "http"])
@pytest.mark.parametrize("how", ["asdict", "builtins", "json"])
def test_a_server_config_dumped_shows_no_literal_credential(spec, how):
    """Attack: ``attrs.asdict`` / ``msgspec.to_builtins`` / ``msgspec.json.encode`` of a ``ServerConfig`` (an app's
    debug dump of its MCP setup): ``env`` and ``headers`` were ``Secret``, but ``args``, ``url`` and ``shown`` held
    ``--api-key VALUE``, a URL's password and ``?api_key=`` as written. Defence: the parts holding a credential
    are held as ``Secret`` (msgspec leaves them out); public parts stay (got through before)."""
    config = _config(spec)
    dump = {"asdict": lambda o: repr(attrs.asdict(o)),
            "builtins": lambda o: repr(msgspec.to_builtins(o, enc_hook=repr)),
            "json": lambda o: msgspec.json.encode(o, enc_hook=repr).decode()}[how]
    text = dump(config)
    assert leaked(text) == []
    assert "transport" in text and ("X-Region" in text or spec is STDIO)
    assert "--verbose" in text or how != "asdict" or spec is HTTP


def test_the_runtimes_settings_dumped_show_no_literal_credential():
    """Attack: ``attrs.asdict(runtime_of(k).settings)``: every server's config, valid or not. Defence: as above
    (got through before)."""
    k = Kernel(plugins=["zagent_mcp.plugin"], entry_points=False, config={"mcp": {"mcpServers": {
        "a": STDIO, "b": {**HTTP, "timeout": -1}}}})
    try:
        settings = runtime_of(k).settings
        text = repr(attrs.asdict(settings)) + repr(msgspec.to_builtins(settings, enc_hook=repr))
    finally:
        k.close()
    assert leaked(text) == [] and "--verbose" in text


def test_a_server_config_still_starts_with_the_literal_values():
    """Guard: what the config shows masked is what the server is started with (``args`` and ``url`` as
    written), and its ``target`` and ``repr`` are as before."""
    stdio, http = _config(STDIO), _config(HTTP)
    assert stdio.args == ("server.py", "--api-key", FLAG, f"--db=postgres://app:{PW}@db/x", "--verbose")
    assert http.url == HTTP["url"]
    assert stdio.target.startswith(f"{sys.executable} server.py --api-key ***") and "--verbose" in stdio.target
    assert http.target == "https://***@mcp.example/mcp"
    assert leaked(repr(stdio) + repr(http) + stdio.target + http.target) == []
    again = attrs.evolve(stdio, timeout=5)  # ``args`` given back by its init name: held again, same values
    assert again.args == stdio.args and again.timeout == 5 and again.target == stdio.target
