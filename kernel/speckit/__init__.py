"""``zagent.speckit``: spec files and the trust checks of the plugins that load them (agents, workflows, group
chats, skills): reading (``files``), origin and paths (``paths``), trust (``trust``), counts (``sizes``), rails
settings (``rails``) and conversion (``specs``). The kernel never imports it; its public names load on first use.
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
