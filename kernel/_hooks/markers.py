"""The pluggy markers of project ``zagent``: ``hookspec`` for specifications, ``hookimpl`` for implementations."""

from __future__ import annotations

import pluggy

PROJECT = "zagent"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
