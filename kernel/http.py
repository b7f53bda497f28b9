"""Old import path of the network providers' HTTP kit: it moved to ``zagent.providerkit`` (one release).

``from zagent.http import HttpClient`` keeps working; new code imports from
``zagent.providerkit``. The kernel core imports neither.
"""

from __future__ import annotations

from .providerkit import *  # noqa: F401,F403
from .providerkit import __all__  # noqa: F401
