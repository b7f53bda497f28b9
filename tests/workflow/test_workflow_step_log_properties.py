"""Property: whatever a run does between checkpoints, the store's patch and rebuild give back the whole state."""

import asyncio
import itertools

import msgspec
from hypothesis import given, settings, strategies as st
from zagent import Kernel
from zagent.agentkit.steplog import StepLog

KEYS = st.sampled_from("abcdef")
OPS = st.one_of(
    st.tuples(st.just("append"), st.integers(-5, 5)),            # a list only appended to (the trace)
    st.tuples(st.just("set"), KEYS, st.integers(0, 9)),           # a tracked map's entry written (values, done)
    st.tuples(st.just("remove"), KEYS),                           # ... or removed (a loop resets a node)
    st.tuples(st.just("add"), KEYS, st.integers(0, 9)),           # an add-only map (finished results)
    st.tuples(st.just("new_map")),                                # that map replaced
    st.tuples(st.just("status"), st.sampled_from(["running", "running", "paused"])),
    st.tuples(st.just("checkpoint")),
)
_runs = itertools.count()


class State(msgspec.Struct):
    run_id: str
    status: str = "running"
    trace: list[int] = []
    values: dict[str, int] = {}
    finished: dict[str, int] = {}
    checkpoint: int = 0


async def play(store, ops):
    """Apply ``ops``, checkpointing through a ``StepLog``; return (state as saved, store's latest) pairs."""
    state, log = State(run_id=f"run-{next(_runs)}"), StepLog(lists=("trace",), maps=("finished",),
                                                              tracked=("values",), small=("status", "checkpoint"))
    seen = []
    for op, *args in [*ops, ("checkpoint",)]:
        if op == "append":
            state.trace.append(args[0])
        elif op == "set":
            state.values[args[0]] = args[1]
            log.touch("values", args[0])
        elif op == "remove" and args[0] in state.values:
            del state.values[args[0]]
            log.touch("values", args[0])
        elif op == "add" and args[0] not in state.finished:
            state.finished[args[0]] = args[1]
        elif op == "new_map":
            state.finished = {}
        elif op == "status":
            state.status = args[0]
        elif op == "checkpoint":
            state.checkpoint += 1
            await log.asave(store, state.run_id, state.checkpoint, state, kind="test")
            seen.append((msgspec.to_builtins(state), msgspec.json.decode((await store.alatest(state.run_id))[1])))
    return seen


@settings(max_examples=150, deadline=None)
@given(ops=st.lists(OPS, max_size=60))
def test_latest_after_any_run_of_changes_is_the_whole_state(tmp_path_factory, ops):
    """apply(full save, patches) == the state at every checkpoint, with retention trimming (keep_last=3)."""
    with Kernel(plugins=["zagent.plugins.memory"], entry_points=False, strict=True) as k:
        store = k.memory("checkpoints", path=str(tmp_path_factory.getbasetemp() / "props.db"), keep_last=3)
        for state, latest in asyncio.run(play(store, ops)):
            assert latest == state
        store.close()
