"""The declarative form of a group chat (JSON/YAML files): ``GroupChatSpec`` (unknown keys refused), ``from_dict``
and ``load``; see docs/groupchat.md#the-declarative-form.

``llm`` (or ``llm=``, the CLI's ``--model``) replaces the model of every agent and judge built from a dict and
serves an LLM selector naming none (else each its own model, or the kernel's default).
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
    from zagent.speckit.paths import reserving

    with spec_options(f"group chat {spec.name!r}", kernel), \
            reserving({checkpoints: "the checkpoint file of this group chat"}):  # its speakers never write there
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
