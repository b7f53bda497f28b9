"""Meta-tests: every hook spec is documented in docs/hooks.md and exercised by a test in tests/kernel/."""

import pathlib

import pytest

from zagent import Kernel

HERE = pathlib.Path(__file__).parent
DOCS = HERE.parent.parent / "docs" / "hooks.md"


def hook_specs():
    pm = Kernel(entry_points=False).pm
    return {name: getattr(pm.hook, name).spec.argnames for name in dir(pm.hook) if name.startswith("zagent_")}


SPECS = hook_specs()


@pytest.mark.parametrize("hook", sorted(SPECS))
def test_hook_is_documented_with_signature(hook):
    """Every hook has a section in docs/hooks.md headed by its full signature ``name(arg1, arg2)``."""
    signature = f"{hook}({', '.join(SPECS[hook])})"
    assert f"### {signature}" in DOCS.read_text(), f"docs/hooks.md has no section '### {signature}'"


@pytest.mark.parametrize("hook", sorted(SPECS))
def test_hook_has_a_kernel_test(hook):
    """Every hook is named in some kernel test module other than this one."""
    sources = [p.read_text() for p in HERE.glob("test_*.py") if p.name != pathlib.Path(__file__).name]
    assert any(hook in s for s in sources), f"no test in tests/kernel/ exercises {hook}"


def test_every_hook_has_a_docstring_with_params():
    """Every hook spec's docstring documents its parameters (``:param name:``) and gives an example."""
    pm = Kernel(entry_points=False).pm
    for name, argnames in SPECS.items():
        doc = getattr(pm.hook, name).spec.function.__doc__ or ""
        for arg in argnames:
            assert f":param {arg}:" in doc, f"{name} does not document {arg}"
        assert "Example::" in doc, f"{name} has no example"
