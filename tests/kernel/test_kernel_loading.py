"""Loading plugins: modules, objects, classes, import paths; problems; strict mode; several kernels."""

import types

import pytest

import zagent
from zagent import Kernel, PluginError


def module_plugin(name="plug_mod", tool_name="ping"):
    """A plugin given as a module object, registering one tool."""
    mod = types.ModuleType(name)

    def zagent_register_tools(register):
        def ping() -> str:
            "Answer pong."
            return "pong"

        register(ping, name=tool_name)

    mod.zagent_register_tools = zagent_register_tools
    return mod


class ObjectPlugin:
    """A plugin given as an instance: hooks are methods."""

    def zagent_register_tools(self, register):
        register(lambda: "obj", name="from_object")


class ClassPlugin:
    """A plugin given as a class; the kernel instantiates it."""

    def zagent_register_tools(self, register):
        register(lambda: "cls", name="from_class")


def test_module_plugin_registers_its_tool():
    """A module with a zagent_register_tools function is a plugin."""
    k = Kernel([module_plugin()], entry_points=False)
    assert k.tool("ping").handler() == "pong"


def test_object_plugin_registers_its_tool():
    """An object with zagent_* methods is a plugin."""
    k = Kernel([ObjectPlugin()], entry_points=False)
    assert k.tool("from_object").handler() == "obj"


def test_class_plugin_is_instantiated():
    """A plugin class is instantiated without arguments, so its methods get ``self``."""
    k = Kernel([ClassPlugin], entry_points=False)
    assert k.tool("from_class").handler() == "cls"


def test_import_path_plugin_is_imported(fake_site):
    """A ``"pkg.mod"`` string is imported and registered under that name."""
    (fake_site / "zt_import_path_plugin.py").write_text(
        "def zagent_register_tools(register):\n    register(lambda: 1, name='by_path')\n")
    k = Kernel(["zt_import_path_plugin"], entry_points=False)
    assert "by_path" in k.registries["tools"]
    assert "zt_import_path_plugin" in [p.name for p in k.plugins()]


def test_import_path_with_attribute(fake_site):
    """``"pkg.mod:attr"`` registers the attribute, e.g. a plugin object."""
    (fake_site / "zt_attr_plugin.py").write_text(
        "class P:\n    def zagent_register_tools(self, register):\n        register(lambda: 1, name='by_attr')\n"
        "plugin = P()\n")
    k = Kernel(["zt_attr_plugin:plugin"], entry_points=False)
    assert "by_attr" in k.registries["tools"]


def test_unprefixed_attributes_are_ignored():
    """Only ``zagent_*`` attributes are hooks; a plugin may have any other names."""
    mod = module_plugin()
    mod.register_tools = lambda register: 1 / 0
    k = Kernel([mod], strict=True, entry_points=False)
    assert [p.hooks for p in k.plugins()] == [("zagent_register_tools",)]


def test_plugins_reports_name_distribution_version_hooks(fake_dist, tool_plugin_source):
    """``k.plugins()`` lists each plugin with its distribution, version and hooks."""
    fake_dist("zagent-demo", {"demo": tool_plugin_source.format(tool="t1")}, version="2.3")
    k = Kernel()
    info = {p.name: p for p in k.plugins()}["demo"]
    assert (info.distribution, info.version, info.hooks) == ("zagent-demo", "2.3", ("zagent_register_tools",))


def test_import_error_is_reported_and_kernel_starts(fake_dist, tool_plugin_source):
    """A plugin that fails to import is a problem naming plugin, distribution and error; others load."""
    fake_dist("broken-dist", {"broken": "raise ImportError('needs libfoo')"})
    fake_dist("good-dist", {"good": tool_plugin_source.format(tool="good_tool")})
    k = Kernel()
    [problem] = k.problems
    assert (problem.plugin, problem.distribution) == ("broken", "broken-dist")
    assert "ImportError: needs libfoo" in problem.error
    assert "good_tool" in k.registries["tools"]


def test_registration_hook_raising_is_reported_and_plugin_dropped():
    """A plugin whose registration hook raises is reported and unregistered; the kernel starts."""
    mod = types.ModuleType("raiser")

    def zagent_register_tools(register):
        register(lambda: 1, name="half_done")
        raise RuntimeError("config missing")

    mod.zagent_register_tools = zagent_register_tools
    k = Kernel([mod, module_plugin()], entry_points=False)
    assert "config missing" in k.problems[0].error and k.problems[0].plugin == "raiser"
    assert "half_done" not in k.registries["tools"]
    assert "raiser" not in [p.name for p in k.plugins()]
    assert "ping" in k.registries["tools"]


def test_misspelled_hook_is_reported():
    """A ``zagent_*`` function that matches no hook spec is reported with a hint (pluggy check_pending)."""
    mod = types.ModuleType("typo")
    mod.zagent_register_tool = lambda register: None
    k = Kernel([mod], entry_points=False)
    assert "zagent_register_tool" in k.problems[0].error and "spelling" in k.problems[0].error
    assert "typo" not in [p.name for p in k.plugins()]


def test_wrong_hook_argument_is_reported():
    """An implementation asking for an argument its hook does not have is reported, not crashing."""
    mod = types.ModuleType("badargs")
    mod.zagent_register_tools = lambda register, nonsense: None
    k = Kernel([mod], entry_points=False)
    assert "nonsense" in k.problems[0].error


def test_strict_mode_raises_plugin_error():
    """``strict=True`` raises the first problem as a ``PluginError`` instead of reporting it."""
    mod = types.ModuleType("typo")
    mod.zagent_register_tool = lambda register: None
    with pytest.raises(PluginError, match="unknown hook"):
        Kernel([mod], entry_points=False, strict=True)


