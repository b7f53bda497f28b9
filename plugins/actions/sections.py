"""The sections a declared agent's ``prompt_template`` may have (checked by ``CustomizeAction``; docs/security.md)."""

TEMPLATE_SECTIONS = frozenset({"system", "instruction", "context", "constraints", "demonstrations", "titles"})

#: every key of a ``prompt_template`` mapping: the sections and ``style`` (``string`` or ``chat``)
TEMPLATE_KEYS = TEMPLATE_SECTIONS | {"style"}
