"""Round thirteen: resource exhaustion from hostile tools, models and specs (memory, CPU, threads, tasks and
clients growing without bound; a run that never ends). Growth is measured with ``tracemalloc`` or counts.

Tried (30 attack cases; 21 got through on the code before this round, marked "got through": 20 fixed, 1 open as
a strict xfail). Got through: a tool result holding one list millions of times (a YAML alias bomb a tool parsed:
22 small lists written as 96 MB of JSON), also with itself appended (``repr`` of it never ended), a 1 MB text
held 100 times, the bomb inside a dataclass or a struct, one object with a 1 MB ``repr`` listed 400 times, 50 MB
of bytes that are not UTF-8 (all decoded), 1 MB argument names of failing calls (kept by a cache); an async tool
swallowing ``CancelledError`` (the run waited for ever; one that returned late was a success; any number of such
calls); untrusted specs varying their ``llm_config`` (a new model and HTTP client per load, kept until the kernel
closed), also through ``k.llm``, and a set-valued option (a new model every call); a batch resumed from a 30 MB
results file (read whole; ``retry_failed`` joined it again); an eval whose results file other runs share (every
record decoded and kept); a model fanning out to nested agents (five levels, 8 calls a turn: thousands of agent
runs, ~10**15 possible); cancelled runs (the run log held their rows until the kernel closed). Open: a measured
pure tool promoted to the event loop runs a huge argument there.
Held: a result nested 100,000 deep, results whose ``repr`` raises or recurses, a generator result, a list that
contains itself (shown as ``[...]``), a 50 MB honest result (cut, not refused), a well-behaved async tool past its
timeout, a cancelled run cancelling its tool.
"""

import asyncio
import dataclasses
import threading
import tracemalloc

import msgspec
import pytest

from zagent import ToolCall, tool
from zagent.errors import ConfigError

from .conftest import agent_spec, make_kernel


def _call(k, name, **arguments):
    return k.run_tool(ToolCall(id="c1", name=name, arguments=arguments))


def _peak(fn):
    """``(value, peak bytes allocated while fn ran)``."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        value = fn()
        return value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _alias_bomb(levels=22, leaf="abcdefghijklmnop"):
    """A list of two references to a list of two references ... ``levels`` deep: ``levels`` lists, 2**levels leaves."""
    value = [leaf]
    for _ in range(levels):
        value = [value, value]
    return value


# -- tool results -------------------------------------------------------------------------------------------


def test_a_result_holding_one_list_millions_of_times_is_refused_before_it_is_written_out(kernel):
    """Attack (got through): a tool returns what ``yaml.safe_load`` made of an alias bomb: 22 lists, each holding
    the next twice, 4 million leaves. Rendering it for the model wrote 96 MB of JSON (217 MB peak; 30 levels would
    be terabytes). Defence: ``to_text`` counts the values JSON would write (shared parts each time) and refuses past
    ``MAX_RENDER_VALUES``; the model reads an error naming the limit."""
    def bomb() -> list:
        """Return parsed data."""
        return _alias_bomb()

    kernel.add_tool(bomb)
    result, peak = _peak(lambda: _call(kernel, "bomb"))
    assert result.state == "error" and "MAX_RENDER_VALUES" in result.content and "1,000,000 values" in result.content
    assert peak < 16 * 2**20


def test_one_big_text_held_a_hundred_times_is_refused_by_its_characters(kernel):
    """Attack (got through): a 1 MB text referenced 100 times in a list (a few objects, 100 MB of JSON). Defence: the
    texts' characters count each time too, up to ``MAX_RENDER_CHARS`` (64 MiB)."""
    page = "p" * 2**20

    def pages() -> list:
        """Return pages."""
        return [page] * 100

    kernel.add_tool(pages)
    result, peak = _peak(lambda: _call(kernel, "pages"))
    assert result.state == "error" and "MAX_RENDER_CHARS" in result.content
    assert peak < 16 * 2**20


@dataclasses.dataclass
class _Report:
    rows: list


class _Rows(msgspec.Struct):
    rows: list


@pytest.mark.parametrize("wrap", [_Report, _Rows], ids=["dataclass", "struct"])
def test_a_bomb_inside_a_dataclass_or_struct_is_refused_too(kernel, wrap):
    """Attack (got through): the alias bomb as a field of a dataclass or a ``msgspec.Struct`` (JSON writes their
    fields). Defence: the walk enters their fields."""
    def report() -> object:
        """Return a report."""
        return wrap(rows=_alias_bomb())

    kernel.add_tool(report)
    result, peak = _peak(lambda: _call(kernel, "report"))
    assert result.state == "error" and "MAX_RENDER_VALUES" in result.content
    assert peak < 16 * 2**20


