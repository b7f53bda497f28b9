"""Reading MCP server configuration (``mcpServers``, JSON or TOML); ``load_settings`` never connects.

It merges ``ZAGENT_MCP_CONFIG``'s file, ``config["mcp"]["config_file"]`` and inline servers (a later name
replacing an earlier one), expanding ``${VAR}``. A bad entry becomes an ``InvalidServer``, a bad file or option a
line of ``problems``; ``strict=True`` raises ``ConfigError`` instead. Header and env values are ``zagent.Secret``.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any, Mapping, Optional

import attrs

from zagent import ConfigError, Secret

from .configowner import check_config_file
from .envvars import UnsetVariable, expand, scrub

ENV_VAR = "ZAGENT_MCP_CONFIG"
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
_SERVER_KEYS = ("mcpServers", "servers", "mcp_servers")
_KNOWN = {"command", "args", "env", "cwd", "url", "headers", "type", "transport", "disabled", "timeout",
          "connect_timeout", "tools", "stderr", "description", "max_message_bytes"}


_URLS = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>]+")
_PLACEHOLDER = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}")


def _plain(parts: Any) -> tuple[str, ...]:
    return tuple(p.reveal() if isinstance(p, Secret) else p for p in parts)


def _credentials(parts: tuple[str, ...]) -> list[str]:
    """The credentials written in a command line or URL: secret-named flags' values, URL passwords and keys."""
    from zagent.providerkit.masking import url_secrets

    urls = [u for p in parts if "://" in p for u in _URLS.findall(p)]  # ``--db=postgres://app:pw@db/x`` too
    return [s for s in (*_flag_secrets(parts), *(v for u in urls for v in url_secrets(u)))
            if s and not _PLACEHOLDER.fullmatch(s)]  # ``--token=${GH_TOKEN}``: shown as written


def _held(parts: Any) -> tuple[Any, ...]:
    """``parts`` (a command line's, or a URL) with each part holding a credential (``--api-key VALUE``,
    ``--password=VALUE``, a URL's password or ``?api_key=``) as ``Secret``: a dump of the config shows none."""
    plain = _plain(parts)
    secrets = _credentials(plain)
    return tuple(Secret(p) if any(s in p for s in secrets) else p for p in plain)


def _held_url(url: Any) -> Any:
    return _held((url,))[0] if url is not None else None


@attrs.frozen(repr=False)
class ServerConfig:
    """One MCP server as configured: ``name`` is also its toolset and tool-name prefix; ``transport`` is
    ``"stdio"`` or ``"http"`` (streamable HTTP); ``env`` and ``headers`` values are secrets; ``timeout`` is each
    tool's ``Tool.timeout``, ``connect_timeout`` bounds start, initialize and listing; ``tools``, if given, are
    the only MCP tools registered; ``stderr`` is ``"capture"`` (kept for error reports), ``"inherit"`` or
    ``"devnull"``; a message over ``max_message_bytes`` fails the connection. ``shown``: command and args, or URL,
    as shown to people (``${VAR}`` kept; empty: as used); ``hidden``: values from the environment, scrubbed.
    ``args``, ``url`` and ``shown`` are kept with their credentials as ``Secret`` (``attrs.asdict`` shows none).
    """

    name: str
    transport: str
    command: Optional[str] = None
    _args: tuple[Any, ...] = attrs.field(default=(), converter=_held)
    env: Mapping[str, Secret] = attrs.field(factory=dict)
    cwd: Optional[str] = None
    _url: Any = attrs.field(default=None, converter=_held_url)
    headers: Mapping[str, Secret] = attrs.field(factory=dict)
    timeout: Optional[float] = DEFAULT_CALL_TIMEOUT
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    tools: Optional[tuple[str, ...]] = None
    stderr: str = "capture"
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    _shown: tuple[Any, ...] = attrs.field(default=(), converter=_held)
    hidden: tuple[Secret, ...] = ()

    @property
    def args(self) -> tuple[str, ...]:
        """The arguments the server is started with, as written."""
        return _plain(self._args)

    @property
    def url(self) -> Optional[str]:
        """The URL connected to, as written."""
        return _plain((self._url,))[0] if self._url is not None else None

    @property
    def shown(self) -> tuple[str, ...]:
        return _plain(self._shown)

    @property
    def target(self) -> str:
        """What to show a user: the command line, or the URL without its query string; ``${VAR}`` parts masked."""
        if self.transport == "stdio":
            return self.scrub(" ".join(self.shown or (self.command or "", *self.args)))
        return self.scrub((self.shown[0] if self.shown else self.url or "").split("?", 1)[0])

    def scrub(self, text: str) -> str:
        """``text`` without this server's secret values (from ``${VAR}``, ``env``, ``headers`` -- a bearer or Basic
        credential alone too --, the value of a secret-named flag in ``args``, ``--api-key VALUE``, and the
        password or credential parameters of its ``url`` and of a URL in ``args``, echoed bare)."""
        from zagent.providerkit.masking import header_secrets, url_secrets

        values = [s.reveal() for s in (*self.hidden, *self.env.values())]
        urls = [u for u in (self.url, *self.args) if u and "://" in u]
        return scrub(text, [*values, *header_secrets(self.headers), *_flag_secrets(self.args),
                            *(v for u in urls for v in url_secrets(u))])

    def __repr__(self) -> str:
        extra = f" headers={sorted(self.headers)}" if self.headers else ""
        extra += f" env={sorted(self.env)}" if self.env else ""
        return f"<ServerConfig {self.name!r} {self.transport} {self.target!r}{extra}>"


