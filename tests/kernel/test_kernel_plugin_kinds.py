"""Plugin-owned registry kinds: ``registry_hookspec`` in a plugin's ``zagent_hookspecs`` gives a kernel registry."""

import pytest

from zagent import Kernel, PluginError
from zagent._registry.registries import registry_hookspec


class ForecastSpecs:
    @registry_hookspec("forecasters", noun="forecaster")
    def zagent_register_forecasters(register, kernel):
        """Register forecasters. :param register: adds one. :param kernel: the kernel. Example:: register('a', f)"""


class Owner:
    zagent_hookspecs = ForecastSpecs


class Sunny:
    def zagent_register_forecasters(self, register):
        register("sunny", lambda: "sun")


@pytest.fixture
def kernel():
    k = Kernel(plugins=[Owner()], entry_points=False, strict=True)
    yield k
    k.close()


def test_a_declared_kind_gets_a_registry_filled_through_its_hook(kernel):
    """kernel.registries[kind] exists and holds what a plugin registers, with the plugin's name."""
    kernel.add_plugin(Sunny(), name="sunny-plugin")
    reg = kernel.registries["forecasters"]
    assert reg.get("sunny")() == "sun" and reg.entry("sunny").plugin == "sunny-plugin"
    assert (reg.hook, reg.noun) == ("zagent_register_forecasters", "forecaster") and reg.owner.startswith("Owner-")


def test_an_implementation_given_before_the_owner_at_start_up_registers():
    """Order of Kernel(plugins=[...]) does not matter: specs are added before hooks are checked."""
    with Kernel(plugins=[Sunny(), Owner()], entry_points=False, strict=True) as k:
        assert "sunny" in k.registries["forecasters"]


def test_a_clash_in_a_plugin_kind_names_both_plugins(kernel):
    """Two plugins registering one name without override: the kernel's clash error names both."""
    kernel.add_plugin(Sunny(), name="one")
    with pytest.raises(PluginError, match="forecaster 'sunny' is registered by both plugin 'one' and plugin 'two'"):
        kernel.add_plugin(Sunny(), name="two")
    assert kernel.registries["forecasters"].entry("sunny").plugin == "one"


def test_a_plugin_refused_by_add_plugin_is_not_left_registered(kernel):
    """add_plugin raising for a clash leaves neither the plugin nor any of its other entries behind."""

    class Both:
        def zagent_register_forecasters(self, register):
            register("cloudy", lambda: "clouds")
            register("sunny", lambda: "other sun")

    kernel.add_plugin(Sunny(), name="one")
    with pytest.raises(PluginError, match="'sunny' is registered by both"):
        kernel.add_plugin(Both(), name="both")
    assert "both" not in [p.name for p in kernel.plugins()]
    assert "cloudy" not in kernel.registries["forecasters"]


def test_override_wins_in_a_plugin_kind_whatever_the_order(kernel):
    """override=True replaces another plugin's entry of the same name even when registered first."""

    class Rainy:
        def zagent_register_forecasters(self, register):
            register("sunny", lambda: "rain", override=True)

    kernel.add_plugin(Rainy(), name="rainy")
    kernel.add_plugin(Sunny(), name="sunny")
    assert kernel.registries["forecasters"].get("sunny")() == "rain"


def test_a_bad_register_call_drops_the_plugin_naming_it(kernel):
    """register() with one argument (no object) is refused with what to write instead."""

    class Bad:
        def zagent_register_forecasters(self, register):
            register("lonely")

    with pytest.raises(PluginError, match=r"plugin 'bad' failed in zagent_register_forecasters: .*register\(name, obj"):
        kernel.add_plugin(Bad(), name="bad")
    assert "bad" not in [p.name for p in kernel.plugins()]


def test_remove_plugin_drops_its_entries_and_changes_the_entries_tuple(kernel):
    """A removed plugin's entries go; ``Kernel.entries`` is a new tuple then, so caches notice."""
    kernel.add_plugin(Sunny(), name="sunny")
    reg = kernel.registries["forecasters"]
    before = kernel.entries("forecasters")
    assert kernel.entries("forecasters") is before
    kernel.remove_plugin("sunny")
    assert "sunny" not in reg and kernel.entries("forecasters") is not before


def test_a_plugin_kind_may_not_take_a_builtin_kinds_name():
    """Declaring kind 'tools' with another hook is a PluginError naming the kind."""

    class Specs:
        @registry_hookspec("tools", noun="tool")
        def zagent_register_gadgets(register, kernel):
            """x"""

    class Thief:
        zagent_hookspecs = Specs

    with pytest.raises(PluginError, match="registry kind 'tools', which zagent already declares"):
        Kernel(plugins=[Thief()], entry_points=False, strict=True)


def test_a_hook_another_module_specifies_is_refused():
    """Two spec namespaces declaring one hook name: the second plugin is refused naming the hook."""

    class OtherSpecs:
        @registry_hookspec("forecasters", noun="forecaster")
        def zagent_register_forecasters(register, kernel):
            """x"""

    class Other:
        zagent_hookspecs = OtherSpecs

    with pytest.raises(PluginError, match="declares hook 'zagent_register_forecasters', which .* already specifies"):
        Kernel(plugins=[Owner(), Other()], entry_points=False, strict=True)


def test_the_owner_removed_and_added_back_is_accepted(kernel):
    """Adding the same spec namespace again is a no-op, so the owner can be re-added."""
    kernel.remove_plugin(kernel.plugins()[0].name)
    kernel.add_plugin(Owner(), name="owner-again")
    kernel.add_plugin(Sunny(), name="sunny")
    assert "sunny" in kernel.registries["forecasters"]


def test_a_kind_name_must_be_an_identifier():
    """registry_hookspec refuses a kind name that is not an identifier."""
    with pytest.raises(ValueError, match="must be an identifier"):
        registry_hookspec("two words", noun="x")
