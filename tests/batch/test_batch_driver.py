"""Kernel.batch / abatch: one run per input, per-item errors, resume from the results file, retries of lost units."""

import asyncio

import pytest
from zagent import ConfigError

from .conftest import QA, read_jsonl, write_jsonl
from .shipping import ShippingExecutor


def test_results_come_back_in_input_order_with_usage(kernel):
    """Without ``out`` the report holds one result per input, in input order, with outputs and token usage."""
    report = kernel.batch(QA, [{"question": f"q{i}?"} for i in range(20)], concurrency=4)
    assert [r["line"] for r in report.results] == list(range(1, 21))
    assert all(r["ok"] and r["output"]["answer"] for r in report.results)
    s = report.summary
    assert (s.done, s.failed, s.total) == (20, 0, 20)
    assert s.input_tokens == sum(r["usage"]["input_tokens"] for r in report.results) > 0


def test_item_errors_are_recorded_not_fatal(kernel):
    """A non-object line, a missing input and a bad id become failed results naming the problem; the rest run."""
    report = kernel.batch(QA, [{"question": "fine"}, 7, {"other": "x"}, {"id": ["no"], "question": "x"}])
    by_line = {r["line"]: r for r in report.results}
    assert by_line[1]["ok"]
    assert "JSON int" in by_line[2]["error"]["message"]
    assert by_line[3]["error"] == {"type": "ConfigError", "message": "the item lacks input(s) question that 'Answerer' needs"}
    assert "'id' must be" in by_line[4]["error"]["message"]
    assert report.summary.failed == 3 and report.summary.done == 1


def test_items_never_borrow_inputs_from_earlier_items(kernel):
    """An item missing an input fails even after other items gave it (no extraction from the agent's memory)."""
    report = kernel.batch(QA, [{"question": "first"}, {}], concurrency=1)
    assert report.results[1]["error"]["type"] == "ConfigError"


def test_duplicate_id_fails_by_line_and_keeps_the_first(kernel, tmp_path):
    """A second item with an id already used fails, keyed by its line only, so it never shadows the first."""
    out = tmp_path / "out.jsonl"
    kernel.batch(QA, [{"id": "a", "question": "x"}, {"id": "a", "question": "y"}], out=out)
    rows = {r["line"]: r for r in read_jsonl(out)}
    assert rows[1]["id"] == "a" and rows[1]["ok"]
    assert "id" not in rows[2] and "already used on line 1" in rows[2]["error"]["message"]


def test_rerun_skips_items_already_in_out(kernel, tmp_path):
    """Re-running with the same ``out`` skips every item already there (by id or by line) and writes no duplicate."""
    inputs = write_jsonl(tmp_path / "in.jsonl", [{"id": f"q{i}", "question": "x"} for i in range(5)] + [{"question": "y"}])
    out = tmp_path / "out.jsonl"
    first = kernel.batch(QA, str(inputs), out=out)
    second = kernel.batch(QA, str(inputs), out=out)
    assert first.summary.done == 6 and second.summary.skipped == 6 and second.summary.done == 0
    assert len(read_jsonl(out)) == 6


def test_partial_last_line_is_cut_and_that_item_reruns(kernel, tmp_path):
    """A line cut mid-write (a SIGKILL) is removed on resume and its item runs again; whole lines are kept."""
    inputs = write_jsonl(tmp_path / "in.jsonl", [{"id": f"q{i}", "question": "x"} for i in range(3)])
    out = tmp_path / "out.jsonl"
    kernel.batch(QA, str(inputs), out=out)
    rows = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(rows[:2]) + rows[2][:15])
    report = kernel.batch(QA, str(inputs), out=out)
    assert (report.summary.skipped, report.summary.done) == (2, 1)
    assert sorted(r["id"] for r in read_jsonl(out)) == ["q0", "q1", "q2"]


def test_retry_failed_drops_failed_lines_and_reruns_them(kernel, tmp_path):
    """``retry_failed`` removes failed results from ``out`` and runs those items again; successes stay."""
    out = tmp_path / "out.jsonl"
    kernel.batch(QA, [{"id": "ok", "question": "x"}, {"id": "bad"}], out=out)
    report = kernel.batch(QA, [{"id": "ok", "question": "x"}, {"id": "bad", "question": "now given"}],
                          out=out, retry_failed=True)
    assert (report.summary.skipped, report.summary.done) == (1, 1)
    assert sorted((r["id"], r["ok"]) for r in read_jsonl(out)) == [("bad", True), ("ok", True)]


