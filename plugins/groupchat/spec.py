"""The declarative form of a group chat: ``GroupChatSpec`` (what JSON/YAML chat files hold).

::

    {"type": "groupchat", "name": "research_team",
     "agents": [{"name": "Researcher", "description": "...", "prompt": "...{transcript}...", ...},
                "Editor"],                          # a name: known to the AgentManager or its storage
     "selection": {"policy": "rules", "rules": {"Researcher": "Writer", "Writer": "Reviewer",
                                                "Reviewer": "Researcher"}},
     "termination": {"max_rounds": 9, "keywords": ["APPROVED"],
                     "judge": {"name": "Judge", ...}, "max_tokens": 20000, "max_seconds": 300},
     "max_consecutive": 3, "llm": "openai:gpt-4o-mini"}

Agents given as dicts are built through ``kernel.agent`` (any registered type;
``type`` defaults to ``customize``). ``llm`` (or the ``llm=`` argument, e.g.
the CLI's ``--model``) is given to every agent and judge built from a dict,
replacing the model the dict names (as ``AgentManager.add_agent(spec, llm=...)``
does), and to an LLM selector that names no model; without it each uses its
own ``llm`` or the kernel's default model.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional, Union

import msgspec
from zagent.errors import ConfigError
from zagent.speckit.specs import convert_spec

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

    from .chat import GroupChat


class GroupChatSpec(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    agents: list[Union[str, dict[str, Any]]]
    name: str = "groupchat"
    type: str = "groupchat"
    description: str = ""
    selection: Union[str, dict[str, Any]] = "round_robin"
    termination: dict[str, Any] = {}
    max_rounds: int = 20
    max_consecutive: Optional[int] = 3
    llm: Optional[str] = None
    output: str = "content"

    def __repr__(self) -> str:  # an own api_key in llm_config (or an inline agent's) is never shown
        from zagent.speckit.specs import spec_repr

        return spec_repr(self)


def from_dict(data: dict[str, Any], kernel: "Kernel", *, manager: Any = None, llm: Any = None,
              checkpoints: Any = None, **options: Any) -> "GroupChat":
    """Validate ``data`` and build the ``GroupChat`` (``llm`` overrides the spec's model)."""
    from .chat import GroupChat

    spec = convert_spec(data, GroupChatSpec, "group chat spec")
    if spec.type != "groupchat":
        raise ConfigError(f"group chat {spec.name!r}: type {spec.type!r} is not 'groupchat'")
    from zagent.speckit.paths import users_model
    from zagent.providerkit.credentials import spec_options

    # the models it names are the spec's (a wrapper's default file is refused); ``llm=`` is the caller's own
    with spec_options(f"group chat {spec.name!r}", kernel):
        return GroupChat(kernel=kernel, agents=list(spec.agents), selection=spec.selection,
                         termination=dict(spec.termination), max_rounds=spec.max_rounds,
                         max_consecutive=spec.max_consecutive, name=spec.name, description=spec.description,
                         output=spec.output, manager=manager, llm=users_model(llm) if llm is not None else spec.llm,
                         checkpoints=checkpoints, **options)


def load(path: Union[str, os.PathLike[str]], kernel: "Kernel", **options: Any) -> "GroupChat":
    """Read a JSON or YAML group chat file (see ``from_dict`` for ``options``)."""
    from zagent.speckit import load_spec_file, spec_file

    with spec_file(path):  # files its inline agents name may lie next to it
        return from_dict(load_spec_file(path), kernel, **options)
