"""The executor hook (zagent_register_executors), Kernel.executor and the built-in local executor."""

import pytest

from zagent import ConfigError, Kernel
from zagent._runs.executors import LocalExecutor
from zagent.agentkit.units import Unit


class Echo:
    """An agent-like object: ``aexecute(inputs=...)`` answers with its inputs."""

    name = "echo"

    async def aexecute(self, inputs):
        return {"echo": dict(inputs)}


class Counting:
    """An executor running units in process and counting them."""

    name = "counting"
    in_process = True
    concurrency = 3

    def __init__(self, **options):
        self.options, self.keys = options, []

    async def submit(self, unit):
        self.keys.append(unit.key)
        return await unit.local()

    async def aclose(self):
        pass


class CountingPlugin:
    """Registers ``counting``; keeps the executors it made."""

    def __init__(self):
        self.made = []

    def zagent_register_executors(self, register, kernel):
        def make(**options):
            self.made.append(Counting(**options))
            return self.made[-1]

        register("counting", make)


def test_registered_executor_is_built_with_options():
    """kernel.executor(name, **options) calls the factory a plugin registered through zagent_register_executors."""
    k = Kernel(plugins=[CountingPlugin()], entry_points=False, strict=True)
    ex = k.executor("counting", shards=2)
    assert isinstance(ex, Counting) and ex.options == {"shards": 2}


def test_default_executor_is_local_and_config_names_another():
    """Without a name the executor is the built-in local one; config['executor'] picks a registered one."""
    assert isinstance(Kernel(entry_points=False).executor(), LocalExecutor)
    k = Kernel(plugins=[CountingPlugin()], entry_points=False, config={"executor": "counting"})
    assert isinstance(k.executor(), Counting)


def test_unknown_executor_names_the_installed_ones():
    """An unknown executor name is a ConfigError listing local and the registered executors."""
    k = Kernel(plugins=[CountingPlugin()], entry_points=False)
    with pytest.raises(ConfigError, match=r"unknown executor 'ray'.*local, counting"):
        k.executor("ray")


def test_batch_hands_each_item_to_the_named_executor():
    """Kernel.batch gives every item to the executor named by ``executor`` as one unit keyed by id or line."""
    plugin = CountingPlugin()
    k = Kernel(plugins=[plugin, "zagent.plugins.batch"], entry_points=False)
    report = k.batch(Echo(), [{"id": "a", "x": 1}, {"x": 2}], executor="counting")
    assert sorted(plugin.made[0].keys) == ["a", "line 2"]
    assert [r["output"] for r in report.results] == [{"echo": {"x": 1}}, {"echo": {"x": 2}}]


def test_object_units_cannot_travel():
    """A unit without runner/payload (Python objects) refuses to go to a remote executor, naming the way out."""
    unit = Unit(key="k1", local=lambda: None)
    with pytest.raises(ConfigError, match="cannot be sent to executor 'ray'.*spec"):
        unit.remote_parts("ray")


def test_batch_without_a_driver_names_the_plugin_to_add():
    """Kernel.batch on a kernel with no batch driver (no batch plugin) is a ConfigError naming zagent.plugins.batch."""
    k = Kernel(entry_points=False)
    with pytest.raises(ConfigError, match=r"zagent\.plugins\.batch"):
        k.batch(Echo(), [{"x": 1}])


def test_batch_goes_to_the_registered_batch_driver():
    """Kernel.abatch hands target, inputs and options to the driver registered by zagent_register_batch_drivers."""
    seen = []

    class Driver:
        def zagent_register_batch_drivers(self, register):
            async def driver(kernel, target, inputs, **options):
                seen.append((kernel, target, inputs, options))
                return "report"

            register("default", driver)

    k = Kernel(plugins=[Driver()], entry_points=False)
    assert k.batch("t", [1], concurrency=2) == "report"
    assert seen == [(k, "t", [1], {"concurrency": 2})]
