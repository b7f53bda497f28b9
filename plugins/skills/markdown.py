"""A skill as a human-editable Markdown file (docs/skills.md): ``render`` writes a ``key: value`` header between
``---`` lines, then the instructions; ``parse``/``load`` read it back (a malformed header is a ``ConfigError``)."""

from __future__ import annotations

import re
from typing import Any

import msgspec
from zagent.errors import ConfigError

from .skill import Skill

HEADER_KEYS = ("name", "version", "description", "when_to_use", "tool_sequence", "examples", "provenance",
               "created", "content_hash", "edited_by_human")
_PLAIN_UNSAFE = re.compile(r'^[\s\[\]{}"\'#&*!|>%@`?,:-]|^(true|false|null|yes|no|on|off|~)$|^[-+.]?\d|\s$|:$|: | #|\n'
                           r'|\t', re.I)


def render(skill: Skill) -> str:
    """The file text of ``skill``."""
    lines = ["---"]
    for key in HEADER_KEYS:
        value = getattr(skill, key)
        if key == "edited_by_human" and not value:
            continue
        lines.append(f"{key}: {_value(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n" + skill.instructions.strip() + "\n"


def _value(value: Any) -> str:
    if isinstance(value, str) and value and not _PLAIN_UNSAFE.search(value):
        return value
    return msgspec.json.encode(value).decode()


def parse(text: str, origin: str = "<skill>") -> dict[str, Any]:
    """The header fields and ``instructions`` of a skill file, as a dict ready for ``Skill``."""
    if not text.startswith("---"):
        raise ConfigError(f"{origin}: a skill file starts with a '---' header line")
    # only "\n" ends a line (text mode's): a value holding U+2028 or U+0085 stays one value, never a forged
    # header key or an early end of the header (str.splitlines would break there)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip(" \t") == "---")
    except StopIteration:
        raise ConfigError(f"{origin}: the header has no closing '---' line") from None
    fields: dict[str, Any] = {}
    ignored: list[str] = []
    for number, line in enumerate(lines[1:end], 2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, raw = line.partition(":")
        if not sep:
            raise ConfigError(f"{origin}:{number}: expected 'key: value', got {line!r}")
        if key.strip() in HEADER_KEYS:
            try:
                fields[key.strip()] = _decode(raw.strip())
            except RecursionError:  # [[[[... 100,000 deep: a bare RecursionError stopped the whole folder's load
                raise ConfigError(f"{origin}:{number}: the value of {key.strip()!r} is nested deeper than JSON "
                                  "can be read here") from None
        else:
            ignored.append(key.strip())
    if ignored:  # said, not dropped quietly: a file claiming tools, a model or approvals gets none of them
        from zagent.agentkit.runs import log

        log.warning("skills: %s: header key(s) %s ignored; a skill file sets only %s (its text is data: it never "
                    "sets tools, models, approvals or other policy)", origin, ", ".join(map(repr, ignored[:10])),
                    ", ".join(HEADER_KEYS))
    fields["instructions"] = "\n".join(lines[end + 1:]).strip()
    return fields


def _decode(raw: str) -> Any:
    if raw[:1] in ('[', '{', '"') or raw in ("true", "false", "null") or re.fullmatch(r"-?\d+(\.\d+)?", raw):
        try:
            return msgspec.json.decode(raw)
        except msgspec.DecodeError:
            return raw
    return raw


def load(text: str, origin: str = "<skill>") -> Skill:
    """A ``Skill`` from file text; fields of the wrong type are reported with the file name."""
    try:
        return msgspec.convert(parse(text, origin), Skill)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{origin}: {exc}") from None
