"""Reading MCP server configuration: the common ``mcpServers`` shape, from JSON or TOML.

Sources, merged in this order (a later server of the same name replaces an
earlier one):

1. the file named by the environment variable ``ZAGENT_MCP_CONFIG``;
2. ``kernel.config["mcp"]["config_file"]``;
3. ``kernel.config["mcp"]["mcpServers"]`` given inline.

A file holds ``{"mcpServers": {name: server, ...}}`` (``servers`` and
``mcp_servers`` are accepted too, as VS Code and Codex write them). A server
is either stdio (``command``, ``args``, ``env``, ``cwd``) or streamable HTTP
(``url``, ``headers``). ``${VAR}`` and ``${VAR:-default}`` in those values are
taken from the environment, so secrets can stay out of the file.

This module only reads and validates; it never connects. Header and env
values are kept as ``zagent.Secret`` and never appear in reprs or logs.
"""

from __future__ import annotations

import os
import re
from typing import Any, Mapping, Optional

import attrs

from zagent import ConfigError, Secret

ENV_VAR = "ZAGENT_MCP_CONFIG"
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_CALL_TIMEOUT = 60.0
_SERVER_KEYS = ("mcpServers", "servers", "mcp_servers")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_KNOWN = {"command", "args", "env", "cwd", "url", "headers", "type", "transport", "disabled", "timeout",
          "connect_timeout", "tools", "stderr", "description"}


@attrs.frozen(repr=False)
class ServerConfig:
    """One MCP server as configured.

    :ivar name: the key in ``mcpServers``; also the toolset and the tool-name prefix.
    :ivar transport: ``"stdio"`` or ``"http"`` (streamable HTTP).
    :ivar env: extra environment for a stdio server (values are secrets).
    :ivar headers: HTTP headers (values are secrets).
    :ivar timeout: seconds a tool call may take (the zagent ``Tool.timeout``).
    :ivar connect_timeout: seconds to start, initialize and list tools.
    :ivar tools: if given, only these MCP tool names are registered.
    :ivar stderr: a stdio server's stderr: ``"capture"`` (kept for error
        reports), ``"inherit"`` (this process's stderr) or ``"devnull"``.
    """

    name: str
    transport: str
    command: Optional[str] = None
    args: tuple[str, ...] = ()
    env: Mapping[str, Secret] = attrs.field(factory=dict)
    cwd: Optional[str] = None
    url: Optional[str] = None
    headers: Mapping[str, Secret] = attrs.field(factory=dict)
    timeout: Optional[float] = DEFAULT_CALL_TIMEOUT
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    tools: Optional[tuple[str, ...]] = None
    stderr: str = "capture"

    @property
    def target(self) -> str:
        """What to show a user: the command line, or the URL without its query string."""
        if self.transport == "stdio":
            return " ".join([self.command or "", *self.args])
        return (self.url or "").split("?", 1)[0]

    def __repr__(self) -> str:
        extra = f" headers={sorted(self.headers)}" if self.headers else ""
        extra += f" env={sorted(self.env)}" if self.env else ""
        return f"<ServerConfig {self.name!r} {self.transport} {self.target!r}{extra}>"


@attrs.frozen
class McpSettings:
    """The whole ``mcp`` section: servers plus the options that apply to all of them."""

    servers: dict[str, ServerConfig]
    disabled: tuple[str, ...] = ()
    separator: str = "."


def load_settings(section: Any, environ: Optional[Mapping[str, str]] = None, *, env_file: bool = True) -> McpSettings:
    """Build ``McpSettings`` from ``kernel.config["mcp"]`` (may be ``None``) and ``ZAGENT_MCP_CONFIG``.

    ``environ`` (default ``os.environ``) supplies ``${VAR}`` values; ``env_file=False``
    ignores ``ZAGENT_MCP_CONFIG``.
    """
    environ = os.environ if environ is None else environ
    if section is None:
        section = {}
    if isinstance(section, (str, os.PathLike)):
        section = {"config_file": os.fspath(section)}
    if not isinstance(section, Mapping):
        raise ConfigError(f"config['mcp'] must be a mapping, got {type(section).__name__}")
    raw: dict[str, Any] = {}
    if env_file and environ.get(ENV_VAR):
        raw.update(_servers_of(read_file(environ[ENV_VAR]), environ[ENV_VAR]))
    if section.get("config_file"):
        raw.update(_servers_of(read_file(os.fspath(section["config_file"])), section["config_file"]))
    raw.update(_servers_of(section, "config['mcp']"))
    defaults = {
        "timeout": section.get("call_timeout", DEFAULT_CALL_TIMEOUT),
        "connect_timeout": section.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT),
    }
    servers: dict[str, ServerConfig] = {}
    disabled: list[str] = []
    for name, spec in raw.items():
        if isinstance(spec, Mapping) and spec.get("disabled"):
            disabled.append(name)
            continue
        servers[name] = parse_server(name, spec, defaults, environ)
    separator = section.get("name_separator", ".")
    if not isinstance(separator, str) or not re.fullmatch(r"[A-Za-z0-9_.\-]{1,4}", separator):
        raise ConfigError(f"config['mcp']['name_separator'] must be 1-4 of letters, digits, '_', '.', '-'; "
                          f"got {separator!r}")
    return McpSettings(servers=servers, disabled=tuple(disabled), separator=separator)


