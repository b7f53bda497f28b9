"""Meta-tests: every hook spec, the kernel's and every built-in plugin's own, is documented and exercised.

The built-in plugins are those setup.cfg publishes in entry-point group ``zagent``;
they are loaded by import path (``entry_points=False``), so the test sees their
``zagent_hookspecs`` whatever is installed. A static scan of the sources (kernel
``_hooks/specs.py``, ``plugins/``, ``contrib/*/``) finds every function marked
``@hookspec`` or ``@registry_hookspec(...)``, so a spec a loaded plugin does not
declare, or one in a contrib distribution that is not installed here, is checked
too. docs/hooks.md's index table lists every hook with its owner.
"""

import ast
import configparser
import pathlib
import re

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


def _is_spec_marker(decorator):
    """``@hookspec``, ``@markers.hookspec``, ``@registry_hookspec(...)`` or any ``HookspecMarker`` instance call."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in ("hookspec", "registry_hookspec") or "HookspecMarker" in ast.unparse(decorator)


def _owner(rel):
    """``None`` for the kernel, else the plugin package (``plugins/<name>``) or contrib distribution name."""
    parts = rel.parts
    if parts[0] == "kernel":
        return None
    return parts[1] if parts[0] == "contrib" else parts[1].removesuffix(".py")


def declared_specs(root):
    """``{hook: (argnames, owner)}`` of every spec function in ``root``'s sources, read with ``ast`` (no import):
    kernel/_hooks/specs*.py, plugins/**, contrib/*/** outside the distributions' tests."""
    sources = [*(root / "kernel" / "_hooks").glob("specs*.py"), *(root / "plugins").rglob("*.py"),
               *(p for p in (root / "contrib").rglob("*.py") if "tests" not in p.relative_to(root).parts)]
    found = {}
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            function = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            if function and any(map(_is_spec_marker, node.decorator_list)):
                args = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
                found[node.name] = (tuple(a for a in args if a != "self"), _owner(path.relative_to(root)))
    return found


SPECS = hook_specs()
DECLARED = declared_specs(ROOT)
#: every hook with (argnames, owner): the loaded specs plus declared ones no loaded plugin has (contrib)
ALL = {**{h: (args, owner) for h, (args, owner, _) in SPECS.items()},
       **{h: v for h, v in DECLARED.items() if h not in SPECS}}


def _tests_of(owner):
    """Where a hook's tests live: tests/kernel, tests/<plugin>, or contrib/<distribution>/tests."""
    if owner is None:
        return HERE
    return ROOT / "contrib" / owner / "tests" if (ROOT / "contrib" / owner).is_dir() else ROOT / "tests" / owner


def test_every_declared_spec_is_loaded_with_its_owner():
    """Every spec declared in kernel/_hooks/specs.py or a built-in plugin is a hook of a Kernel loading the built-in
    plugins, with the same arguments and owner (so a spec a plugin forgets to name in ``zagent_hookspecs``,
    or a kernel spec ``zagent.hookspecs`` does not export, fails here)."""
    builtin = {h: v for h, v in DECLARED.items() if v[1] is None or (ROOT / "plugins" / v[1]).exists()
               or (ROOT / "plugins" / f"{v[1]}.py").exists()}
    assert builtin == {h: (tuple(args), owner) for h, (args, owner, _) in SPECS.items()}


