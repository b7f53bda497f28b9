"""``${VAR}`` and ``${VAR:-default}`` expansion for MCP server entries, with a masked form for display.

``expand`` gives the value used and the value shown (environment parts kept as ``${VAR}``); an unset
variable without default raises ``UnsetVariable``. ``scrub`` replaces secret values and URL userinfo by ``***``.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping, NamedTuple

from zagent import ConfigError
from zagent import mask_userinfo

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
MIN_SCRUB = 4  # shorter values ("1", "on") are not worth hiding and would mangle messages


class UnsetVariable(ConfigError):
    """A ``${VAR}`` without a value in the environment and without a default."""

    def __init__(self, name: str):
        super().__init__(f"environment variable {name} is not set; set it (export {name}=...) or write a default "
                         f"in the configuration as ${{{name}:-value}}")
        self.variable = name


class Expanded(NamedTuple):
    value: str
    shown: str
    secrets: tuple[str, ...]


def expand(value: str, environ: Mapping[str, str]) -> Expanded:
    """Expand ``${VAR}`` / ``${VAR:-default}``; raise ``UnsetVariable`` for an unset variable without default."""
    secrets: list[str] = []

    def real(m: "re.Match[str]") -> str:
        if m.group(1) in environ:
            secrets.append(environ[m.group(1)])
            return environ[m.group(1)]
        if m.group(2) is not None:
            return m.group(2)
        raise UnsetVariable(m.group(1))

    def shown(m: "re.Match[str]") -> str:
        return f"${{{m.group(1)}}}" if m.group(1) in environ else (m.group(2) or "")

    return Expanded(_VAR.sub(real, value), _VAR.sub(shown, value), tuple(s for s in secrets if s))


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value of at least ``MIN_SCRUB`` characters replaced by ``***`` (and a run of
    16 of its characters, cut short or upper-cased), and the userinfo of every URL in it (``https://user:pw@host``)
    too, whatever its length."""
    from zagent.agentkit.secrets import encoded_forms, mask_pieces

    text = mask_userinfo(text)
    kept = [s for s in secrets if len(s) >= MIN_SCRUB]  # and as a server may echo them encoded, from 8 characters
    forms = {*kept, *(form for s in kept if len(s) >= 8 for form in encoded_forms(s))}
    for secret in sorted(forms, key=len, reverse=True):
        text = text.replace(secret, "***")
    return mask_pieces(text, forms)  # a long run of one cut short or upper-cased
