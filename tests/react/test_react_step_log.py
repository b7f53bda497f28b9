"""Checkpoints as a step log: each step saved as its change, the whole state now and then, read back whole."""

import msgspec
import pytest

from zagent.plugins.react import ReActLoop
from zagent.plugins.react.state import ReActState

from .conftest import call, spy_checkpoints

N = 60


class Crash(BaseException):
    """Stands for the process dying inside a tool call (not caught as a tool error)."""


def plan(n):
    return [call("add", a=i, b=1) for i in range(n)] + ["done"]


def rows(store, run_id):
    return store.db.read(lambda c: c.execute(
        "SELECT step, patch, length(state) FROM checkpoints WHERE run_id = ? ORDER BY step", (run_id,)).fetchall())


@pytest.fixture
def store(kernel, tmp_path):
    s = kernel.memory("checkpoints", path=str(tmp_path / "runs.db"), keep_last=None)
    yield s
    s.close()


def run(kernel, store, replies, name="m", **kw):
    llm = kernel.llm(f"scripted:{name}", replies=replies)
    return ReActLoop(kernel=kernel, llm=llm, tools=["add"], checkpoints=store, max_iterations=N + 5, **kw)


def test_most_checkpoints_of_a_long_run_are_patches(kernel, store):
    """A 60-step run writes patches between occasional full saves; its first and last checkpoints are full."""
    result = run(kernel, store, plan(N)).run("count")
    saved = rows(store, result.state.run_id)
    patches = [r for r in saved if r[1]]
    assert saved[0][1] == 0 and saved[-1][1] == 0  # first checkpoint of the loop, and the completed state
    assert len(patches) > 0.8 * len(saved)


def test_latest_of_a_patched_run_is_the_run_state(kernel, store):
    """The state read back from the last patch equals the loop's state at that checkpoint, field for field."""
    loop = run(kernel, store, plan(N))
    seen = spy_checkpoints(loop)
    result = loop.run("count")
    for step, is_patch, _ in rows(store, result.state.run_id):
        if is_patch:
            rebuilt = msgspec.json.decode(store.load(result.state.run_id, step), type=ReActState)
            assert rebuilt == msgspec.json.decode(seen[step], type=ReActState), step


def test_bytes_written_per_step_stay_flat(kernel, store):
    """A patch late in a run is no bigger than one early on, and the second half of a run writes about what the
    first half did (saving the whole state every step writes about three times as much in the second half)."""
    result = run(kernel, store, plan(N)).run("count")
    saved = rows(store, result.state.run_id)
    patch_sizes = [size for step, is_patch, size in saved if is_patch]
    early, late = patch_sizes[5:15], patch_sizes[-10:]
    assert max(late) <= 1.2 * max(early)
    half = len(saved) // 2
    first, second = sum(r[2] for r in saved[:half]), sum(r[2] for r in saved[half:2 * half])
    assert second < 1.6 * first


def test_run_crashed_after_patches_restores_and_ends_like_an_uninterrupted_one(kernel, store):
    """Killed mid-run with patches as its latest checkpoints, a restored run ends with the same messages and steps."""
    calls = {"n": 0}

    def add(a: int, b: int) -> int:
        """Add two integers (the 25th call dies)."""
        calls["n"] += 1
        if calls["n"] == 25:
            raise Crash()
        return a + b

    kernel.add_tool(add, inline=True, override=True)
    with pytest.raises(Crash):
        run(kernel, store, plan(N), max_tool_call_concurrency=1).run("count")
    (run_id,) = [r.run_id for r in store.list()]
    assert rows(store, run_id)[-1][1] == 1  # the latest checkpoint is a patch
    step, _ = store.latest(run_id)
    llm = kernel.llm("scripted:again", replies=plan(N)[25:])  # the crashed call is pending: it runs first
    resumed = ReActLoop.restore(kernel, run_id, checkpoints=store, llm=llm, tools=["add"], max_iterations=N + 5,
                                agent_config={})
    result = resumed.run()
    assert result.content == "done" and calls["n"] == N + 1  # the crashed call ran again, no other
    clean = run(kernel, None, plan(N), name="clean").run("count")
    assert [m.content for m in result.state.messages] == [m.content for m in clean.state.messages]
    assert [(s.tool, s.result) for s in result.state.steps] == [(s.tool, s.result) for s in clean.state.steps]


def test_compression_saves_the_whole_state(kernel, store):
    """When compression replaces the messages, the next checkpoint is a full save, and it reads back right."""
    replies = iter(plan(8))

    def reply(request):
        if "compress" in (request.messages[0].content or "").lower():
            return "they added numbers"
        return next(replies)

    llm = kernel.llm("scripted:c", replies=[reply] * 40)
    loop = ReActLoop(kernel=kernel, llm=llm, tools=["add"], checkpoints=store, max_context_messages=6, keep_recent=2)
    result = loop.run("add a lot")
    step, raw = store.latest(result.state.run_id)
    assert msgspec.json.decode(raw, type=ReActState) == result.state