def test_the_spec_scan_finds_kernel_plugin_and_contrib_specs(tmp_path):
    """The static scan sees ``@hookspec``, ``@registry_hookspec(...)`` and ``HookspecMarker`` specs in the
    kernel, a plugin and a contrib distribution, and skips contrib tests (so the checks here can fail)."""
    (tmp_path / "kernel" / "_hooks").mkdir(parents=True)
    (tmp_path / "kernel" / "_hooks" / "specs_extra.py").write_text("@hookspec\ndef zagent_a(x, y):\n    pass\n")
    (tmp_path / "plugins" / "chat").mkdir(parents=True)
    (tmp_path / "plugins" / "chat" / "hookspecs.py").write_text(
        '@registry_hookspec("k", noun="n")\ndef zagent_register_b(register, kernel):\n    pass\n')
    (tmp_path / "contrib" / "zagent-x" / "zagent_x").mkdir(parents=True)
    (tmp_path / "contrib" / "zagent-x" / "zagent_x" / "specs.py").write_text(
        "import pluggy\n@pluggy.HookspecMarker('zagent')\ndef zagent_c(event):\n    pass\n")
    (tmp_path / "contrib" / "zagent-x" / "tests").mkdir()
    (tmp_path / "contrib" / "zagent-x" / "tests" / "test_x.py").write_text("@hookspec\ndef zagent_d():\n    pass\n")
    assert declared_specs(tmp_path) == {"zagent_a": (("x", "y"), None),
                                        "zagent_register_b": (("register", "kernel"), "chat"),
                                        "zagent_c": (("event",), "zagent-x")}


def test_builtin_plugins_own_hooks_are_seen():
    """The plugin-owned hooks (group chat selectors, skills) are among the specs checked here."""
    owned = {h for h, (_, owner, _) in SPECS.items() if owner}
    assert {"zagent_register_speaker_selectors", "zagent_register_skills"} <= owned


@pytest.mark.parametrize("hook", sorted(ALL))
def test_hook_is_documented_with_signature(hook):
    """Every hook has a section in docs/hooks.md headed by its full signature ``name(arg1, arg2)``."""
    signature = f"{hook}({', '.join(ALL[hook][0])})"
    assert f"### {signature}" in DOCS.read_text(), f"docs/hooks.md has no section '### {signature}'"


def test_every_hook_section_names_a_hook():
    """Every ``### zagent_*`` section of docs/hooks.md is the signature of a hook that exists (no stale docs)."""
    sections = re.findall(r"^### (zagent_\w+)\((.*)\)$", DOCS.read_text(), re.M)
    stale = [f"{h}({a})" for h, a in sections if h not in ALL or ", ".join(ALL[h][0]) != a]
    assert not stale, f"docs/hooks.md documents hooks that do not exist (or with other arguments): {stale}"


def test_the_hook_index_lists_every_hook_with_its_owner():
    """docs/hooks.md's index table has one row per hook naming its owner: ``kernel`` or ``<name> plugin``."""
    rows = dict(re.findall(r"^\| \[`(zagent_\w+)`\]\(#[\w-]+\) \| ([\w -]+?) \|", DOCS.read_text(), re.M))
    expected = {h: "kernel" if owner is None else f"{owner} plugin" for h, (_, owner) in ALL.items()}
    assert rows == expected


@pytest.mark.parametrize("hook", sorted(ALL))
def test_hook_has_a_test(hook):
    """A kernel hook is named in a kernel test module other than this one; a plugin's in that plugin's tests
    (a contrib distribution's in its own tests/)."""
    where = _tests_of(ALL[hook][1])
    sources = [p.read_text() for p in where.glob("test_*.py") if p.resolve() != pathlib.Path(__file__).resolve()]
    assert any(hook in s for s in sources), f"no test in {where.relative_to(ROOT)}/ exercises {hook}"


def _hook_section(hook):
    """The text of docs/hooks.md's ``### hook(...)`` section."""
    text = DOCS.read_text()
    start = text.index(f"### {hook}(")
    return re.split(r"^##", text[start + 3:], maxsplit=1, flags=re.M)[0]


def test_every_hook_has_a_docstring():
    """Every hook spec has a docstring (its contract in a few lines; the long form is docs/hooks.md's)."""
    undocumented = [name for name, (_, _, doc) in SPECS.items() if not doc.strip()]
    assert not undocumented


@pytest.mark.parametrize("hook", sorted(ALL))
def test_every_hook_section_names_its_arguments_and_has_an_example(hook):
    """docs/hooks.md's section of each hook names each of its arguments (in backquotes) and has a Python
    example."""
    section = _hook_section(hook)
    for arg in ALL[hook][0]:
        assert re.search(rf"`{arg}\b", section), f"docs/hooks.md's {hook} section does not describe {arg}"
    assert "```python" in section, f"docs/hooks.md's {hook} section has no example"
