"""Fixtures for kernel tests: fake installed distributions on a temporary ``sys.path``.

``fake_dist`` writes ``<name>-<version>.dist-info/entry_points.txt`` and plugin
modules into ``tmp_path`` and makes the kernel's entry-point scan look only
there, so tests of entry-point loading never see the real installed plugins.
Module names are unique per test, and every module imported from
``tmp_path`` is removed from ``sys.modules`` afterwards.
"""

import sys
import textwrap

import pytest

from zagent._hooks import entrypoints


@pytest.fixture
def fake_site(tmp_path, monkeypatch):
    """A directory importable as a site, the only place the kernel's entry-point scan looks."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    real_scan = entrypoints.scan
    monkeypatch.setattr(entrypoints, "scan", lambda group, path=None: real_scan(group, [str(site)]))
    before = set(sys.modules)
    yield site
    for name in set(sys.modules) - before:
        if name.startswith("zt_"):
            del sys.modules[name]


@pytest.fixture
def fake_dist(fake_site, request):
    """``fake_dist(dist, {ep_name: module_source}) -> {ep_name: module_name}``: install a fake distribution."""
    counter = iter(range(1000))
    prefix = "zt_" + "".join(c if c.isalnum() else "_" for c in request.node.name)[:40]

    def make(dist: str, plugins: dict, version: str = "1.0") -> dict:
        names = {}
        lines = ["[zagent]"]
        for ep_name, source in plugins.items():
            module = f"{prefix}_{next(counter)}"
            (fake_site / f"{module}.py").write_text(textwrap.dedent(source))
            lines.append(f"{ep_name} = {module}")
            names[ep_name] = module
        meta = fake_site / f"{dist}-{version}.dist-info"
        meta.mkdir()
        (meta / "entry_points.txt").write_text("\n".join(lines) + "\n")
        return names

    return make


TOOL_PLUGIN = '''
def zagent_register_tools(register):
    def ping() -> str:
        "Answer pong."
        return "pong"
    register(ping, name="{tool}")
'''


@pytest.fixture
def tool_plugin_source():
    """Source of a plugin module registering one tool named by ``.format(tool=...)``."""
    return TOOL_PLUGIN