def test_out_that_is_not_a_results_file_is_refused(kernel, tmp_path):
    """An ``out`` file holding something else is a ConfigError (never appended to, never truncated)."""
    out = tmp_path / "notes.txt"
    out.write_text("my notes\n")
    with pytest.raises(ConfigError, match="not a batch result"):
        kernel.batch(QA, [{"question": "x"}], out=out)
    assert out.read_text() == "my notes\n"


def test_lost_unit_is_retried_and_recorded_once(kernel, tmp_path):
    """A unit whose worker was lost (UnitLost) runs again; its result is written once, with attempts=2."""
    ex = ShippingExecutor(lose={"b"})
    out = tmp_path / "out.jsonl"
    report = kernel.batch(QA, [{"id": "a", "question": "x"}, {"id": "b", "question": "y"}], out=out, executor=ex)
    rows = {r["id"]: r for r in read_jsonl(out)}
    assert len(read_jsonl(out)) == 2 and rows["b"]["ok"] and rows["b"]["attempts"] == 2
    assert report.summary.retried == 1 and ex.keys.count("b") == 2


def test_lost_unit_past_retries_is_a_failed_item(kernel):
    """With retries=0 a lost unit is a failed result of type UnitLost; the batch still finishes."""
    ex = ShippingExecutor(lose={"b"})
    report = kernel.batch(QA, [{"id": "a", "question": "x"}, {"id": "b", "question": "y"}], executor=ex, retries=0)
    assert [r["ok"] for r in report.results] == [True, False]
    assert report.results[1]["error"]["type"] == "UnitLost"


def test_shipped_agent_items_equal_local_ones(kernel):
    """An agent spec's items run from their shipped payload (a fresh worker kernel) give the local results."""
    inputs = [{"id": str(i), "question": "word " * i} for i in range(6)]  # usage differs per item
    local = kernel.batch(QA, inputs).results
    shipped = kernel.batch(QA, inputs, executor=ShippingExecutor()).results
    strip = lambda rows: [{k: v for k, v in r.items() if k != "duration"} for r in rows]  # noqa: E731
    assert strip(local) == strip(shipped)


def test_agent_objects_run_locally_only(kernel):
    """An agent given as an object runs on local; on a remote executor its items fail naming the fix."""
    agent = kernel.agent(QA)
    assert kernel.batch(agent, [{"question": "x"}]).results[0]["ok"]
    failed = kernel.batch(agent, [{"question": "x"}], executor=ShippingExecutor()).results[0]
    assert "declare the agent or workflow as a spec" in failed["error"]["message"]


def test_concurrency_bounds_items_in_flight(kernel):
    """At most ``concurrency`` items run at once."""
    state = {"now": 0, "peak": 0}

    class Slow:
        name = "slow"

        async def aexecute(self, inputs):
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
            await asyncio.sleep(0.001)
            state["now"] -= 1
            return {"ok": True}

    kernel.batch(Slow(), [{} for _ in range(30)], concurrency=3)
    assert state["peak"] == 3


def test_bad_spec_fails_before_any_item(kernel, tmp_path):
    """A spec that cannot build an agent raises at once; no results file is created."""
    out = tmp_path / "out.jsonl"
    with pytest.raises(ConfigError):
        kernel.batch({"name": "x", "type": "nope"}, [{"q": 1}], out=out)
    assert not out.exists()



class _AnySpec:
    """An agent type accepting any spec (one with an API key in its llm settings included)."""

    def zagent_register_agent_types(self, register):
        register("any", lambda spec, kernel: _Echo())

    def zagent_register_agent_builders(self, register):
        from zagent.speckit.files import build_agent

        register("default", build_agent)


class _Echo:
    name = "echo"

    async def aexecute(self, inputs):
        return dict(inputs)


def test_shipped_spec_carries_no_secret():
    """A spec's API key never goes into the payload a remote worker gets (workers read their own environment)."""
    from zagent import Kernel
    from zagent.plugins.batch.driver import make_job

    k = Kernel(plugins=[_AnySpec()], entry_points=False)
    job = make_job(k, {"type": "any", "name": "x", "llm_config": {"model": "m:x", "api_key": "sk-very-secret"}})
    runner, payload = job.unit("k1", {"q": 1}).remote_parts("ray")
    assert "sk-very-secret" not in repr(payload) and payload["spec"]["llm_config"] == {"model": "m:x"}
    assert payload["inputs"] == {"q": 1} and runner == "zagent.plugins.batch.driver:run_agent_item"


