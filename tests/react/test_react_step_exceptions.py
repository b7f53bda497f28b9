"""An exception inside a ReAct step that is not a provider error aborts the run: status ``aborted``, a
checkpoint written, the error raised to the caller."""

import msgspec
import pytest

from zagent.plugins.react import ReActLoop

SEED = """Seed 004 (Agent-Z ReActLoop.run): "except Exception as e: self.logger.error(f"步骤执行错误: {e}");
self._state = LoopState.ABORTED; break" (an error while executing a step sets the state to ABORTED)."""


def broken_loop(kernel, tmp_path, error):
    store = kernel.memory("checkpoints", path=str(tmp_path / "runs.db"))
    llm = kernel.llm("scripted:broken", replies=[error])
    return ReActLoop(kernel=kernel, llm=llm, tools=["add"], checkpoints=store), store


@pytest.mark.parametrize("error", [RuntimeError("a plugin bug"), KeyError("missing"), TypeError("bad type")])
def test_a_step_raising_sets_aborted_and_checkpoints(kernel, tmp_path, error):
    """Seed 004 (Agent-Z ReActLoop.run): "except Exception as e: ... self._state = LoopState.ABORTED; break"
    (an error inside a step sets ABORTED). A step whose model call raises something that is not a provider
    error leaves the loop ``aborted`` (not ``running``), with a checkpoint of that status in the store, and
    the caller gets the error itself."""
    loop, store = broken_loop(kernel, tmp_path, error)
    with pytest.raises(type(error)):
        loop.run("add 2 and 3")
    assert loop.status == "aborted"
    saved = store.latest(loop.state.run_id)
    assert saved is not None, "no checkpoint was written"
    state = msgspec.json.decode(saved[1])
    assert state["status"] == "aborted" and type(error).__name__ in state["error"]


def test_an_aborted_step_is_in_the_trajectory(kernel, tmp_path):
    """Seed 004 (Agent-Z StepResult): "is_error: bool" (a step records whether it failed). The step that
    raised is recorded as an error step naming the exception, and the run ends with ``run_end`` aborted."""
    seen = []

    class Events:
        def zagent_event(self, event):
            seen.append((event.type, dict(event.data)))

    kernel.add_plugin(Events(), name="events")
    loop, _ = broken_loop(kernel, tmp_path, RuntimeError("a plugin bug"))
    with pytest.raises(RuntimeError):
        loop.run("add 2 and 3")
    assert loop.state.steps[-1].is_error and "a plugin bug" in loop.state.steps[-1].reason
    assert [d["status"] for t, d in seen if t == "run_end"] == ["aborted"]