class _Loud:
    """An object JSON cannot hold, whose ``repr`` is 1 MB."""

    def __repr__(self):
        return "L" * 2**20


def test_an_object_with_a_huge_repr_listed_many_times_is_bounded(kernel):
    """Attack (got through): one object whose ``repr`` is 1 MB, listed 400 times: each repr was written whole
    (400 MB). Defence: each repr is cut to what the model reads (200,000 characters), and their sum to
    ``MAX_RENDER_CHARS``."""
    loud = _Loud()

    def noisy() -> list:
        """Return objects."""
        return [loud] * 400

    kernel.add_tool(noisy)
    result, peak = _peak(lambda: _call(kernel, "noisy"))
    assert result.state == "error" and "MAX_RENDER_CHARS" in result.content
    assert peak < 200 * 2**20


def test_fifty_megabytes_of_bytes_are_decoded_only_as_far_as_the_model_reads(kernel):
    """Attack (got through): a tool returns 50 MB of bytes that are not UTF-8; all were decoded (50 million
    replacement characters, ~100 MB) before the result was cut to 200,000. Defence: only what can be shown is
    decoded; the note says how much was cut."""
    blob = b"\xff" * (50 * 2**20)

    def download() -> bytes:
        """Return a download."""
        return blob

    kernel.add_tool(download)
    result, peak = _peak(lambda: _call(kernel, "download"))
    assert result.state == "success" and len(result.content) <= 200_000 and "more characters" in result.content
    assert peak < 16 * 2**20


def test_a_result_nested_a_hundred_thousand_deep_is_an_error_not_a_crash(kernel):
    """Held: a result nested 100,000 lists deep is an error the model reads (no ``RecursionError`` escapes)."""
    def deep() -> list:
        """Return nested data."""
        value: list = []
        for _ in range(100_000):
            value = [value]
        return value

    kernel.add_tool(deep)
    result = _call(kernel, "deep")
    assert result.state == "error" and "nested too deeply" in result.content


class _Raising:
    def __repr__(self):
        raise RuntimeError("no repr for you")


class _Recursing:
    def __repr__(self):
        return repr(self)


@pytest.mark.parametrize("value", [_Raising(), _Recursing(), [_Raising()]], ids=["raises", "recurses", "inside"])
def test_a_result_whose_repr_raises_or_recurses_is_an_error(kernel, value):
    """Held: a result whose ``repr`` raises or recurses for ever is an error result, not a crash."""
    def odd() -> object:
        """Return an object."""
        return value

    kernel.add_tool(odd)
    result = _call(kernel, "odd")
    assert result.state == "error" and "cannot be shown to the model" in result.content


def test_a_generator_result_is_never_iterated(kernel):
    """Held: a tool returning a generator that never ends is shown by its ``repr``; it is never iterated."""
    pulled = []

    def endless():
        while True:
            pulled.append(1)
            yield "x"

    def stream() -> object:
        """Return a stream."""
        return endless()

    kernel.add_tool(stream)
    result = _call(kernel, "stream")
    assert result.state == "success" and "generator" in result.content and pulled == []


def test_a_result_that_contains_itself_is_shown_once_and_a_cyclic_bomb_is_refused(kernel):
    """Held: a list that contains itself is shown as ``repr`` writes it (``[...]``). Attack (got through): the
    alias bomb with itself appended (JSON cannot write it, so ``repr`` did: 4 million leaves). Defence: the walk
    counts what ``repr`` writes (a part inside itself once) and refuses past the limit."""
    def cyclic() -> list:
        """Return a cycle."""
        value: list = ["x"]
        value.append(value)
        return value

    def cyclic_bomb() -> list:
        """Return a cycle."""
        value = _alias_bomb()
        value.append(value)
        return value

    kernel.add_tool(cyclic)
    kernel.add_tool(cyclic_bomb)
    result = _call(kernel, "cyclic")
    assert result.state == "success" and "[...]" in result.content
    result, peak = _peak(lambda: _call(kernel, "cyclic_bomb"))
    assert result.state == "error" and "MAX_RENDER_VALUES" in result.content and peak < 16 * 2**20


