"""The group chat's own hook: ``zagent_register_speaker_selectors``.

The groupchat plugin declares this module as its ``zagent_hookspecs``, so the
kernel adds the spec before it registers any plugin's hooks: a selector plugin
works from an entry point, in ``Kernel(plugins=[...])`` (in any order) or
added later with ``k.add_plugin(...)``. ``ensure_hookspecs`` stays for kernels
where the plugin was added after start-up. Selectors can also be named by
import path (``"policy": "pkg.mod:factory"``), which needs no hook at all.
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
