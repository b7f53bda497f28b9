"""The kernel's layout, read with ``ast`` (``tools/kernel_lines.py``): small core files, a facade ``Kernel``,
no runtime import cycle in the core, and no kernel module importing a plugin or (core) a support kit.

The core is kernel/ minus ``testing/``, ``providerkit/``, ``agentkit/`` and ``speckit/``.

The plugin rule: no kernel module imports ``zagent.plugins``. There are no old-import-path shims (one import
path per name); the only pure re-export modules are public faces (``zagent.hookspecs``, ``zagent.providerkit``,
``zagent.agentkit.fields``).
"""

import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).parent.parent.parent
_spec = importlib.util.spec_from_file_location("kernel_lines", ROOT / "tools" / "kernel_lines.py")
kernel_lines = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kernel_lines)

INFO = kernel_lines.analyse(kernel_lines.kernel_files())
CORE = {rel: v for rel, v in INFO.items() if v["core"]}


def test_the_core_is_found():
    """The analysis sees the core modules (Kernel, loading, hooks) and leaves the kits and the testing kit out."""
    assert {"kernel.py", "_hooks/loading.py", "_hooks/runner.py"} <= set(CORE)
    assert not any(rel.startswith(("testing/", "providerkit/", "agentkit/", "speckit/")) for rel in CORE)


@pytest.mark.parametrize("rel", sorted(CORE))
def test_no_core_file_is_over_400_lines(rel):
    """Every core module is at most 400 lines."""
    assert CORE[rel]["lines"] <= 400, f"kernel/{rel} has {CORE[rel]['lines']} lines; split it by job"


def test_kernel_py_is_a_facade_under_300_lines():
    """kernel/kernel.py (the Kernel facade) is under 300 lines."""
    assert INFO["kernel.py"]["lines"] < 300


def test_the_core_has_no_runtime_import_cycle():
    """No import cycle among core modules, counting function-level imports; only TYPE_CHECKING ones are allowed."""
    assert kernel_lines.cycles(INFO) == []


def test_cycle_finder_sees_lazy_imports_and_ignores_type_checking():
    """The analysis counts a function-level import as an edge and an ``if TYPE_CHECKING:`` import as none."""
    files = {"a.py": "def f():\n    from . import b\n",
             "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\nimport zagent.a\n",
             "c.py": "from .b import x\n"}
    assert kernel_lines.cycles(kernel_lines.analyse(files)) == [["zagent.a", "zagent.b"]]


def _plugins(imported):
    return [m for m in imported if m == "zagent.plugins" or m.startswith("zagent.plugins.")]


@pytest.mark.parametrize("rel", sorted(INFO))
def test_no_kernel_module_imports_a_plugin(rel):
    """No kernel module imports ``zagent.plugins`` (not even lazily); core modules import
    no support kit."""
    imported = INFO[rel]["imports"]
    assert not _plugins(imported), (rel, imported)
    if INFO[rel]["core"]:
        kits = ("zagent.agentkit", "zagent.providerkit", "zagent.speckit")
        assert not any(m == k or m.startswith(k + ".") for m in imported for k in kits), (rel, imported)


def test_no_kernel_module_is_an_old_path_shim():
    """No module of kernel/ is a deprecated alias, and the only pure re-export modules are the public faces (an
    old import path kept as a shim is a deliberate edit here)."""
    assert not [rel for rel, v in INFO.items() if v["deprecated"]]
    shims = {rel for rel, src in kernel_lines.kernel_files().items() if kernel_lines.is_shim(kernel_lines.ast.parse(src))}
    assert shims == {"hookspecs.py", "providerkit/__init__.py", "agentkit/fields.py"}


@pytest.mark.parametrize("source, deprecated", [
    ('"""Old path."""\nimport warnings\nfrom zagent.plugins.x import y\n'
     'warnings.warn("use zagent.plugins.x", DeprecationWarning, stacklevel=2)\n__all__ = ["y"]\n', True),
    ('"""Old path."""\nfrom zagent.plugins.x import y\n__all__ = ["y"]\n', False),
    ('"""Old path."""\nimport warnings\nfrom zagent.plugins.x import y\n'
     'warnings.warn("use zagent.plugins.x", UserWarning)\n', False),
    ('"""Old path."""\nimport warnings\nfrom zagent.plugins.x import y\n'
     'warnings.warn("use x", DeprecationWarning)\ny.setup()\n', False),
])
def test_only_a_warning_re_export_is_a_deprecated_alias(source, deprecated):
    """A module is a deprecated alias only if it is a pure re-export that warns ``DeprecationWarning``: a silent
    shim, another warning category or any other statement keeps the plugin check on it (so it fails)."""
    info = kernel_lines.analyse({"old.py": source})["old.py"]
    assert info["deprecated"] is deprecated
    assert _plugins(info["imports"]) == ["zagent.plugins.x"]
