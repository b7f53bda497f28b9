"""The ray executor on a local Ray (2 CPUs): same results as local, workers killed mid-item, cluster selection."""

import os
import pathlib
import subprocess
import sys

import pytest

from conftest import RUNTIME_ENV, read_jsonl, write_jsonl

ROOT = pathlib.Path(__file__).parents[3]
QA = ROOT / "examples" / "qa_agent.json"
REPORT = ROOT / "examples" / "workflow_report.json"


def _ray(kernel, **options):
    return kernel.executor("ray", runtime_env=RUNTIME_ENV, plugins=["raytest_plugin"], **options)


def _strip(rows):
    return sorted(({k: v for k, v in r.items() if k != "duration"} for r in rows), key=lambda r: r["line"])


def test_agent_batch_on_ray_equals_local(kernel):
    """The qa example over varied inputs gives the same results (outputs, usage, errors) on Ray as locally."""
    inputs = [{"id": f"q{i}", "question": "why " * (i + 1)} for i in range(40)] + [{"id": "bad"}]
    local = kernel.batch(str(QA), inputs).results
    on_ray = kernel.batch(str(QA), inputs, executor=_ray(kernel)).results
    assert _strip(on_ray) == _strip(local)
    assert on_ray[-1]["error"]["type"] == "ConfigError"


def test_workflow_on_ray_equals_local(kernel):
    """A workflow whose node runs go to Ray ends with the same outputs and values as the local run."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    graph = WorkFlowGraph.load(REPORT)
    local = WorkFlowExecutor(kernel=kernel).run(graph, {"topic": "tides"})
    on_ray = WorkFlowExecutor(kernel=kernel, executor=_ray(kernel)).run(graph, {"topic": "tides"})
    assert on_ray.outputs == local.outputs and on_ray.values == local.values and on_ray.usage == local.usage


def test_workflow_batch_on_ray_equals_local(kernel):
    """A batch of whole workflow runs gives the same outputs on Ray as locally."""
    from zagent.plugins.workflow import WorkFlowGraph

    graph = WorkFlowGraph.load(REPORT)
    inputs = [{"topic": t} for t in ("tides", "bees", "glass", "salt")]
    local = kernel.batch(graph, inputs).results
    on_ray = kernel.batch(graph, inputs, executor=_ray(kernel)).results
    assert [(r["output"], r["usage"]) for r in on_ray] == [(r["output"], r["usage"]) for r in local]


def _die_batch(kernel, tmp_path, **options):
    spec = {"type": "die-once", "name": "victim", "flag_dir": str(tmp_path)}
    inputs = write_jsonl(tmp_path / "in.jsonl", [{"id": f"i{n}", "n": n, "die": n == 7} for n in range(20)])
    out = tmp_path / "out.jsonl"
    report = kernel.batch(spec, str(inputs), out=out, executor=_ray(kernel, **options), concurrency=4)
    return report, read_jsonl(out)


def test_worker_killed_mid_item_is_rerun_by_ray(kernel, tmp_path):
    """A worker SIGKILLed mid-item: Ray re-runs the task elsewhere, the batch completes, each item written once."""
    report, rows = _die_batch(kernel, tmp_path)
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)) == 20 and all(r["ok"] for r in rows)
    killed_pid = int((tmp_path / "7.killed").read_text())
    victim = next(r for r in rows if r["id"] == "i7")
    assert victim["output"]["pid"] != killed_pid  # it ran again, in another worker process
    assert report.summary.done == 20


def test_worker_lost_past_ray_retries_is_retried_by_the_driver(kernel, tmp_path):
    """With Ray's max_retries=0 the lost worker surfaces as UnitLost; the driver runs the item again, once in --out."""
    report, rows = _die_batch(kernel, tmp_path, max_retries=0)
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)) == 20 and all(r["ok"] for r in rows)
    victim = next(r for r in rows if r["id"] == "i7")
    assert victim["attempts"] == 2 and report.summary.retried == 1


