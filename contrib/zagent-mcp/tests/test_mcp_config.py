"""Configuration: the `mcpServers` shape from kernel config, JSON/TOML files and ZAGENT_MCP_CONFIG."""

import json

import pytest

from zagent import ConfigError, Kernel

from mcp_helpers import demo_stdio
from zagent_mcp.config import load_settings


def test_inline_servers_are_read_from_kernel_config():
    """`config["mcp"]["mcpServers"]` holds stdio (command/args/env/cwd) and HTTP (url/headers) servers."""
    settings = load_settings({"mcpServers": {
        "local": {"command": "srv", "args": ["--x"], "env": {"TOKEN": "t"}, "cwd": "/tmp"},
        "remote": {"url": "https://example.org/mcp", "headers": {"Authorization": "Bearer t"}},
    }}, environ={})
    local, remote = settings.servers["local"], settings.servers["remote"]
    assert (local.transport, local.command, local.args, local.cwd) == ("stdio", "srv", ("--x",), "/tmp")
    assert local.env["TOKEN"].reveal() == "t"
    assert (remote.transport, remote.url) == ("http", "https://example.org/mcp")
    assert remote.headers["Authorization"].reveal() == "Bearer t"


def test_a_json_config_file_is_read(tmp_path):
    """`{"config_file": path}` reads a JSON file in the mcpServers shape."""
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "srv"}}}))
    assert list(load_settings({"config_file": str(path)}, environ={}).servers) == ["a"]


def test_a_toml_config_file_is_read(tmp_path):
    """A `.toml` file with `[mcpServers.<name>]` tables is read too."""
    path = tmp_path / "mcp.toml"
    path.write_text('[mcpServers.a]\ncommand = "srv"\nargs = ["-v"]\n\n[mcpServers.b]\nurl = "http://h/mcp"\n')
    servers = load_settings({"config_file": str(path)}, environ={}).servers
    assert servers["a"].args == ("-v",) and servers["b"].transport == "http"


def test_the_environment_variable_names_a_config_file(tmp_path):
    """ZAGENT_MCP_CONFIG names a file whose servers are added; inline servers of the same name win."""
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "from-file"}, "b": {"command": "b"}}}))
    settings = load_settings({"mcpServers": {"a": {"command": "inline"}}}, environ={"ZAGENT_MCP_CONFIG": str(path)})
    assert settings.servers["a"].command == "inline" and settings.servers["b"].command == "b"


def test_environment_variables_are_expanded():
    """`${VAR}` and `${VAR:-default}` in values come from the environment."""
    settings = load_settings({"mcpServers": {"r": {"url": "https://${HOST}/mcp",
                                                   "headers": {"Authorization": "Bearer ${TOKEN:-none}"}}}},
                             environ={"HOST": "example.org"})
    assert settings.servers["r"].url == "https://example.org/mcp"
    assert settings.servers["r"].headers["Authorization"].reveal() == "Bearer none"


def test_an_unset_variable_makes_the_entry_invalid_naming_server_variable_and_fix():
    """A `${VAR}` without value or default makes that entry invalid: the error names the server, the
    variable, the key it is used in and how to fix it; the other entries are kept."""
    settings = load_settings({"mcpServers": {"r": {"url": "https://h/${MISSING_TOKEN}"}, "ok": {"command": "srv"}}},
                             environ={})
    assert list(settings.servers) == ["ok"]
    bad = settings.invalid["r"]
    assert "'r'" in bad.error and "MISSING_TOKEN" in bad.error and "'url'" in bad.error
    assert "export MISSING_TOKEN=" in bad.error and "${MISSING_TOKEN:-" in bad.error
    assert (bad.transport, bad.target) == ("http", "https://h/${MISSING_TOKEN}")


def test_strict_loading_raises_for_an_unset_variable():
    """`strict=True` is the strict path: the first bad entry raises ConfigError naming the variable."""
    with pytest.raises(ConfigError, match="MISSING_TOKEN"):
        load_settings({"mcpServers": {"r": {"url": "https://h/${MISSING_TOKEN}"}}}, environ={}, strict=True)


def test_unknown_keys_are_refused_with_the_servers_name():
    """A typo in a server entry is an error naming the server and the key."""
    with pytest.raises(ConfigError, match=r"'a'.*comand"):
        load_settings({"mcpServers": {"a": {"comand": "srv"}}}, environ={}, strict=True)
    assert "comand" in load_settings({"mcpServers": {"a": {"comand": "srv"}}}, environ={}).invalid["a"].error


def test_sse_transport_is_refused():
    """The deprecated SSE transport is refused with what to use instead."""
    with pytest.raises(ConfigError, match="streamable HTTP"):
        load_settings({"mcpServers": {"a": {"url": "http://h/sse", "type": "sse"}}}, environ={}, strict=True)


def test_a_missing_or_unparsable_file_is_a_problem_and_the_other_sources_are_used(tmp_path):
    """An unreadable (missing) or unparsable file is reported in `problems` with its path; inline servers stay."""
    broken = tmp_path / "broken.json"
    broken.write_text('{"mcpServers": {"a": ')
    settings = load_settings({"config_file": str(broken), "mcpServers": {"ok": {"command": "srv"}}},
                             environ={"ZAGENT_MCP_CONFIG": str(tmp_path / "missing.json")})
    assert list(settings.servers) == ["ok"]
    missing, unparsable = settings.problems
    assert "missing.json" in missing and "ZAGENT_MCP_CONFIG" in missing
    assert "broken.json" in unparsable and "not valid JSON" in unparsable


def test_env_values_do_not_appear_in_reprs():
    """A stdio server's env values (API keys) are secrets: only their names are shown."""
    settings = load_settings({"mcpServers": {"a": {"command": "srv", "env": {"API_KEY": "sk-123"}}}}, environ={})
    assert "API_KEY" in repr(settings.servers["a"]) and "sk-123" not in repr(settings)


def test_disabled_servers_are_listed_but_not_started():
    """`"disabled": true` keeps a server out of the start-up, and `zagent mcp list` shows it as disabled."""
    k = Kernel(plugins=["zagent_mcp.plugin"], entry_points=False, strict=True,
               config={"mcp": {"mcpServers": {"off": {"command": "never-run", "disabled": True}}}})
    try:
        from zagent_mcp.plugin import runtime_of

        assert [(s["name"], s["state"]) for s in runtime_of(k).status()] == [("off", "disabled")]
    finally:
        k.close()


def test_in_strict_mode_a_bad_entry_is_a_plugin_problem():
    """`config["mcp"]["strict"]` (default: the kernel's `strict`) makes a bad entry a ConfigError: the plugin
    fails, and since nothing then reads `config["mcp"]`, `Kernel()` refuses it, naming the plugin's problem."""
    with pytest.raises(ConfigError, match=r"key 'mcp' is read by no loaded plugin.*plugins that failed: .*'a'"):
        Kernel(plugins=["zagent_mcp.plugin"], entry_points=False,
               config={"mcp": {"strict": True, "mcpServers": {"a": {"url": "ftp://nope"}, "demo": demo_stdio()}}})
