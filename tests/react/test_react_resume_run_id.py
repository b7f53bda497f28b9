"""``ReActLoop.resume(run_id, ...)``: the one resume shape continues a checkpointed ReAct run with this loop's
settings, its calls awaiting approval answered first."""

import pytest

from zagent import ConfigError, Kernel
from zagent.plugins.react import ReActLoop

from .conftest import PLUGINS, call


class Cut(Exception):
    """The process 'ends' while the run is paused (raised from ``on_pause``)."""


def _raise_cut():
    raise Cut()


def _kernel(ran, **config):
    k = Kernel(plugins=[*PLUGINS, "zagent.plugins.rails"], entry_points=False, strict=True, config=config)
    k.add_tool(lambda path: ran.append(path) or "deleted", name="rm", sensitive=True, description="Delete a path.")
    return k


RAILS = {"rails": {"approver": lambda c, ctx: None}}  # "later": the call waits for a human


def _paused_run(k, store):
    """A run paused on a call awaiting approval, checkpointed, then cut off: its run id and the call ids."""
    first = ReActLoop(kernel=k, llm=k.llm("scripted:first", replies=[call("rm", path="/x")]), tools=["rm"],
                      checkpoints=store, agent_config=RAILS, on_pause=_raise_cut)
    with pytest.raises(Cut):
        first.run("clean up")
    return first.state.run_id, list(first.state.awaiting_approval)


def test_resume_with_a_run_id_and_approve_runs_the_waiting_call_and_ends(tmp_path):
    """A fresh loop on the same store: ``resume(run_id, approve=[id])`` runs the approved call and the run ends."""
    ran = []
    k = _kernel(ran)
    store = k.memory("checkpoints", path=str(tmp_path / "runs.db"))
    run_id, waiting = _paused_run(k, store)
    assert ran == [] and waiting
    loop = ReActLoop(kernel=k, llm=k.llm("scripted:second", replies=["removed"]), tools=["rm"], checkpoints=store,
                     agent_config=RAILS)
    result = loop.resume(run_id, approve=waiting)
    assert result.content == "removed" and ran == ["/x"] and result.state.run_id == run_id
    k.close()


def test_resume_with_a_run_id_and_deny_declines_the_waiting_call(tmp_path):
    """``resume(run_id, deny=[id])``: the call never runs, the model reads the decline and answers."""
    ran = []
    k = _kernel(ran)
    store = k.memory("checkpoints", path=str(tmp_path / "runs.db"))
    run_id, waiting = _paused_run(k, store)
    loop = ReActLoop(kernel=k, llm=k.llm("scripted:second", replies=["fine"]), tools=["rm"], checkpoints=store,
                     agent_config=RAILS)
    assert loop.resume(run_id, deny=waiting).content == "fine" and ran == []
    k.close()


def test_resume_with_a_run_id_needs_a_store_and_takes_no_answer(kernel):
    """Without a checkpoints store, or with ``answer=`` (a ReAct run asks nothing on resume): ``ConfigError``."""
    loop = ReActLoop(kernel=kernel, llm=kernel.llm("scripted:m", replies=["x"]))
    with pytest.raises(ConfigError, match="no checkpoints store"):
        loop.resume("r1")
    with pytest.raises(ConfigError, match="answer="):
        loop.resume("r1", answer="yes")


def test_resume_without_agent_settings_refuses_an_unsigned_checkpoint(tmp_path):
    """As ``restore``: a loop built without ``agent_config`` does not continue an unsigned run (its saved rails
    cannot be trusted); given ``agent_config=``, it does."""
    ran = []
    k = _kernel(ran)
    store = k.memory("checkpoints", path=str(tmp_path / "runs.db"))
    run_id, waiting = _paused_run(k, store)
    bare = ReActLoop(kernel=k, llm=k.llm("scripted:second", replies=["removed"]), tools=["rm"], checkpoints=store)
    with pytest.raises(ConfigError, match="is not signed"):
        bare.resume(run_id, approve=waiting)
    assert ran == []
    k.close()


def test_resume_without_agent_settings_uses_a_signed_checkpoints(tmp_path):
    """With a checkpoint key, a loop built without ``agent_config`` continues the run on its saved settings."""
    ran = []
    k = _kernel(ran, checkpoint_key="resume-key-" + "0123456789abcdef" * 2)
    store = k.memory("checkpoints", path=str(tmp_path / "runs.db"))
    run_id, waiting = _paused_run(k, store)
    bare = ReActLoop(kernel=k, llm=k.llm("scripted:second", replies=["removed"]), tools=["rm"], checkpoints=store)
    assert bare.resume(run_id, approve=waiting).content == "removed" and ran == ["/x"]
    assert "rails" in bare.agent_config
    k.close()
