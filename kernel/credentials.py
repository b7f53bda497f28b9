"""Old import path of ``zagent.providerkit.credentials``: it moved out of the kernel core (one release).

``from zagent.credentials import ...`` keeps working; new code imports from ``zagent.providerkit.credentials``.
The kernel core imports neither.
"""

from __future__ import annotations

from .providerkit.credentials import CODE_OPTIONS, SpecOrigin, check_destination, check_options, spec_options

__all__ = ["CODE_OPTIONS", "SpecOrigin", "check_destination", "check_options", "spec_options"]