def test_strict_mode_from_environment(monkeypatch):
    """``ZAGENT_STRICT=1`` turns strict mode on."""
    monkeypatch.setenv("ZAGENT_STRICT", "1")
    with pytest.raises(PluginError):
        Kernel(["zt_no_such_module_anywhere"], entry_points=False)


def test_name_clash_names_both_plugins():
    """Two plugins registering the same tool name is a problem naming both."""
    k = Kernel([module_plugin("first"), module_plugin("second")], entry_points=False)
    [problem] = k.problems
    assert "'first'" in problem.error and "'second'" in problem.error
    assert "override=True" in problem.error


def test_override_wins_whatever_the_order():
    """A registration with ``override=True`` replaces the other one, loaded before or after it."""
    overrider = types.ModuleType("overrider")
    overrider.zagent_register_tools = lambda register: register(lambda: "new", name="ping", override=True)
    for plugins in ([module_plugin(), overrider], [overrider, module_plugin()]):
        k = Kernel(plugins, entry_points=False, strict=True)
        assert k.tool("ping").handler() == "new"


def test_registration_hooks_run_once_per_kernel():
    """Registration hooks run once when the kernel starts, never again on look-ups."""
    calls = []
    mod = types.ModuleType("counted")

    def zagent_register_tools(register):
        calls.append(1)
        register(lambda: 1, name="counted_tool")

    mod.zagent_register_tools = zagent_register_tools
    k = Kernel([mod], entry_points=False)
    k.tool("counted_tool"), k.tools(), k.plugins(), k.add_plugin(module_plugin("other", "other_tool"))
    assert calls == [1]


def test_kernels_are_isolated():
    """Several kernels in one process share no plugins, tools or rails."""
    a = Kernel([module_plugin()], entry_points=False)
    b = Kernel([], entry_points=False)
    b.add_tool(lambda: "b", name="only_b")
    assert "only_b" not in a.registries["tools"] and "ping" not in b.registries["tools"]
    assert a.pm is not b.pm


def test_add_plugin_later_runs_its_registrations():
    """``add_plugin`` registers a plugin on a running kernel and returns its name."""
    k = Kernel([], entry_points=False)
    assert k.add_plugin(module_plugin()) == "plug_mod"
    assert "ping" in k.registries["tools"]


def test_add_plugin_raises_when_registration_fails():
    """``add_plugin`` raises ``PluginError`` when the plugin's registration hook fails."""
    mod = types.ModuleType("late_raiser")
    mod.zagent_register_tools = lambda register: 1 / 0
    k = Kernel([], entry_points=False)
    with pytest.raises(PluginError, match="ZeroDivisionError"):
        k.add_plugin(mod)


def test_add_plugin_twice_says_already_registered():
    """Adding the same plugin object twice raises with a message saying so."""
    mod = module_plugin()
    k = Kernel([mod], entry_points=False)
    with pytest.raises(PluginError, match="already registered"):
        k.add_plugin(mod)


def test_remove_plugin_drops_what_it_registered():
    """``remove_plugin`` unregisters the plugin and removes its tools."""
    k = Kernel([module_plugin()], entry_points=False)
    k.remove_plugin("plug_mod")
    assert "ping" not in k.registries["tools"] and k.plugins() == []


def test_plugin_names_must_be_unique():
    """Two different plugins under one name: the second is a problem, not a crash."""
    k = Kernel([module_plugin("same", "t1"), module_plugin("same", "t2")], entry_points=False)
    assert "already used" in k.problems[0].error


def test_trace_hooks_prints_each_call(monkeypatch, capsys):
    """``ZAGENT_TRACE_HOOKS=1`` prints one stderr line per hook implementation call."""
    monkeypatch.setenv("ZAGENT_TRACE_HOOKS", "1")
    Kernel([module_plugin()], entry_points=False)
    assert "zagent_register_tools(kernel, register) <- plug_mod" in capsys.readouterr().err


def test_kernel_never_imports_plugins_package():
    """No module of the kernel package imports ``zagent.plugins`` (the arrow points plugins -> kernel), but the
    two deprecated aliases of the old batch paths (the rule is in tests/kernel/test_layout.py)."""
    import pathlib

    aliases = {"batch.py", "batchfiles.py"}
    for path in pathlib.Path(zagent.__file__).parent.rglob("*.py"):
        if path.parent == pathlib.Path(zagent.__file__).parent and path.name in aliases:
            continue
        for line in path.read_text().splitlines():
            words = line.split()
            assert not (words[:1] in (["import"], ["from"]) and "plugins" in " ".join(words[1:2])), f"{path}: {line}"


def test_plugin_declared_hookspecs_accept_implementations_in_any_order():
    """A plugin's zagent_hookspecs are added before any hook is checked, so order does not matter."""
    import types

    from zagent import Kernel
    from zagent.hookspecs import hookspec

    specs = types.ModuleType("owner_specs")

    @hookspec
    def zagent_register_widgets(register):
        """Register widgets."""

    specs.zagent_register_widgets = zagent_register_widgets

    class Owner:
        zagent_hookspecs = specs

    class User:
        def zagent_register_widgets(self, register):
            register("w")

    k = Kernel(plugins=[User(), Owner()], entry_points=False, strict=True)
    seen = []
    for impl in k.hooks.impls("zagent_register_widgets"):
        k.hooks.call_one("zagent_register_widgets", impl, {"register": seen.append})
    assert seen == ["w"]


def test_implementation_of_undeclared_hook_is_still_reported():
    """Without the plugin that declares a hook, an implementation of it is a reported problem."""
    from zagent import Kernel

    class User:
        def zagent_register_widgets(self, register):
            register("w")

    k = Kernel(plugins=[User()], entry_points=False)
    assert any("zagent_register_widgets" in p.error for p in k.problems)
    assert k.plugins() == []
