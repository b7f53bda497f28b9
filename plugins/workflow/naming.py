"""Names a model gives generated agents: ASCII identifiers (``agent_name``), never one a known agent has ignoring case
and width -- loaded in the ``AgentManager`` or saved in its storage (``taken_names``) -- nor another generated one
(``free_name``): it cannot pass for the user's in logs or approvals, nor overwrite its file on a case-insensitive
disk. An inline spec named like a held or stored agent is that agent; one with tools it does not name is refused
(``check_inline``)."""

from __future__ import annotations

import os
import re
import unicodedata
from typing import Any

_NOT_ASCII_ID = re.compile(r"[^A-Za-z0-9_]+")
_SPEC_FILES = (".json", ".yaml", ".yml")


def loose(name: str) -> str:
    """The key two names collide on: width and case folded (``Ｗｒｉｔｅｒ``, ``WRITER`` and ``writer`` alike)."""
    return unicodedata.normalize("NFKC", name).casefold()


def agent_name(name: Any, node: str) -> str:
    """A generated agent's name as an ASCII identifier (width folded first); from ``node`` when none is left."""
    if isinstance(name, str):
        clean = _NOT_ASCII_ID.sub("_", unicodedata.normalize("NFKC", name).strip()).strip("_")
        if clean:
            return clean
    return "".join(p.capitalize() for p in _NOT_ASCII_ID.sub("_", node).split("_")) + "Agent"


def free_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name2``, ``name3``... the first whose ``loose`` key is not in ``taken``."""
    candidate, n = name, 2
    while loose(candidate) in taken:
        candidate, n = f"{name}{n}", n + 1
    return candidate


def taken_names(manager: Any) -> set[str]:
    """``loose`` keys of the agents ``manager`` holds or can load from its storage (a folder or an SQLite file)."""
    return {loose(n) for n in [*manager.names, *stored_names(manager)]}


def stored_names(manager: Any) -> set[str]:
    """The names of the agents ``manager`` can load from its storage (a folder or an SQLite file)."""
    where = getattr(manager, "storage", None)
    if where is None:
        return set()
    where = os.fspath(where)
    if os.path.isdir(where):
        return {os.path.splitext(f)[0] for f in os.listdir(where) if f.endswith(_SPEC_FILES)}
    if os.path.isfile(where):
        from zagent.plugins.manager.manager import SPEC_KIND

        store = manager.kernel.memory("checkpoints", path=where)
        return {r.run_id.partition(":")[2] for r in store.list(kind=SPEC_KIND)}
    return set()


def check_inline(manager: Any, ref: Any, *, llm: Any = None) -> None:
    """``ConfigError`` when ``ref``, an inline spec, is named like an agent ``manager`` already holds (so the node
    would run that agent) which uses tools or agents the spec does not name: it would silently gain them. One
    named like an agent of the manager's storage not loaded yet loads that agent first (with ``llm``), else the
    spec would be registered under its name and run wherever the workflow names the stored agent."""
    from zagent.agentkit.toolrefs import agent_tool_names
    from zagent.errors import ConfigError

    name = ref.get("name") if isinstance(ref, dict) else None
    if not isinstance(name, str) or getattr(manager, "checks_inline", False):  # an AgentManager checks it itself
        return
    if name not in manager:
        if name not in stored_names(manager):
            return
        manager.add_agent(name, llm=llm)  # the stored agent, loaded first: a file's spec never takes its name (held, below)
    kept = manager.get_agent(name)
    spec = getattr(kept, "spec", None)
    held = [*(getattr(spec, "tools", None) or []), *(getattr(spec, "agents", None) or [])] if spec is not None \
        else agent_tool_names(kept)
    named = [v for key in ("tools", "agents") if isinstance(ref.get(key), list) for v in ref[key]]
    extra = [t if isinstance(t, str) else str(t.get("name", t)) if isinstance(t, dict) else repr(t)
             for t in held if t not in named]
    if extra:
        raise ConfigError(f"inline agent {name!r} has the name of an agent already registered, which the node would "
                          f"run instead, and that agent uses {', '.join(extra)}, which the inline spec does not "
                          "name; rename the inline agent, or name the registered one as a plain string")
