"""The group chat's own hook: ``zagent_register_speaker_selectors``.

The kernel's ``hookspecs`` does not (yet) know this hook, so the groupchat
plugin adds this module to each kernel's plugin manager when the kernel starts
(``ensure_hookspecs``, called from the plugin's registration hook). Because
the kernel refuses a plugin that implements a hook it has no spec for *at the
moment the plugin is registered*, a plugin implementing this hook must be
added after the kernel started: ``k.add_plugin(my_selectors)``. Selectors can
also be named by import path (``"policy": "pkg.mod:factory"``), which needs no
hook at all. See docs/groupchat.md for the kernel change that lifts this.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable

from zagent.hookspecs import hookspec

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

HOOK = "zagent_register_speaker_selectors"


@hookspec
def zagent_register_speaker_selectors(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register speaker-selection policies for group chats, by name.

    ``register(name, factory, *, override=False)``; ``factory(options, kernel)``
    receives the ``selection`` mapping of a chat spec (``options["policy"] == name``)
    and returns a selector: an object with ``aselect(selection)`` or
    ``select(selection)``, or a callable ``selector(selection)``, answering the
    next speaker's name, or ``None`` to let the chat fall back to round-robin.
    May return an awaitable. Called the first time a chat of the kernel needs
    a selector, and again after plugins were added or removed.

    :param register: adds one policy; a name registered twice is an error unless
        one of them passes ``override=True`` (the built-ins can be overridden).
    :param kernel: the kernel the chat runs on.

    Example::

        def zagent_register_speaker_selectors(register):
            register("loudest", lambda options, kernel: lambda sel: sel.names[-1])
    """


def ensure_hookspecs(kernel: "Kernel") -> None:
    """Add this module's hook specs to ``kernel``'s plugin manager, once."""
    caller = getattr(kernel.pm.hook, HOOK, None)
    if caller is not None and caller.has_spec():
        return
    kernel.pm.add_hookspecs(sys.modules[__name__])
    kernel.hooks.invalidate()


def specs_added(kernel: Any) -> bool:
    caller = getattr(kernel.pm.hook, HOOK, None)
    return caller is not None and caller.has_spec()