def test_cli_picks_ray_from_ray_address(ray_cluster, tmp_path):
    """``zagent batch`` with RAY_ADDRESS set (an existing cluster) runs on Ray without --executor."""
    inputs = write_jsonl(tmp_path / "in.jsonl", [{"question": f"q{i}"} for i in range(10)])
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "RAY_ADDRESS": ray_cluster}
    env.pop("ZAGENT_MODEL", None)
    proc = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "batch", str(QA), str(inputs), "--out",
                           str(out)], capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert "done 10, failed 0" in proc.stdout and "(executor ray)" in proc.stdout
    assert len(read_jsonl(out)) == 10


def test_import_and_kernel_do_not_import_ray():
    """``import zagent`` and ``Kernel()`` (with zagent-ray installed) leave Ray unimported."""
    code = "import sys, zagent; k = zagent.Kernel(); assert 'ray' in k.registries['executors']; print('ray' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr


def test_bad_options_are_refused(kernel):
    """Nonsense options fail when the executor is made, naming the option."""
    with pytest.raises(Exception, match="task_cpus must be more than 0"):
        kernel.executor("ray", task_cpus=0)


def test_cli_starts_its_own_local_ray(tmp_path):
    """``--executor ray`` without RAY_ADDRESS starts a local Ray for the command (ray.init()) and finishes."""
    inputs = write_jsonl(tmp_path / "in.jsonl", [{"question": f"q{i}"} for i in range(5)])
    out = tmp_path / "out.jsonl"
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "ZAGENT_MODEL")}
    proc = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "batch", str(QA), str(inputs), "--out",
                           str(out), "--executor", "ray", "--executor-option", "num_cpus=1"],
                          capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert "done 5, failed 0" in proc.stdout and "(executor ray)" in proc.stdout


def test_workers_do_not_import_from_the_drivers_working_folder(tmp_path):
    """Attack (got through, round seventeen): ``zagent batch ... --executor ray`` run inside a cloned project whose
    folder holds a ``msgspec.py``: Ray puts the driver's working folder first on every worker's ``sys.path``, so
    each worker ran the planted file as it imported zagent (the ``zagent`` command itself never looks there).
    Defence: a Ray the executor starts gets an empty ``working_dir``; the workers' path holds no such folder."""
    (tmp_path / "msgspec.py").write_text("import pathlib\npathlib.Path(__file__).with_name('RAN').write_text('x')\n"
                                         "raise ImportError('planted')\n")
    inputs = write_jsonl(tmp_path / "in.jsonl", [{"question": f"q{i}"} for i in range(3)])
    out = tmp_path / "out.jsonl"
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "ZAGENT_MODEL", "PYTHONPATH")}
    command = os.path.join(os.path.dirname(sys.executable), "zagent")  # as a user runs it (cwd not on its path)
    proc = subprocess.run([command, "batch", str(QA), str(inputs), "--out", str(out), "--executor", "ray",
                           "--executor-option", "num_cpus=1"], cwd=tmp_path, capture_output=True, text=True,
                          env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert "done 3, failed 0" in proc.stdout and not (tmp_path / "RAN").exists()


def test_driver_trust_travels_to_workers(kernel):
    """A spec naming a tool by import path runs on Ray under the driver's trust (refused without it)."""
    import json

    from zagent import ConfigError
    from zagent.speckit import Trust, trusting

    spec = {**json.loads(QA.read_text()), "tools": ["raytest_plugin:shout"]}
    with pytest.raises(ConfigError, match="not trusted"):
        kernel.batch(spec, [{"question": "x"}], executor=_ray(kernel))
    with trusting(Trust(everything=True)):
        rows = kernel.batch(spec, [{"question": f"q{i}"} for i in range(4)], executor=_ray(kernel)).results
    assert all(r["ok"] and r["usage"]["calls"] == 2 for r in rows)
