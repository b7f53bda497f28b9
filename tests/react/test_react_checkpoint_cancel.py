"""A ReAct run cancelled while a checkpoint is being written: the loop's next checkpoint is a whole one
(the cancelled write may or may not have landed, so no patch can build on it), and the state reads back right."""

import asyncio

import msgspec
import pytest

from zagent.plugins.memory.checkpoints import CheckpointStore
from zagent.plugins.react import ReActLoop
from zagent.plugins.react.state import ReActState

from .conftest import call, spy_checkpoints

N = 8


class Stalling(CheckpointStore):
    """A real checkpoint store that stalls (until cancelled) in its first patch write from step 6 on that
    follows a whole save, so that patch would normally be followed by another; with ``land`` the patch is
    written before the stall (the write landed, its caller never heard), without it it never is."""

    land: bool
    stalled_at: "int | None"
    stalled: asyncio.Event
    full_at: int

    async def asave(self, run_id, step, state, **kw):
        await super().asave(run_id, step, state, **kw)
        self.full_at = step

    async def asave_patch(self, run_id, step, patch, **kw):
        if self.stalled_at is None and step >= 6 and self.full_at == step - 1:
            self.stalled_at = step
            if self.land:
                await super().asave_patch(run_id, step, patch, **kw)
            self.stalled.set()
            await asyncio.Event().wait()
        await super().asave_patch(run_id, step, patch, **kw)


def rows(store, run_id):
    return dict(store.db.read(lambda c: c.execute(
        "SELECT step, patch FROM checkpoints WHERE run_id = ? ORDER BY step", (run_id,)).fetchall()))


@pytest.mark.parametrize("land", [True, False], ids=["write-landed", "write-lost"])
def test_a_run_cancelled_during_a_checkpoint_write_saves_its_next_checkpoint_whole(kernel, tmp_path, land):
    """Cancelled in a patch write and then continued, the loop saves its next checkpoint whole, and every
    checkpoint after the cancelled one reads back as the state the loop had when it saved it."""
    store = Stalling.open(str(tmp_path / "runs.db"), keep_last=None)
    store.land, store.stalled_at, store.stalled, store.full_at = land, None, asyncio.Event(), -1
    llm = kernel.llm("scripted:m", replies=[call("add", a=i, b=1) for i in range(N)] + ["done"])
    loop = ReActLoop(kernel=kernel, llm=llm, tools=["add"], checkpoints=store, max_iterations=N + 5)
    seen = spy_checkpoints(loop)

    async def main():
        run = asyncio.ensure_future(loop.arun("count"))
        await store.stalled.wait()
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        return await loop.arun()  # the same loop carries on from its state

    result = asyncio.run(main())
    run_id, cancelled = result.state.run_id, store.stalled_at
    saved = rows(store, run_id)
    assert result.content == "done" and (cancelled in saved) == land
    assert saved[cancelled + 1] == 0, "the checkpoint after the cancelled write is whole"
    later = [step for step in saved if step > cancelled]
    assert later and any(saved[step] for step in later)  # patches resume after it
    for step in later:
        assert msgspec.json.decode(store.load(run_id, step), type=ReActState) == \
            msgspec.json.decode(seen[step], type=ReActState), step
    store.close()