def read_file(path: str) -> dict[str, Any]:
    """A JSON or TOML (``.toml``) configuration file as a dict."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ConfigError(f"cannot read MCP configuration {path!r}: {exc}") from None
    if path.endswith(".toml"):
        try:
            import tomllib
        except ImportError:  # Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        try:
            parsed = tomllib.loads(data.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"MCP configuration {path!r} is not valid TOML: {exc}") from None
    else:
        import msgspec

        try:
            parsed = msgspec.json.decode(data)
        except msgspec.DecodeError as exc:
            raise ConfigError(f"MCP configuration {path!r} is not valid JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise ConfigError(f"MCP configuration {path!r} must hold an object with 'mcpServers'")
    return parsed


def _servers_of(data: Mapping[str, Any], where: Any) -> dict[str, Any]:
    for key in _SERVER_KEYS:
        if key in data:
            servers = data[key]
            if not isinstance(servers, Mapping):
                raise ConfigError(f"{where}: '{key}' must map server names to servers")
            return dict(servers)
    return {}


def parse_server(name: str, spec: Any, defaults: Mapping[str, Any], environ: Mapping[str, str]) -> ServerConfig:
    """Validate one server entry; errors name the server and the key."""
    where = f"MCP server {name!r}"
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]{0,63}", name):
        raise ConfigError(f"{where}: a server name is 1-64 letters, digits, '_' or '-', starting with a letter")
    if not isinstance(spec, Mapping):
        raise ConfigError(f"{where}: expected a mapping with 'command' or 'url', got {type(spec).__name__}")
    unknown = sorted(set(spec) - _KNOWN)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_KNOWN))}")
    kind = str(spec.get("type") or spec.get("transport") or ("http" if "url" in spec else "stdio")).lower()
    if kind in ("http", "streamable-http", "streamable_http", "streamablehttp"):
        transport = "http"
    elif kind == "stdio":
        transport = "stdio"
    else:
        raise ConfigError(f"{where}: transport {kind!r} is not supported; use stdio (command) or "
                          "streamable HTTP (url, type 'http')")
    common = dict(
        name=name, transport=transport,
        timeout=_seconds(spec.get("timeout", defaults["timeout"]), where, "timeout", allow_none=True),
        connect_timeout=_seconds(spec.get("connect_timeout", defaults["connect_timeout"]), where, "connect_timeout"),
        tools=_strings(spec["tools"], where, "tools") if spec.get("tools") is not None else None,
        stderr=_choice(spec.get("stderr", "capture"), where),
    )
    if transport == "stdio":
        if not isinstance(spec.get("command"), str) or not spec["command"]:
            raise ConfigError(f"{where}: a stdio server needs 'command' (and optionally args, env, cwd)")
        return ServerConfig(
            command=_expand(spec["command"], environ), args=tuple(_expand(a, environ) for a in
                                                                  _strings(spec.get("args", []), where, "args")),
            env={k: Secret(_expand(v, environ)) for k, v in _mapping(spec.get("env"), where, "env").items()},
            cwd=_expand(spec["cwd"], environ) if spec.get("cwd") else None, **common)
    if not isinstance(spec.get("url"), str) or not spec["url"].startswith(("http://", "https://")):
        raise ConfigError(f"{where}: an HTTP server needs 'url' starting with http:// or https://")
    return ServerConfig(url=_expand(spec["url"], environ), **common,
                        headers={k: Secret(_expand(v, environ))
                                 for k, v in _mapping(spec.get("headers"), where, "headers").items()})


def _expand(value: str, environ: Mapping[str, str]) -> str:
    def sub(m: "re.Match[str]") -> str:
        if m.group(1) in environ:
            return environ[m.group(1)]
        if m.group(2) is not None:
            return m.group(2)
        raise ConfigError(f"environment variable {m.group(1)} is used in the MCP configuration but not set")

    return _VAR.sub(sub, value)


def _strings(value: Any, where: str, key: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: '{key}' must be a list of strings")
    return tuple(value)


def _mapping(value: Any, where: str, key: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ConfigError(f"{where}: '{key}' must map strings to strings")
    return dict(value)


def _seconds(value: Any, where: str, key: str, allow_none: bool = False) -> Any:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{where}: '{key}' must be a positive number of seconds, got {value!r}")
    return float(value)


def _choice(value: Any, where: str) -> str:
    if value not in ("capture", "inherit", "devnull"):
        raise ConfigError(f"{where}: 'stderr' must be 'capture', 'inherit' or 'devnull', got {value!r}")
    return value
