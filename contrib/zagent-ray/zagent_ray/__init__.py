"""zagent-ray: run zagent units of work (batch items, workflow node runs) as Ray tasks.

``zagent batch ... --executor ray`` (or with ``RAY_ADDRESS`` set), or
``Kernel.executor("ray", address=..., ...)``. See ``zagent_ray.executor``.
Importing this package does not import Ray: that happens on the first unit.
"""

from zagent.agentkit.lazy import lazy_exports

__all__ = ["RayExecutor"]
__getattr__ = lazy_exports(__name__, {"RayExecutor": "executor"})
