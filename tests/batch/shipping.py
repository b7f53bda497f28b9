"""A test executor that ships units the way a remote one does, without a cluster.

Each unit's ``runner`` and ``payload`` go through JSON (as they would over the
wire) and run with ``zagent.agentkit.units.run_unit`` on a separate "worker"
kernel: anything a unit needs and does not carry fails here as it would on
Ray. ``lose`` makes the first tries of the named keys raise ``UnitLost``
(a set: once each; a dict: that many times).
"""

import msgspec
from zagent import Kernel
from zagent.agentkit.units import UnitLost, run_unit

from .conftest import PLUGINS


class ShippingExecutor:
    name = "shipping"
    in_process = False
    concurrency = 4

    def __init__(self, lose=()):
        self.worker = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
        self.lose = dict(lose) if isinstance(lose, dict) else {key: 1 for key in lose}
        self.keys = []

    async def submit(self, unit):
        runner, payload = unit.remote_parts(self.name)
        self.keys.append(unit.key)
        if self.lose.get(unit.key, 0) > 0:
            self.lose[unit.key] -= 1
            raise UnitLost(f"worker running {unit.key!r} died")
        wire = msgspec.json.decode(msgspec.json.encode(payload))
        result = await run_unit(self.worker, runner, wire)
        return msgspec.json.decode(msgspec.json.encode(result))

    async def aclose(self):
        await self.worker.aclose()


class ShippingPlugin:
    """Registers ``shipping`` through the executor hook; remembers the executors it made."""

    def __init__(self):
        self.made = []

    def zagent_register_executors(self, register):
        def make(**options):
            ex = ShippingExecutor(**options)
            self.made.append(ex)
            return ex

        register("shipping", make)
