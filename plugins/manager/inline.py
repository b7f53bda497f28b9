"""An inline agent spec (a dict from a workflow or group chat file) given to an ``AgentManager``
(``check_inline``): named like a held or stored agent, it is that agent (a stored one is loaded first, never replaced
by the file's prompt); one not naming the tools and agents the kept agent uses is a ``ConfigError``, as is a name
alike to a known one but for case and width (``loose``): it would pass for that agent in approvals and logs."""

from __future__ import annotations

import os
import re
import unicodedata
from typing import Any

from zagent.errors import ConfigError
from zagent.speckit.paths import DEVICES_SAID, windows_device

SPEC_FILES = (".json", ".yaml", ".yml")
SAFE_NAME = re.compile(r"[\w.-]+")  # fullmatch: no newline after the name
#: the most agents one manager holds (a long-lived workflow executor adds each run's inline agents, named apart)
MAX_AGENTS = 4096


def check_file_name(name: str) -> None:
    """``ConfigError`` unless agent name ``name`` can name its file on every system: letters, digits, ``_``, ``-``
    and ``.`` (no newline after), and no Windows device (``CON``, ``nul.notes``, ``COM¹``: it opens the device)."""
    if not SAFE_NAME.fullmatch(name):
        raise ConfigError(f"agent name {name!r} cannot be a file name; use letters, digits, '_', '-' and '.'")
    device = windows_device(name)
    if device is not None:
        raise ConfigError(f"agent name {name!r} cannot be a file name: {device!r} is a Windows device name "
                          f"({DEVICES_SAID}), which opens the device wherever the file lies (the save would wait on "
                          f"the console or be lost); give the agent another name (e.g. {device + '-agent'!r})")


def check_room(held: int, name: str) -> None:
    """``ConfigError`` when a manager holding ``held`` agents is full (``MAX_AGENTS``)."""
    if held >= MAX_AGENTS:
        raise ConfigError(f"agent {name!r} was not added: this manager already holds {held} agents (at most "
                          f"{MAX_AGENTS}); drop those no longer used (manager.remove_agent(name)) or use a new "
                          "executor or manager")


def loose(name: str) -> str:
    """The key two names collide on: width and case folded, invisible characters and spaces dropped (``Ｗｒｉｔｅｒ``,
    ``WRITER``, ``Writer\u200b`` and ``writer`` alike)."""
    text = unicodedata.normalize("NFKC", name).casefold()
    return "".join(c for c in text if not c.isspace() and unicodedata.category(c) not in ("Cf", "Cc"))


def stored_names(manager: Any) -> set[str]:
    """The names of the agents ``manager`` can load from its storage (a folder or an SQLite file)."""
    where = getattr(manager, "storage", None)
    if where is None:
        return set()
    where = os.fspath(where)
    if os.path.isdir(where):
        return {os.path.splitext(f)[0] for f in os.listdir(where) if f.endswith(SPEC_FILES)}
    if os.path.isfile(where):
        from .manager import SPEC_KIND

        store = manager.kernel.memory("checkpoints", path=where)
        try:
            return {r.run_id.partition(":")[2] for r in store.list(kind=SPEC_KIND)}
        finally:
            getattr(store, "close", lambda: None)()
    return set()


def check_inline(manager: Any, spec: dict[str, Any], llm: Any = None) -> str:
    """The name of ``spec`` (an inline agent spec), after the checks of the module docstring."""
    from zagent.agentkit.toolrefs import provider_tools, reachable_tools

    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"an agent spec needs a 'name'; got keys {sorted(spec)}")
    if name not in manager:
        stored = stored_names(manager)
        if name not in stored:
            alike = sorted(n for n in {*manager.names, *stored} if loose(n) == loose(name))
            if alike:
                raise ConfigError(f"inline agent {name!r} reads alike agent {alike[0]!r} (the same but for case or "
                                  "width), which the manager holds or stores: it would pass for that agent in "
                                  "approvals and logs and could be saved over its file; rename the inline agent, or "
                                  f"name {alike[0]!r} as a plain string to use it")
            return name
        manager.add_agent(name, llm=llm)  # the stored agent, loaded first: a file's spec never takes its name
    kept = manager.get_agent(name)
    held_spec = getattr(kept, "spec", None)
    held = [v for key in ("tools", "agents", "handoffs") for v in (getattr(held_spec, key, None) or [])] \
        if held_spec is not None else reachable_tools(kept)  # a group chat: its speakers' tools
    named = _named(spec, nested=held_spec is None)
    extra = [t if isinstance(t, str) else str(t.get("name", t)) if isinstance(t, dict) else repr(t)
             for t in held if t not in named]
    config, given = spec.get("llm_config"), set()
    if isinstance(config, dict):  # provider-run tools the inline spec itself asks for (a trusted one only)
        extra_body = config.get("extra_body")
        given = {*config, *(extra_body if isinstance(extra_body, dict) else ())}
    extra += [f"its provider's tools ({h})" for h in provider_tools(kept) if h.rpartition(": ")[2] not in given]
    if extra:
        raise ConfigError(f"inline agent {name!r} has the name of an agent already registered, which would run "
                          f"instead, and that agent uses {', '.join(extra)}, which the inline spec does not name; "
                          "rename the inline agent, or name the registered one as a plain string")
    return name


def _named(spec: dict[str, Any], *, nested: bool) -> list[Any]:
    """What ``spec`` names under ``tools``, ``agents`` and ``handoffs``; with ``nested``, also what the inline specs
    it hands over to name (a held ReAct agent's tools are counted through its hand-overs: ``reachable_tools``)."""
    out: list[Any] = []
    stack, walked = [spec], 0
    while stack and walked < 64:  # a spec's hand-over chain is short; a hostile one is not walked for ever
        current, walked = stack.pop(), walked + 1
        for key in ("tools", "agents", "handoffs"):
            values = current.get(key)
            if isinstance(values, list):
                out += values
                if nested and key == "handoffs":
                    stack += [v for v in values if isinstance(v, dict)]
    return out