def test_a_50mb_result_of_one_shared_row_is_still_cut_not_refused(kernel):
    """The limit is above what a large honest result writes: 50 MB of rows (one row shared) is cut as before."""
    def rows() -> dict:
        """Return rows."""
        return {"rows": ["x" * 1000] * 50_000}

    kernel.add_tool(rows)
    result = _call(kernel, "rows")
    assert result.state == "success" and "more characters of the tool's result cut" in result.content


def test_huge_argument_names_of_failing_calls_are_not_kept_by_a_cache(kernel):
    """Attack (got through): a tool taking a dict raises; the model names its keys with 1 MB each. Masking the
    error looks each key up in ``looks_secret``'s cache (4,096 entries), which kept them: 40 calls held 43 MB
    after the run (4 GB at the cache's size). Defence: names over 256 characters are judged but not cached."""
    import gc

    def configure(options: dict) -> str:
        """Apply options."""
        raise ValueError("bad options")

    kernel.add_tool(configure)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(40):
            result = _call(kernel, "configure", options={f"{i}" + "k" * 2**20: 1})
            assert result.state == "error"
        del result
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 12 * 2**20


# -- async tools that ignore their timeout -------------------------------------------------------------------


class _Stubborn:
    """An async tool body that swallows every cancellation until ``stop`` is set (or ``limit`` seconds pass)."""

    def __init__(self, returns=False):
        self.stop = threading.Event()
        self.swallowed = 0
        self.ended = 0
        self.returns = returns

    async def __call__(self):
        loop = asyncio.get_running_loop()
        start = loop.time()
        while not self.stop.is_set() and loop.time() - start < 20:
            try:
                await asyncio.sleep(0.01)
            except asyncio.CancelledError:
                self.swallowed += 1
                if self.returns:
                    break
        self.ended += 1
        return "late value"


def test_an_async_tool_swallowing_its_cancellation_cannot_hold_the_run_past_its_timeout(kernel):
    """Attack (got through): an async tool with ``timeout=0.2`` catches ``CancelledError`` and goes on; the run
    waited for it for ever (its timeout is a cancellation inside the caller's task). Defence: an async call runs in
    a task of its own; past its timeout it is cancelled, and one still running ``CANCEL_GRACE`` later is left
    behind (counted) and the call is a timeout that says so."""
    body = _Stubborn()

    @tool(timeout=0.2)
    async def stubborn() -> str:
        """Do something slow."""
        return await body()

    kernel.add_tool(stubborn)
    try:
        result = _call(kernel, "stubborn")
        assert result.state == "timeout" and "ignored its cancellation" in result.content
        assert body.ended == 0 and body.swallowed >= 1  # the run went on while the tool still ran
    finally:
        body.stop.set()


def test_an_async_tool_that_swallows_the_cancellation_and_returns_is_no_late_success(kernel):
    """Attack (got through): the tool catches the cancellation at its timeout and returns a value: the value was
    taken as the call's result. Defence: a call cancelled at its timeout is a timeout, whatever it returns."""
    body = _Stubborn(returns=True)

    @tool(timeout=0.2)
    async def sly() -> str:
        """Do something slow."""
        return await body()

    kernel.add_tool(sly)
    result = _call(kernel, "sly")
    assert result.state == "timeout" and "late value" not in result.content and body.ended == 1


def test_async_calls_ignoring_cancellation_are_capped_per_tool():
    """Attack (got through: each call hung the run): nine calls of an async tool that ignores its cancellation.
    Defence: at most ``tool_threads_abandoned_per_tool`` (here 2) such calls of a tool may still run; the next call
    is refused at once, naming the setting; it runs again once they end."""
    k = make_kernel(config={"tool_threads_abandoned_per_tool": 2})
    body = _Stubborn()

    @tool(timeout=0.1)
    async def hang() -> str:
        """Hang."""
        return await body()

    k.add_tool(hang)
    try:
        first = [_call(k, "hang") for _ in range(2)]
        assert [r.state for r in first] == ["timeout", "timeout"]
        refused = _call(k, "hang")
        assert refused.state == "error" and "tool_threads_abandoned_per_tool" in refused.content
        assert body.ended == 0 and k.tool_executor().tasks == {"hang": 2}
        body.stop.set()  # the stuck calls end: the tool runs again
        for _ in range(500):
            if not k.tool_executor().tasks:
                break
            threading.Event().wait(0.01)
        assert body.ended == 2 and _call(k, "hang").state == "success"
    finally:
        body.stop.set()
        k.close()