def _flag_secrets(args: tuple[str, ...]) -> list[str]:
    """The values given to flags named like a credential (``--api-key VALUE``, ``--password=VALUE``), of
    ``NAME=VALUE`` arguments naming one (``docker run -e GITHUB_TOKEN=...``) and of header arguments
    (``--header "Authorization: Bearer ..."``, as ``mcp-remote`` takes them)."""
    from zagent.agentkit.secrets import looks_secret
    from zagent.providerkit.masking import header_secrets

    out = []
    for i, arg in enumerate(args):
        name, eq, value = arg.lstrip("-").partition("=")
        if (i and args[i - 1] in ("--header", "-H")) or arg.startswith("--header="):
            header, _, said = arg.removeprefix("--header=").partition(":")
            out += header_secrets({header.strip(): said.strip()})
        if not looks_secret(name):
            continue
        if eq:
            out.append(value)
        elif arg.startswith("-") and i + 1 < len(args) and not args[i + 1].startswith("-"):
            out.append(args[i + 1])
    return out


@attrs.frozen
class InvalidServer:
    """A server entry that cannot be used: ``error`` says what is wrong and how to fix it.

    ``transport`` and ``target`` are read from the entry as written (no
    ``${VAR}`` expanded), for ``zagent mcp list``.
    """

    name: str
    error: str
    transport: str = "-"
    target: str = ""


@attrs.frozen
class McpSettings:
    """The whole ``mcp`` section: servers plus the options that apply to all of them.

    :ivar invalid: entries that were skipped, by name.
    :ivar problems: what went wrong outside any one entry (an unreadable file, a bad option).
    """

    servers: dict[str, ServerConfig]
    disabled: tuple[str, ...] = ()
    separator: str = "."
    invalid: dict[str, InvalidServer] = attrs.field(factory=dict)
    problems: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.servers or self.disabled or self.invalid or self.problems)


def load_settings(section: Any, environ: Optional[Mapping[str, str]] = None, *, env_file: bool = True,
                  strict: bool = False) -> McpSettings:
    """Build ``McpSettings`` from ``kernel.config["mcp"]`` (may be ``None``) and ``ZAGENT_MCP_CONFIG``.

    ``environ`` (default ``os.environ``) supplies ``${VAR}`` values; ``env_file=False``
    ignores ``ZAGENT_MCP_CONFIG``. Bad entries and unreadable files are
    collected in ``invalid`` and ``problems``; ``strict=True`` raises
    ``ConfigError`` for the first one instead.
    """
    environ = os.environ if environ is None else environ
    problems: list[str] = []

    def problem(message: str) -> None:
        if strict:
            raise ConfigError(message)
        problems.append(message)

    if section is None:
        section = {}
    if isinstance(section, (str, os.PathLike)):
        section = {"config_file": os.fspath(section)}
    if not isinstance(section, Mapping):
        problem(f"config['mcp'] must be a mapping, got {type(section).__name__}; no MCP server is started")
        section = {}
    raw: dict[str, Any] = {}
    files = [(environ[ENV_VAR], f" (named by {ENV_VAR})")] if env_file and environ.get(ENV_VAR) else []
    if section.get("config_file"):
        files.append((os.fspath(section["config_file"]), ""))
    for path, origin in files:
        try:
            if origin and not os.path.isabs(os.path.expanduser(path)):  # the variable names one file for every folder
                raise ConfigError(f"MCP configuration {path!r} is a relative path: it names another file in each "
                                  "folder zagent runs in, so a downloaded project's file would start its commands; "
                                  f"set {ENV_VAR} to an absolute path (or pass --config FILE to one command)")
            path = os.path.expanduser(path)
            check_config_file(path)
            raw.update(_servers_of(read_file(path), path))
        except ConfigError as exc:
            problem(f"{exc}{origin}; fix or remove it: none of its servers is started")
    try:
        raw.update(_servers_of(section, "config['mcp']"))
    except ConfigError as exc:
        problem(str(exc))
    defaults = {
        "timeout": section.get("call_timeout", DEFAULT_CALL_TIMEOUT),
        "connect_timeout": section.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT),
    }
    servers: dict[str, ServerConfig] = {}
    disabled: list[str] = []
    invalid: dict[str, InvalidServer] = {}
    for name, spec in raw.items():
        if isinstance(spec, Mapping) and spec.get("disabled"):
            disabled.append(name)
            continue
        try:
            servers[name] = parse_server(name, spec, defaults, environ)
        except ConfigError as exc:
            if strict:
                raise
            invalid[name] = InvalidServer(name, str(exc), *_as_written(spec))
    separator = section.get("name_separator", ".")
    if not isinstance(separator, str) or not re.fullmatch(r"[A-Za-z0-9_.\-]{1,4}", separator):
        problem(f"config['mcp']['name_separator'] must be 1-4 of letters, digits, '_', '.', '-'; "
                f"got {separator!r}; using '.'")
        separator = "."
    return McpSettings(servers=servers, disabled=tuple(disabled), separator=separator, invalid=invalid,
                       problems=tuple(problems))


