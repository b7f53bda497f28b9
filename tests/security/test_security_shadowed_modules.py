"""A module name two spec folders both hold: the second spec is never handed the first folder's code."""

from __future__ import annotations

import json

import pytest

from zagent import ConfigError

from .conftest import make_kernel


def _folder(root, name, returns):
    folder = root / name
    folder.mkdir()
    (folder / "r10shadow.py").write_text(f"def fn(x: int) -> int:\n    \"\"\"{name}\"\"\"\n    return {returns}\n")
    (folder / "agent.json").write_text(json.dumps({"name": f"ag{name}", "type": "react", "tools": ["r10shadow:fn"]}))
    return folder / "agent.json"


def test_a_second_folders_same_named_module_is_refused_not_swapped(tmp_path, forget_modules):
    """Specs in folders ``a`` and ``b`` both name ``r10shadow:fn``, each its own file; after ``a``'s is imported,
    building ``b`` is a ``ConfigError`` naming both files (it silently got ``a``'s function)."""
    forget_modules.append("r10shadow")
    k = make_kernel(plugins=["zagent.plugins.react"])
    first, second = _folder(tmp_path, "a", 1), _folder(tmp_path, "b", 2)
    k.agent(str(first), trust=True)
    with pytest.raises(ConfigError, match=r"module 'r10shadow' is imported already, from .*a/r10shadow\.py, so "
                                          r".*b/r10shadow\.py cannot be imported under that name"):
        k.agent(str(second), trust=True)
    assert k.tool("fn").handler(x=0) == 1
    k.close()


def test_the_same_folders_module_loads_again(tmp_path, forget_modules):
    """Building the same spec twice (its module imported already, from its own folder) is no clash."""
    forget_modules.append("r10shadow")
    k = make_kernel(plugins=["zagent.plugins.react"])
    path = _folder(tmp_path, "a", 1)
    k.agent(str(path), trust=True)
    assert k.agent(str(path), trust=True).tools == ["fn"]
    k.close()
