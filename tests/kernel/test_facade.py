"""Plugins reach the kernel through its facade: ``find``/``names``/``entries`` for registries,
``has_impls``/``call_each``/``arun_end`` for hooks, ``has_plugin`` for the plugin manager. No module of
``plugins/`` or a ``contrib/`` package touches ``kernel.registries``, ``kernel.hooks`` or ``kernel.pm``
(read with ``ast``; nothing is allow-listed).
"""

import ast
import asyncio
import pathlib
import sys

import pytest

import zagent
from zagent import Kernel, hookimpl

ROOT = pathlib.Path(__file__).parent.parent.parent
INTERNALS = {"registries", "hooks", "pm"}


def plugin_files():
    """Every Python file of plugins/ and of each contrib package's source folder (their tests left out)."""
    roots = [ROOT / "plugins"] + [p for p in sorted((ROOT / "contrib").glob("*/*"))
                                  if p.is_dir() and (p / "__init__.py").exists() and p.name not in ("tests", "examples")]
    return [f for r in roots for f in sorted(r.rglob("*.py"))]


def _base(node):
    """The last name of an attribute's object: ``kernel`` for ``self.kernel.x``, ``k`` for ``k.x``."""
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def reaches(source):
    """``[(line, text)]`` of each access past the facade in ``source``: ``<x>.registries`` / ``<x>.pm``
    anywhere, ``<x>.hooks`` on something named like a kernel or used further (``x.hooks.y``, ``x.hooks[..]``),
    and ``getattr(x, "registries" | "hooks" | "pm")``. (``PluginInfo.hooks``, a tuple of names, is data.)"""
    found = []
    tree = ast.parse(source)
    used = {id(n.value) for n in ast.walk(tree) if isinstance(n, (ast.Attribute, ast.Subscript))}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in INTERNALS:
            if node.attr != "hooks" or "kernel" in _base(node.value) or _base(node.value) == "k" or id(node) in used:
                found.append((node.lineno, ast.unparse(node)))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
              and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value in INTERNALS):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_scan_covers_plugins_and_contrib():
    """The scan reads the built-in plugins and every contrib package's source."""
    rels = {f.relative_to(ROOT).parts[:2] for f in plugin_files()}
    assert ("plugins", "react") in rels and ("plugins", "cli.py") in rels
    assert {("contrib", "zagent-mcp"), ("contrib", "zagent-otel"), ("contrib", "zagent-ray")} <= rels


@pytest.mark.parametrize("source, hits", [
    ('kernel.registries["tools"].get("x")', 1),
    ("self.kernel.hooks.active('zagent_event')", 1),
    ("ctx.kernel.pm.has_plugin('p')", 1),
    ("h = k.hooks", 1),
    ("getattr(kernel, 'pm')", 1),
    ("rows = [i.hooks for i in kernel.plugins()]", 0),
    ("kernel.find('tools', 'x')", 0),
])
def test_the_scan_finds_reaches_past_the_facade(source, hits):
    """Registry, hook runner and plugin manager accesses are found; data fields named ``hooks`` are not."""
    assert len(reaches(source)) == hits, reaches(source)


def test_no_plugin_reaches_past_the_facade():
    """No plugin or contrib module uses ``kernel.registries``, ``kernel.hooks`` or ``kernel.pm``."""
    found = [f"{f.relative_to(ROOT)}:{line}: {text}" for f in plugin_files()
             for line, text in reaches(f.read_text(encoding="utf-8"))]
    assert not found, "use the Kernel facade (find, names, entries, registry_of, has_impls, call_each, arun_end, has_plugin):\n" \
        + "\n".join(found)


def _add(kernel, name="adder"):
    @zagent.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return kernel.add_tool(add, plugin=name)


def test_find_gives_the_registered_object_or_none():
    """``find`` gives what is registered under a name, and ``None`` for a missing name or an undeclared kind."""
    k = Kernel(entry_points=False)
    tool = _add(k)
    assert k.find("tools", "add") is tool
    assert k.find("tools", "nope") is None
    assert k.find("no_such_kind", "add") is None


def test_names_are_sorted_and_empty_for_an_undeclared_kind():
    """``names`` lists a kind's names sorted, and nothing for a kind no loaded plugin declares."""
    k = Kernel(["zagent.plugins.parsers"], entry_points=False)
    assert k.names("parsers") == sorted(k.names("parsers")) and "json" in k.names("parsers")
    assert k.names("speaker_selectors") == []


def test_entries_are_one_tuple_until_the_kind_changes():
    """``entries`` gives the same tuple while a kind is unchanged and a new one, with the plugin, after a change."""
    k = Kernel(entry_points=False)
    before = k.entries("tools")
    assert before == () and k.entries("tools") is before
    _add(k, name="mine")
    after = k.entries("tools")
    assert after is not before and [(e.name, e.plugin) for e in after] == [("add", "mine")]
    assert k.entries("tools") is after
    k.remove_tool("add")
    assert k.entries("tools") == ()


class _Ends:
    def __init__(self):
        self.seen = []

    @hookimpl
    def zagent_run_end(self, result, ctx):
        self.seen.append((result, ctx.run_id))


def test_has_impls_and_arun_end():
    """``has_impls`` says whether a hook has an implementation; ``arun_end`` runs ``zagent_run_end`` ones."""
    k = Kernel(entry_points=False)
    assert not k.has_impls("zagent_run_end")
    asyncio.run(k.arun_end("nobody listens", k.context(run_id="r0")))
    ends = _Ends()
    k.add_plugin(ends, name="ends")
    assert k.has_impls("zagent_run_end")
    asyncio.run(k.arun_end("done", k.context(run_id="r1")))
    assert ends.seen == [("done", "r1")]


class _Commands:
    def __init__(self, name, fail=False):
        self.name, self.fail = name, fail

    @hookimpl
    def zagent_register_commands(self, cli, kernel):
        if self.fail:
            raise RuntimeError("broken")
        return (self.name, cli)


def test_call_each_hands_back_every_result_and_failure():
    """``call_each`` calls each implementation with its own arguments and hands back each result or error."""
    k = Kernel([_Commands("a"), _Commands("b", fail=True)], entry_points=False)
    out = {plugin: (result, exc) for plugin, result, exc in
           k.call_each("zagent_register_commands", lambda plugin: {"cli": f"cli-{plugin}", "kernel": k})}
    [(ok, ok_exc)] = [v for v in out.values() if v[1] is None]
    [(bad, bad_exc)] = [v for v in out.values() if v[1] is not None]
    assert ok[0] == "a" and ok[1].startswith("cli-") and ok_exc is None
    assert bad is None and isinstance(bad_exc, RuntimeError)


def test_has_plugin_by_name_and_by_object():
    """``has_plugin`` finds a plugin by its name or by the object registered."""
    k = Kernel(["zagent.plugins.parsers"], entry_points=False)
    module = sys.modules["zagent.plugins.parsers"]
    assert k.has_plugin(module) and k.has_plugin(k.plugins()[0].name)
    assert not k.has_plugin("nope") and not k.has_plugin(object())
