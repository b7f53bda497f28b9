"""zagent.speckit: spec files and the trust checks of plugins that load them (agents, workflows, group chats, skills).

A spec file is data: ``files.load_spec_file`` reads it (size, nesting and text checked), ``paths.spec_file`` says
which file the specs built in a block come from (``current_spec_file``) and keeps the files it names in its folder,
``trust.Trust`` / ``trusting`` say who vouches for the code it names and ``trust.resolve`` imports that code only
when trusted, ``sizes`` bounds its counts and a model's options, ``specs.convert_spec`` turns it into its Struct.
``files.build_agent`` is ``Kernel.agent``'s builder (the actions plugin registers it). The kernel never imports
this package; plugins and the other kits do, on first use. Its public names (``zagent.speckit.Trust``...) are
imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..agentkit.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover  (the lazy names' types, for type checkers)
    from .files import load_spec_file as load_spec_file
    from .paths import current_spec_file as current_spec_file, spec_file as spec_file
    from .trust import (Trust as Trust, as_trust as as_trust, current_trust as current_trust,
                        dubious_folder as dubious_folder, load as load, trusting as trusting)

_EXPORTS = {
    "load_spec_file": "files", "spec_file": "paths", "current_spec_file": "paths", "Trust": "trust",
    "trusting": "trust", "current_trust": "trust", "as_trust": "trust", "dubious_folder": "trust", "load": "trust",
}

__all__ = ["Trust", "as_trust", "current_spec_file", "current_trust", "dubious_folder", "load", "load_spec_file",
           "spec_file", "trusting"]

__getattr__ = lazy_exports(__name__, _EXPORTS)