def _as_written(spec: Any) -> tuple[str, str]:
    """Transport and target of an entry as written in the file (``${VAR}`` not expanded), for listings."""
    if not isinstance(spec, Mapping):
        return "-", ""
    if isinstance(spec.get("url"), str):  # credentials written in it masked, as in a valid server's ``target``
        return "http", _masked_line([spec["url"]]).split("?", 1)[0]
    if isinstance(spec.get("command"), str):
        args = spec.get("args")
        args = [a for a in args if isinstance(a, str)] if isinstance(args, (list, tuple)) else []
        return "stdio", _masked_line([spec["command"], *args])
    return "-", ""


def _masked_line(parts: list[str]) -> str:
    """``parts`` joined, with the credentials written in them (``_credentials``) and URL userinfo masked."""
    from zagent import mask_userinfo

    return mask_userinfo(scrub(" ".join(parts), _credentials(tuple(parts))))


def read_file(path: str) -> dict[str, Any]:
    """A JSON or TOML (``.toml``) configuration file as a dict."""
    from zagent.agentkit.files import read_bounded

    try:
        data = read_bounded(path, "the MCP configuration")
    except OSError as exc:
        raise ConfigError(f"cannot read MCP configuration {path!r}: {exc}") from None
    if path.endswith(".toml"):
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # Python 3.10
            import tomli as tomllib
        try:
            parsed = tomllib.loads(data.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:  # nested too deep too
            raise ConfigError(f"MCP configuration {path!r} is not valid TOML: {exc}") from None
    else:
        import msgspec

        try:
            parsed = msgspec.json.decode(data)
        except (msgspec.DecodeError, RecursionError) as exc:  # nested past msgspec's limit too
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
        max_message_bytes=_bytes(spec.get("max_message_bytes", DEFAULT_MAX_MESSAGE_BYTES), where),
    )
    hidden: list[str] = []  # values taken from the environment
    shown: list[str] = []  # command + args, or url, as shown to people

    def value(text: str, key: str) -> str:
        try:
            done = expand(text, environ)
        except UnsetVariable as exc:
            raise ConfigError(f"{where}: environment variable {exc.variable} (used in '{key}') is not set; "
                              f"set it (export {exc.variable}=...) or give a default in the configuration: "
                              f"${{{exc.variable}:-value}}") from None
        hidden.extend(done.secrets)
        if key in ("command", "args", "url"):
            shown.append(done.shown)
        return done.value

    if transport == "stdio":
        if not isinstance(spec.get("command"), str) or not spec["command"]:
            raise ConfigError(f"{where}: a stdio server needs 'command' (and optionally args, env, cwd)")
        command = value(spec["command"], "command")
        args = tuple(value(a, "args") for a in _strings(spec.get("args", []), where, "args"))
        env = {k: Secret(value(v, "env")) for k, v in _mapping(spec.get("env"), where, "env").items()}
        cwd = value(spec["cwd"], "cwd") if spec.get("cwd") else None
        return ServerConfig(command=command, args=args, env=env, cwd=cwd, shown=tuple(shown),
                            hidden=tuple(Secret(h) for h in hidden), **common)
    if not isinstance(spec.get("url"), str) or not spec["url"].startswith(("http://", "https://")):
        raise ConfigError(f"{where}: an HTTP server needs 'url' starting with http:// or https://")
    url = value(spec["url"], "url")
    headers = {k: Secret(value(v, "headers")) for k, v in _mapping(spec.get("headers"), where, "headers").items()}
    return ServerConfig(url=url, headers=headers, shown=tuple(shown), hidden=tuple(Secret(h) for h in hidden),
                        **common)


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


def _bytes(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1024:
        raise ConfigError(f"{where}: 'max_message_bytes' must be a whole number of bytes >= 1024, got {value!r}")
    return value


def _choice(value: Any, where: str) -> str:
    if value not in ("capture", "inherit", "devnull"):
        raise ConfigError(f"{where}: 'stderr' must be 'capture', 'inherit' or 'devnull', got {value!r}")
    chosen: str = value  # one of the three strings
    return chosen
