"""``RayExecutor``: zagent units of work (``zagent.agentkit.units``) as Ray tasks, connecting on the first unit
(``address``, else ``RAY_ADDRESS``, else a local Ray). A unit whose worker died past Ray's ``max_retries`` raises
``UnitLost``; one that raised, ``UnitFailed`` with the remote type name. ``concurrency``: twice the cluster's CPUs
over ``task_cpus``, at least 2. Workers never import from the driver's working folder (an empty ``working_dir``)."""

from __future__ import annotations

import os
import tempfile
from typing import Any, Optional

import msgspec
from zagent.errors import ConfigError
from zagent.agentkit.units import Unit, UnitFailed, UnitLost

_encode = msgspec.json.Encoder(enc_hook=str)


class RayExecutor:
    """Runs units as Ray tasks (see the module docstring).

    :param address: a Ray cluster address (``"auto"``, ``"HOST:6379"``, ``"ray://HOST:10001"``);
        default ``RAY_ADDRESS``, else a local Ray.
    :param num_cpus: CPUs of a local Ray started here (ignored when connecting to a cluster).
    :param task_cpus: CPUs Ray reserves per task (lower it for LLM-bound units, e.g. 0.25).
    :param max_retries: Ray's re-runs of a task whose worker died.
    :param plugins: extra plugin import paths workers add to their kernel.
    :param runtime_env: Ray runtime environment for the tasks (env vars, working_dir, pip).
    :param kernel_config: the config workers' kernels get (the plugin passes the driver's, secrets removed).
    :param shutdown: call ``ray.shutdown()`` in ``aclose`` if this executor started Ray.
    """

    name = "ray"
    in_process = False

    def __init__(self, *, address: Optional[str] = None, num_cpus: Optional[int] = None, task_cpus: float = 1.0,
                 max_retries: int = 3, plugins: Any = (), runtime_env: Optional[dict[str, Any]] = None,
                 kernel_config: Optional[dict[str, Any]] = None, shutdown: bool = False):
        if task_cpus <= 0:
            raise ConfigError(f"task_cpus must be more than 0, got {task_cpus}")
        if max_retries < 0:
            raise ConfigError(f"max_retries must be 0 or more, got {max_retries}")
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.num_cpus, self.task_cpus, self.max_retries = num_cpus, task_cpus, max_retries
        self.runtime_env = runtime_env
        self.shutdown = shutdown
        self._setup = _encode.encode({"config": kernel_config or {}, "plugins": list(plugins)})
        self._ray: Any = None
        self._task: Any = None
        self._started = False

    def _ensure(self) -> Any:
        if self._task is not None:
            return self._ray
        try:
            import ray
        except ImportError:  # pragma: no cover - ray is a dependency of this distribution
            raise ConfigError("the ray executor needs Ray: pip install zagent-ray") from None
        if not ray.is_initialized():
            options: dict[str, Any] = {"ignore_reinit_error": True, "log_to_driver": False}
            if self.address:
                options["address"] = self.address
            elif self.num_cpus is not None:
                options["num_cpus"] = self.num_cpus
            if (self.runtime_env or {}).get("working_dir") is None:
                with tempfile.TemporaryDirectory(prefix="zagent-ray-") as empty:  # uploaded at init
                    ray.init(**options, runtime_env={"working_dir": empty})
            else:
                ray.init(**options)
            self._started = True
        from .worker import run_task

        task_options: dict[str, Any] = {"num_cpus": self.task_cpus, "max_retries": self.max_retries}
        if self.runtime_env:
            task_options["runtime_env"] = self.runtime_env
        self._task = ray.remote(run_task).options(**task_options)
        self._ray = ray
        return ray

    @property
    def concurrency(self) -> int:
        ray = self._ensure()
        cpus = float(ray.cluster_resources().get("CPU", 1))
        return max(2, int(2 * cpus / self.task_cpus))

    async def submit(self, unit: Unit) -> Any:
        runner, payload = unit.remote_parts(self.name)
        ray = self._ensure()
        ref = self._task.remote(runner, _encode.encode(payload), self._setup)
        try:
            data = await ref
        except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError,
                ray.exceptions.ObjectLostError, ray.exceptions.RaySystemError) as exc:
            raise UnitLost(f"unit {unit.key!r}: the Ray worker running it was lost "
                           f"({type(exc).__name__}) after {self.max_retries} re-run(s) by Ray") from None
        except ray.exceptions.RayTaskError as exc:  # the task wrapper itself failed (e.g. cannot unpickle)
            raise UnitFailed(f"unit {unit.key!r} failed on a Ray worker: {exc}", type_name="RayTaskError") from None
        answer = msgspec.json.decode(data)
        if not answer.get("ok"):
            raise UnitFailed(answer.get("message", ""), type_name=answer.get("type", "Exception"))
        return answer.get("result")

    async def aclose(self) -> None:
        if self.shutdown and self._started and self._ray is not None:
            self._ray.shutdown()

    def __repr__(self) -> str:
        where = self.address or "local"
        return f"<RayExecutor {where} task_cpus={self.task_cpus} max_retries={self.max_retries}>"