def test_a_well_behaved_async_tool_past_its_timeout_is_cancelled_and_cleans_up(kernel):
    """Held: an async tool that lets the cancellation through is a plain timeout and its ``finally`` runs."""
    cleaned = []

    @tool(timeout=0.1)
    async def slow() -> str:
        """Sleep."""
        try:
            await asyncio.sleep(30)
        finally:
            cleaned.append(True)
        return "never"

    kernel.add_tool(slow)
    result = _call(kernel, "slow")
    assert result.state == "timeout" and "did not finish within 0.1 s" in result.content and cleaned == [True]
    assert kernel.tool_executor().tasks == {}


def test_cancelling_the_run_cancels_the_async_tool_it_waits_for(kernel):
    """Held: a run cancelled while an async tool runs cancels the tool's task too (nothing left running)."""
    state = {"cancelled": False}

    @tool(timeout=30)
    async def waits() -> str:
        """Wait."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            state["cancelled"] = True
            raise
        return "never"

    kernel.add_tool(waits)

    async def main():
        run = asyncio.ensure_future(kernel.arun_tool(ToolCall(id="c1", name="waits", arguments={})))
        await asyncio.sleep(0.05)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        await asyncio.sleep(0)

    asyncio.run(main())
    assert state["cancelled"] is True


# -- models a spec names ----------------------------------------------------------------------------------------


def test_specs_varying_their_model_options_cannot_add_models_for_ever(monkeypatch):
    """Attack (got through): an app builds agents from stored, untrusted specs; each spec's ``llm_config`` differs
    by a temperature, so each load made a new model (and HTTP client) that the kernel kept until it closed: 300
    loads, 300 models. Defence: a kernel holds at most ``max_models`` (256) models; the next is a ``ConfigError``
    naming the setting."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-r13-limits-test")
    k = make_kernel(plugins=["zagent.plugins.openai"], config={"max_models": 20})
    try:
        for i in range(19):  # the kernel's default model is not made yet: 20 spec models fit
            k.agent(agent_spec(name=f"A{i}", llm_config={"model": "openai:gpt-4o", "temperature": i / 100}))
        k.agent(agent_spec(name="Again", llm_config={"model": "openai:gpt-4o", "temperature": 0.05}))  # cached
        k.agent(agent_spec(name="A19", llm_config={"model": "openai:gpt-4o", "temperature": 0.19}))
        with pytest.raises(ConfigError, match="max_models"):
            k.agent(agent_spec(name="A20", llm_config={"model": "openai:gpt-4o", "temperature": 0.2}))
        assert len(k._models.llms) == 20
    finally:
        k.close()


def test_the_default_cap_on_models_is_256(monkeypatch):
    """The default cap: 256 models, then a ``ConfigError`` naming ``max_models``."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-r13-limits-test")
    k = make_kernel(plugins=["zagent.plugins.openai"])
    try:
        for i in range(256):
            k.llm("openai:gpt-4o", seed=i)
        with pytest.raises(ConfigError, match="at most 256.*'max_models'"):
            k.llm("openai:gpt-4o", seed=256)
    finally:
        k.close()


def test_a_set_valued_model_option_reuses_the_model(monkeypatch):
    """Attack (got through): an option holding a set could not be hashed, so every ``k.llm`` call made (and kept)
    a new model. Defence: sets are frozen into the cache key like lists and dicts."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-r13-limits-test")
    k = make_kernel(plugins=["zagent.plugins.openai"])
    try:
        first = k.llm("openai:gpt-4o", extra_body={"tags": {"a", "b"}})
        assert k.llm("openai:gpt-4o", extra_body={"tags": {"b", "a"}}) is first
        assert len(k._models.llms) == 1
    finally:
        k.close()


# -- batch and eval results files ----------------------------------------------------------------------------------

QA = {"name": "QA", "prompt": "Answer: {question}", "inputs": [{"name": "question", "type": "string"}],
      "outputs": [{"name": "answer", "type": "string"}], "parse_mode": "str"}


def _results_file(path, count, *, failed_every=0, prefix="d", made_by=""):
    """A batch results file of ``count`` records of 1.5 KB (every ``failed_every``-th one failed) that the job
    ``made_by`` made."""
    import json

    with open(path, "w") as f:
        for i in range(count):
            ok = not failed_every or i % failed_every
            f.write(json.dumps({"id": f"{prefix}{i}", "line": i + 1, "ok": bool(ok), "attempts": 1, "duration": 0.1,
                                "output": {"answer": "w" * 1500}, "usage": {}, "made_by": made_by}) + "\n")


