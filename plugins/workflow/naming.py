"""Names a model gives generated agents: ASCII identifiers (``agent_name``), never one a known agent has ignoring case
and width -- loaded in the ``AgentManager`` or saved in its storage (``taken_names``) -- nor another generated one
(``free_name``): it cannot pass for the user's in logs or approvals, nor overwrite its file on a case-insensitive
disk. An inline spec named like a held or stored agent is that agent; one with tools it does not name is refused
(``check_inline``)."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from zagent.plugins.manager.inline import check_inline as checked, loose, stored_names
from zagent.speckit.paths import windows_device

_NOT_ASCII_ID = re.compile(r"[^A-Za-z0-9_]+")
#: the most characters of a generated agent's name: room for ``free_name``'s number and ``.json`` in a file name
MAX_AGENT_NAME = 64


def agent_name(name: Any, node: str) -> str:
    """A generated agent's name as an ASCII identifier (width folded first) of at most ``MAX_AGENT_NAME``
    characters; from ``node`` when none is left; a Windows device name (``CON``, ``nul``, ``COM1``: no agent file
    can have it) gets ``_agent`` after it."""
    clean = ""
    if isinstance(name, str):
        clean = _NOT_ASCII_ID.sub("_", unicodedata.normalize("NFKC", name).strip()).strip("_")[:MAX_AGENT_NAME]
        clean = clean.rstrip("_")
    if not clean:
        clean = "".join(p.capitalize() for p in _NOT_ASCII_ID.sub("_", node).split("_"))[:MAX_AGENT_NAME] + "Agent"
    return clean + "_agent" if windows_device(clean) is not None else clean


def free_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name2``, ``name3``... the first whose ``loose`` key is not in ``taken`` and that is no Windows
    device name (``COM`` taken: ``COM2`` opens a port, so ``COM10``)."""
    candidate, n = name, 2
    while loose(candidate) in taken or windows_device(candidate) is not None:
        candidate, n = f"{name}{n}", n + 1
    return candidate


def taken_names(manager: Any) -> set[str]:
    """``loose`` keys of the agents ``manager`` holds or can load from its storage (a folder or an SQLite file)."""
    return {loose(n) for n in [*manager.names, *stored_names(manager)]}


def check_inline(manager: Any, ref: Any, *, llm: Any = None) -> None:
    """``manager.inline.check_inline`` for ``ref`` when it is an inline spec with a name and ``manager`` does not
    run that check itself (an ``AgentManager`` does, in ``add_agent``)."""
    if isinstance(ref, dict) and isinstance(ref.get("name"), str) and not getattr(manager, "checks_inline", False):
        checked(manager, ref, llm)
