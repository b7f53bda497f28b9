"""Meta-tests: every hook spec, the kernel's and every built-in plugin's own, is documented and exercised.

The built-in plugins are those setup.cfg publishes in entry-point group ``zagent``;
they are loaded by import path (``entry_points=False``), so the test sees their
``zagent_hookspecs`` whatever is installed.
"""

import configparser
import pathlib

import pytest

from zagent import Kernel

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parent.parent
DOCS = ROOT / "docs" / "hooks.md"


def builtin_plugins():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    lines = cfg["options.entry_points"]["zagent"].strip().splitlines()
    return [line.split("=", 1)[1].strip() for line in lines if "=" in line]


def hook_specs():
    """``{hook: (argnames, owner)}``; owner is ``None`` for a kernel hook, else the plugin package's last name."""
    with Kernel(plugins=builtin_plugins(), entry_points=False, strict=True) as k:
        specs = {}
        for name in dir(k.pm.hook):
            caller = getattr(k.pm.hook, name)
            if not name.startswith("zagent_") or caller.spec is None:
                continue
            module = caller.spec.function.__module__
            owner = module.split(".")[2] if module.startswith("zagent.plugins.") else None
            specs[name] = (caller.spec.argnames, owner, caller.spec.function.__doc__ or "")
        return specs


SPECS = hook_specs()


def test_builtin_plugins_own_hooks_are_seen():
    """The plugin-owned hooks (group chat selectors, skills) are among the specs checked here."""
    owned = {h for h, (_, owner, _) in SPECS.items() if owner}
    assert {"zagent_register_speaker_selectors", "zagent_register_skills"} <= owned


@pytest.mark.parametrize("hook", sorted(SPECS))
def test_hook_is_documented_with_signature(hook):
    """Every hook has a section in docs/hooks.md headed by its full signature ``name(arg1, arg2)``."""
    signature = f"{hook}({', '.join(SPECS[hook][0])})"
    assert f"### {signature}" in DOCS.read_text(), f"docs/hooks.md has no section '### {signature}'"


@pytest.mark.parametrize("hook", sorted(SPECS))
def test_hook_has_a_test(hook):
    """A kernel hook is named in a kernel test module other than this one; a plugin's in that plugin's tests."""
    owner = SPECS[hook][1]
    where = HERE if owner is None else ROOT / "tests" / owner
    sources = [p.read_text() for p in where.glob("test_*.py") if p.resolve() != pathlib.Path(__file__).resolve()]
    assert any(hook in s for s in sources), f"no test in {where.relative_to(ROOT)}/ exercises {hook}"


def test_every_hook_has_a_docstring_with_params():
    """Every hook spec's docstring documents its parameters (``:param name:``) and gives an example."""
    for name, (argnames, _, doc) in SPECS.items():
        for arg in argnames:
            assert f":param {arg}:" in doc, f"{name} does not document {arg}"
        assert "Example::" in doc, f"{name} has no example"