@pytest.mark.parametrize("retry_failed", [False, True], ids=["resume", "retry-failed"])
def test_resuming_a_batch_never_holds_its_results_file_in_memory(tmp_path, retry_failed):
    """Attack (got through): resuming a batch (``out=`` naming a results file of 20,000 records, 30 MB) read every
    line into memory (``--retry-failed`` then joined them again): the peak grew with the file (34 MB here; a long
    batch's file is gigabytes). Defence: only ids are kept; ``retry_failed`` keeps the byte ranges of the lines it
    keeps and rewrites the file from them piece by piece."""
    k = make_kernel(plugins=["zagent.plugins.batch"])
    out = tmp_path / "results.jsonl"
    try:
        agent = k.agent(QA)
        agent.llm = k.llm("scripted:qa", replies=["Paris"])
        _results_file(out, 20_000, failed_every=2 if retry_failed else 0, made_by=k.batch(agent, []).summary.made_by)
        report, peak = _peak(lambda: k.batch(agent, [{"id": "new", "question": "q"}], out=out,
                                             retry_failed=retry_failed))
    finally:
        k.close()
    assert report.summary.done == 1 and peak < 12 * 2**20
    lines = out.read_text().splitlines()
    assert len(lines) == (10_001 if retry_failed else 20_001)
    assert '"id":"new"' in lines[-1] and all('"ok": true' in line for line in lines[:-1])


def test_an_eval_reads_only_its_own_cases_from_a_shared_results_file(tmp_path):
    """Attack (got through): ``evaluate(..., out=...)`` naming a results file other runs of the agent share (20,000
    records of other ids, 30 MB) decoded every record and kept them all (290 MB peak for 100,000). Defence: only the
    records of the eval's own cases are kept."""
    from zagent.plugins.evals import evaluate

    k = make_kernel(plugins=["zagent.plugins.batch", "zagent.plugins.evals"])
    out = tmp_path / "runs.jsonl"
    try:
        agent = k.agent(QA)
        agent.llm = k.llm("scripted:qa", replies=["Paris"])
        _results_file(out, 20_000, prefix="other", made_by=k.batch(agent, []).summary.made_by)
        cases = [{"id": "paris", "inputs": {"question": "q"}, "expected": "Paris"}]
        report, peak = _peak(lambda: evaluate(k, agent, cases, out=out, concurrency=1))
    finally:
        k.close()
    assert [c.passed for c in report.cases] == [True] and peak < 12 * 2**20


# -- agents calling agents ---------------------------------------------------------------------------------------


def _agent_tree(k, reply, levels=5):
    """ReAct agents ``L0`` .. ``L{levels}``, each offered the next as a tool, all answering with ``reply``."""
    llm = k.llm("scripted:tree", replies=[reply] * 100_000)
    agent = None
    for level in range(levels, -1, -1):
        agent = k.agent({"type": "react", "name": f"L{level}", "description": "helper",
                         "tools": [f"L{level + 1}"] if level < levels else []})
        agent.llm = llm
        if level:
            agent.as_tool()
    return agent


@pytest.mark.parametrize("config, most", [({"max_agent_calls": 10}, 10), (None, 256)], ids=["setting", "default"])
def test_a_model_fanning_out_to_nested_agents_is_capped_per_run(config, most):
    """Attack (got through): five levels of agents, each offered the next as a tool; the model answers every turn
    with 8 calls of its helper (64 allowed, 20 turns each): 400 fan-out replies started 3,000+ agent runs, and a
    model that never stops would start ~10**15. Defence: one run calls agents as tools at most ``max_agent_calls``
    times (256), at any depth; the next call is an error result naming the setting."""
    k = make_kernel(config=config)
    seen = {"calls": 0, "runs": 0, "refused": 0}

    def reply(request):
        seen["calls"] += 1
        if len(request.messages) <= 2:
            seen["runs"] += 1
        seen["refused"] += sum("'max_agent_calls'" in str(m.content) for m in request.messages[-8:])
        helpers = [t.name for t in request.tools if t.name.startswith("L")]
        if not helpers or seen["calls"] > 400:
            return "done"
        return {"tool_calls": [{"id": f"c{seen['calls']}_{i}", "name": helpers[0], "arguments": {"task": "go"}}
                               for i in range(8)]}

    try:
        top = _agent_tree(k, reply)
        try:
            top.chat("go", use_react=True)
        except Exception:  # the top agent may run out of turns: the count is what matters
            pass
    finally:
        k.close()
    assert seen["runs"] == most + 1 and seen["refused"] > 0


