"""Child process for the durability tests: writes to a memory file and reports each commit.

    python memory_child.py messages PATH NAMESPACE      # batches of 1..5 messages, forever
    python memory_child.py writer PATH NAMESPACE COUNT  # COUNT messages in batches of 1..3, then exit
    python memory_child.py checkpoints PATH RUN_ID STEPS  # the toy loop, one checkpoint per step

After each committed write it prints one line (the running total or the
step) and flushes, so the parent knows exactly what was committed before it
killed the child. ``toy_step`` is the deterministic "loop" both sides run.
"""

import hashlib
import sys

import msgspec


class LoopState(msgspec.Struct):
    """State of the toy loop: the step reached and the trajectory so far."""

    step: int
    trajectory: list[str]


def batch_size(i):
    """Size of the i-th batch of the ``messages`` mode (the parent recomputes it)."""
    return i % 5 + 1


def toy_step(state):
    """One deterministic step: the next trajectory entry depends on everything before it."""
    digest = hashlib.sha256("|".join(state.trajectory).encode()).hexdigest()[:12]
    return LoopState(step=state.step + 1, trajectory=[*state.trajectory, f"step{state.step + 1}:{digest}"])


def _kernel():
    from zagent import Kernel

    return Kernel(plugins=["zagent.plugins.memory"], entry_points=False)


def messages(path, namespace):
    from zagent import Message

    mem = _kernel().memory("sqlite", path=path)
    print("ready", flush=True)
    total, i = 0, 0
    while True:
        n = batch_size(i)
        mem.add(namespace, [Message.user(f"{namespace} message {total + j} " + "x" * 200) for j in range(n)])
        total, i = total + n, i + 1
        print(total, flush=True)


def writer(path, namespace, count):
    from zagent import Message

    mem = _kernel().memory("sqlite", path=path, busy_timeout=30.0)
    done, i = 0, 0
    while done < count:
        n = min(count - done, i % 3 + 1)
        mem.add(namespace, [Message.assistant(f"{namespace} wrote {done + j}") for j in range(n)])
        done, i = done + n, i + 1
    print(done, flush=True)


def checkpoints(path, run_id, steps):
    store = _kernel().memory("checkpoints", path=path)
    found = store.latest(run_id)
    state = msgspec.json.decode(found[1], type=LoopState) if found else LoopState(step=0, trajectory=[])
    print("ready", flush=True)
    while state.step < steps:
        state = toy_step(state)
        store.save(run_id, state.step, state, kind="toy")
        print(state.step, flush=True)


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "messages":
        messages(args[0], args[1])
    elif mode == "writer":
        writer(args[0], args[1], int(args[2]))
    elif mode == "checkpoints":
        checkpoints(args[0], args[1], int(args[2]))
    else:
        sys.exit(f"unknown mode {mode!r}")
