"""A test plugin loaded on the driver and on Ray workers: the ``die-once`` agent type.

``die-once`` answers ``{"n": n, "pid": its process id}``; for an item with
``"die": true`` it first writes its pid to ``<flag_dir>/<n>.killed`` and
SIGKILLs its own process, once per item (the flag file remembers), the way a
worker lost mid-item (OOM killer, a node going away) dies.
"""

import os
import signal


class DieOnce:
    def __init__(self, spec, kernel):
        self.name = spec.get("name", "die-once")
        self.flag_dir = spec["flag_dir"]

    async def aexecute(self, inputs):
        flag = os.path.join(self.flag_dir, f"{inputs['n']}.killed")
        if inputs.get("die") and not os.path.exists(flag):
            with open(flag, "w") as f:
                f.write(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return {"n": inputs["n"], "pid": os.getpid()}


def zagent_register_agent_types(register):
    register("die-once", DieOnce)


def shout(text: str) -> str:
    """Say a text loudly (a tool named by import path in a spec)."""
    return text.upper()
