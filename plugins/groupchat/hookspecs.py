"""The group chat's own hook and registry kind: ``zagent_register_speaker_selectors`` fills
``kernel.entries("speaker_selectors")`` (docs/hooks.md, docs/groupchat.md#plugging-in-a-policy).

The groupchat plugin declares this module as its ``zagent_hookspecs``, so the kernel adds the hook and the
registry before it registers any plugin's hooks.
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

    ``register(name, factory, *, override=False)``; ``factory(options, kernel)`` gets a chat spec's ``selection``
    mapping and returns a selector (``aselect``/``select`` or a callable, maybe async) answering the next
    speaker's name, or ``None`` for round-robin. A name registered twice is a problem unless one registration
    passes ``override=True``. ``kernel``: the starting kernel. Long form and example: docs/hooks.md.
    """