def test_cli_picks_ray_only_when_installed(kernel, monkeypatch):
    """RAY_ADDRESS picks the ray executor only if one is registered; --executor always wins."""
    from zagent.plugins.batch.cli import choose_executor

    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.5:6379")
    assert choose_executor(kernel, None) is None  # not installed here: the kernel's default (local)
    assert choose_executor(kernel, "local") == "local"


def test_executor_options_are_json_when_they_parse():
    """--executor-option values are JSON when they parse (numbers, objects), else text; a bad pair is refused."""
    from zagent.plugins.batch.cli import _options

    assert _options(["num_cpus=2", "address=auto", 'runtime_env={"env_vars": {"A": "1"}}']) == {
        "num_cpus": 2, "address": "auto", "runtime_env": {"env_vars": {"A": "1"}}}
    with pytest.raises(SystemExit, match="KEY=VALUE"):
        _options(["oops"])


def test_bad_concurrency_and_retries_are_refused(kernel):
    """concurrency below 1 and negative retries are ConfigErrors naming the value (never silently replaced)."""
    with pytest.raises(ConfigError, match="concurrency must be at least 1, got 0"):
        kernel.batch(QA, [{"question": "x"}], concurrency=0)
    with pytest.raises(ConfigError, match="retries must be 0 or more"):
        kernel.batch(QA, [{"question": "x"}], retries=-1)


def test_import_paths_need_trust_and_the_trust_travels(kernel, monkeypatch):
    """A spec naming a tool by import path is refused untrusted (before any item); trusted, shipped items get the
    driver's trust on the worker's kernel and run."""
    import pathlib

    from zagent.speckit import Trust, trusting

    monkeypatch.syspath_prepend(str(pathlib.Path(__file__).parent))
    spec = {**QA, "tools": ["slowtools:lookup"]}
    with pytest.raises(ConfigError, match="not trusted"):
        kernel.batch(spec, [{"question": "x"}])
    with trusting(Trust(everything=True)):
        shipped = kernel.batch(spec, [{"question": "x"}], executor=ShippingExecutor()).results
    assert shipped[0]["ok"] and shipped[0]["usage"]["calls"] == 2  # the tool call, then the answer


def test_a_worker_kernel_builds_each_shipped_agent_once_in_its_stash():
    """run_agent_item keeps agents built from shipped specs in the worker kernel's stash, one per spec and
    trust; another kernel builds its own."""
    from zagent import Kernel
    from zagent.agentkit.units import WORKER_AGENTS
    from zagent.plugins.batch.driver import make_job, run_agent_item
    from zagent import run_sync

    k = Kernel(plugins=[_AnySpec()], entry_points=False)
    _, payload = make_job(k, {"type": "any", "name": "x"}).unit("k1", {"q": 1}).remote_parts("ray")
    for _ in range(2):
        assert run_sync(run_agent_item(k, payload))["output"] == {"q": 1}
    assert len(k.stash[WORKER_AGENTS]) == 1
    other = Kernel(plugins=[_AnySpec()], entry_points=False)
    run_sync(run_agent_item(other, payload))
    assert next(iter(other.stash[WORKER_AGENTS].values())) is not next(iter(k.stash[WORKER_AGENTS].values()))


def test_retry_failed_keeps_a_duplicate_id_failure(kernel, tmp_path):
    """A line whose id was used before fails again under ``retry_failed``: no result line is lost (3 in, 3 out)."""
    inputs = [{"id": "a", "question": "x"}, {"id": "b", "question": "y"}, {"id": "a", "question": "z"}]
    out = tmp_path / "out.jsonl"
    kernel.batch(QA, inputs, out=out)
    assert len(read_jsonl(out)) == 3
    report = kernel.batch(QA, inputs, out=out, retry_failed=True)
    rows = read_jsonl(out)
    assert len(rows) == 3 and report.summary.failed == 1
    assert [r["line"] for r in rows if not r["ok"]] == [3]


def test_summary_counts_failures_by_type(kernel):
    """The summary breaks failures down by error type, most frequent first, in its line too."""
    report = kernel.batch(QA, [{"question": "x"}, {"nothing": 1}, {"nothing": 2}, {"id": "i", "question": "q"},
                               {"id": "i", "question": "q"}])
    assert report.summary.failures == {"ConfigError": 3}
    assert report.summary.line().endswith("; failures: ConfigError 3")