# -- not covered (strict xfails) -------------------------------------------------------------------------------


def test_runs_cancelled_mid_tool_are_not_held_by_the_run_log_for_ever(tmp_path, monkeypatch):
    """Attack (got through): an app cancels runs (a client went away) while their tools run. No ``run_end`` came
    for a cancelled run, so ``RunLogger`` held its run, step and tool rows in memory until the kernel closed: a
    long-lived kernel grew with every cancelled run (20 runs: 40 open rows, 10 runs held). Defence: a cancelled
    run now sends ``run_end`` (outcome ``cancelled``: its rows are written then); and at most ``MAX_HELD_RUNS``
    (1,000; 3 here) runs are held, the oldest then written as it stands, open spans ``unfinished``."""
    import sqlite3

    from zagent import run_sync
    from zagent.plugins.react import ReActLoop
    from zagent.plugins.runlog import observer

    monkeypatch.setattr(observer, "MAX_HELD_RUNS", 3)
    k = make_kernel(config={"log": str(tmp_path / "logs.db")}, plugins=["zagent.plugins.runlog"])

    @tool(timeout=30)
    async def slow(x: str) -> str:
        """Wait."""
        await asyncio.sleep(30)
        return x

    k.add_tool(slow)
    logger = next(getattr(impl[1], "__self__", None) for impl in k.hooks.impls("zagent_event")
                  if type(getattr(impl[1], "__self__", None)).__name__ == "RunLogger")

    async def cancelled_run():
        llm = k.llm("scripted:c", replies=[{"tool_calls": [{"id": "a", "name": "slow", "arguments": {"x": "1"}}]}] * 10)
        run = asyncio.ensure_future(ReActLoop(kernel=k, llm=llm, tools=["slow"]).arun("go"))
        await asyncio.sleep(0.1)
        run.cancel()
        await asyncio.gather(run, return_exceptions=True)

    try:
        for _ in range(10):
            run_sync(cancelled_run())
        assert len(logger._held) <= 3 and len(logger._open) <= 3 * 3 and len(logger._runs) <= 3
        with sqlite3.connect(tmp_path / "logs.db") as db:
            runs = db.execute("SELECT count(*) FROM run_spans WHERE kind = 'run' AND outcome = 'cancelled'").fetchone()[0]
            written = db.execute("SELECT count(*) FROM run_spans").fetchone()[0]
        assert runs == 10 and written >= 10 * 3  # each run's run, step and tool rows, kept in the log
    finally:
        k.close()


def _sum_to(n: int) -> int:
    """Sum the first n integers (pure: promoted to the event loop once its calls are quick)."""
    return sum(range(n))


@pytest.mark.xfail(strict=True, reason="open: a measured pure tool promoted to the event loop runs a model's huge "
                                       "argument there (tests/kernel/test_kernel_toolthreads.py expects it to)")
def test_a_promoted_pure_tool_given_a_huge_argument_does_not_stall_the_loop():
    """Attack (gets through, open): a pure sync tool (``sum(range(n))``, default timeout 60 s) is quick for eight
    calls and moves to the event loop; then the model sends ``n = 10**13``: the call runs on the loop, which
    serves every other run of the process, for hours; its timeout is only checked after it returns. Shown with
    ``n = 20,000,000``: a heartbeat on the same loop does not tick during the call."""
    from zagent._tools.run import _probes

    k = make_kernel()
    registered = k.add_tool(tool(_sum_to))
    try:
        for _ in range(200):
            k.run_tool(ToolCall(id="p", name="_sum_to", arguments={"n": 3}))
            if _probes[registered].inline:
                break

        async def main():
            ticks = []

            async def heartbeat():
                while True:
                    ticks.append(1)
                    await asyncio.sleep(0.001)

            beat = asyncio.ensure_future(heartbeat())
            await asyncio.sleep(0.01)
            before = len(ticks)
            await k.arun_tool(ToolCall(id="big", name="_sum_to", arguments={"n": 20_000_000}))
            during = len(ticks) - before
            beat.cancel()
            return during

        assert _probes[registered].inline and asyncio.run(main()) > 1
    finally:
        k.close()
