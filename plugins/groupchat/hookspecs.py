"""The group chat's own hook and registry kind: ``zagent_register_speaker_selectors``.

The groupchat plugin declares this module as its ``zagent_hookspecs``. The
spec is a ``registry_hookspec``, so the kernel adds the hook and a registry,
``kernel.entries("speaker_selectors")``, before it registers any plugin's
hooks, and fills it with the kernel's own name, clash and override checks: a
selector plugin works from an entry point, in ``Kernel(plugins=[...])`` (in
any order) or added later with ``k.add_plugin(...)``. Selectors can also be
named by import path (``"policy": "pkg.mod:factory"``), which needs no hook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from zagent import registry_hookspec

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

HOOK = "zagent_register_speaker_selectors"
KIND = "speaker_selectors"


@registry_hookspec(KIND, noun="speaker selector")
def zagent_register_speaker_selectors(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register speaker-selection policies for group chats, by name (``kernel.entries("speaker_selectors")``).

    ``register(name, factory, *, override=False)``; ``factory(options, kernel)``
    receives the ``selection`` mapping of a chat spec (``options["policy"] == name``)
    and returns a selector: an object with ``aselect(selection)`` or
    ``select(selection)``, or a callable ``selector(selection)``, answering the
    next speaker's name, or ``None`` to let the chat fall back to round-robin.
    May return an awaitable. Called once per kernel when it starts (or when the
    plugin is added), like the kernel's own registration hooks; the groupchat
    plugin registers the built-in policies (``round_robin``, ``rules``, ``llm``) here.

    :param register: adds one policy; a name registered twice is a problem naming both
        plugins unless one of them passes ``override=True`` (so the built-ins can be overridden).
    :param kernel: the kernel the chat runs on.

    Example::

        def zagent_register_speaker_selectors(register):
            register("loudest", lambda options, kernel: lambda sel: sel.names[-1])
    """
