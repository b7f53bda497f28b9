"""Round seventeen, an MCP server's credentials written in its command line in the two shapes the common MCP
examples use, which round fourteen's ``--api-key VALUE`` / ``--password=VALUE`` rule did not read.

Attacks tried (both got through, fixed in ``zagent_mcp.config._flag_secrets``):

- ``docker run -e GITHUB_PERSONAL_ACCESS_TOKEN=ghp_...`` (a ``NAME=VALUE`` argument naming a credential, no
  dashes): shown as written in the server's ``target`` and ``repr``, ``zagent mcp list`` (text and ``--json``),
  an invalid entry's listing and ``attrs.asdict`` of the config
- ``mcp-remote URL --header "Authorization: Bearer ..."`` (also ``--header=X-Api-Key: ...``): the same
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("zagent_mcp")

import attrs  # noqa: E402

from zagent import Kernel  # noqa: E402
from zagent.plugins.cli import main  # noqa: E402
from zagent_mcp.config import load_settings  # noqa: E402
from zagent_mcp.plugin import runtime_of  # noqa: E402

pytestmark = pytest.mark.timeout(60)

PAT = "ghp_r17MCPDOCKERTOKEN0123456789"
BEARER = "sk-r17-MCPHEADERTOKEN-24681357"

DOCKER = {"command": "docker", "args": ["run", "-i", "--rm", "-e", f"GITHUB_PERSONAL_ACCESS_TOKEN={PAT}",
                                        "ghcr.io/github/github-mcp-server"]}
REMOTE = {"command": "npx", "args": ["mcp-remote", "https://mcp.example/sse", "--header",
                                     f"Authorization: Bearer {BEARER}"]}
REMOTE_EQ = {"command": "npx", "args": ["mcp-remote", "https://mcp.example/sse", f"--header=X-Api-Key: {BEARER}"]}


def leaked(text):
    return [s for s in (PAT, BEARER) if s in text or s[:16] in text]


def _config(spec):
    return load_settings({"mcpServers": {"s": spec}}, environ={}, env_file=False, strict=True).servers["s"]


@pytest.mark.parametrize("spec", [DOCKER, REMOTE, REMOTE_EQ], ids=["docker-e", "header", "header="])
def test_a_servers_target_repr_and_dump_hide_a_credential_in_its_command_line(spec):
    """Attack (got through): a server started as ``docker run -e NAME=<token>`` or ``mcp-remote URL --header
    "Authorization: Bearer <token>"`` showed the token in its ``target`` (every listing and error names it), its
    ``repr`` and ``attrs.asdict``. Defence: a ``NAME=VALUE`` argument naming a credential and the value of a
    ``--header`` argument whose header is secret are credentials of the command line (masked, held as
    ``Secret``); the server still starts with them as written."""
    config = _config(spec)
    shown = config.target + repr(config) + repr(attrs.asdict(config))
    assert leaked(shown) == [] and "***" in config.target
    assert config.args == tuple(spec["args"])  # started as written


@pytest.mark.parametrize("invalid", [False, True], ids=["valid", "invalid"])
def test_zagent_mcp_list_hides_a_docker_env_token(capsys, invalid):
    """Attack (got through): ``zagent mcp list`` (text and ``--json``) of a config with the docker entry, valid
    or skipped as invalid (a bad ``timeout``). Defence: as above, the token is masked in both listings."""
    entry = {**DOCKER, "command": "/nonexistent/docker"}  # listed, never started for real
    entry = {**entry, "timeout": -1} if invalid else entry
    k = Kernel(plugins=["zagent_mcp.plugin", "zagent.plugins.cli"], entry_points=False,
               config={"mcp": {"mcpServers": {"gh": entry}, "connect_timeout": 0.5}})
    try:
        rows = runtime_of(k).status(wait=False)
        capsys.readouterr()
        main(["mcp", "list"], kernel=k)
        main(["mcp", "list", "--json"], kernel=k)
        listed = capsys.readouterr().out
    finally:
        k.close()
    assert "gh" in listed and "GITHUB_PERSONAL_ACCESS_TOKEN=***" in listed
    assert leaked(json.dumps(rows, default=repr) + listed) == []


def test_plain_arguments_and_other_headers_stay_shown():
    """Over-masking guard: ``--port=8080``, ``KEYWORD:value`` and a ``--header`` that is no credential
    (``X-Trace: ...``) stay shown as written."""
    config = _config({"command": "npx", "args": ["server", "--port=8080", "keyword:value1234", "--header",
                                                 "X-Trace: trace-abcdef123456", "REGION=eu-west-1"]})
    assert config.target == "npx server --port=8080 keyword:value1234 --header X-Trace: trace-abcdef123456 " \
                            "REGION=eu-west-1"
