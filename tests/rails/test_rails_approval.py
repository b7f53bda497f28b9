"""The human-approval rail: sensitive tools and ``approval.tools`` ask ``rails["approver"]``."""

import io

import pytest

from zagent import Deny, Kernel, ToolCall, run_sync, tool
from zagent.agentkit.approvals import approval_key
from zagent.agentkit.runkeys import CALL_KEYS
from zagent.plugins.rails import APPROVED_KEY, AWAITING, BUDGET_KEY, PENDING_KEY, console_approver


@tool(sensitive=True)
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool
def shell(command: str) -> str:
    """Run a shell command."""
    return f"ran {command}"


def make_kernel(*plugins, config=None):
    k = Kernel(plugins=["zagent.plugins.rails", *plugins], entry_points=False, strict=True, config=config)
    k.add_tool(delete)
    k.add_tool(shell)
    return k


def run(k, ctx, name="delete", call_id="c1"):
    arguments = {"path": "x"} if name == "delete" else {"command": "ls"}
    return run_sync(k.arun_tool(ToolCall(id=call_id, name=name, arguments=arguments), ctx))


class Approver:
    """Answers ``answer`` and records what it was asked."""

    def __init__(self, answer):
        self.answer, self.asked = answer, []

    def __call__(self, call, ctx):
        self.asked.append(call.id)
        return self.answer


def ctx_with(k, **rails):
    return k.context(agent="a", agent_config={"rails": rails})


def test_approved_call_runs():
    """An approver answering True lets a sensitive tool run."""
    k, approver = make_kernel(), Approver(True)
    r = run(k, ctx_with(k, approver=approver))
    assert r.state == "success" and approver.asked == ["c1"]


def test_declined_call_is_blocked():
    """An approver answering False blocks the call: "a human declined"."""
    k = make_kernel()
    r = run(k, ctx_with(k, approver=Approver(False)))
    assert r.state == "blocked" and "a human declined" in r.error


def test_async_approver_is_awaited():
    """An ``async def`` approver works the same as a sync one."""
    async def approver(call, ctx):
        return True

    k = make_kernel()
    assert run(k, ctx_with(k, approver=approver)).state == "success"


def test_undecided_call_is_pending():
    """An approver answering None blocks with "awaiting human approval" and records the call id as pending."""
    k = make_kernel()
    ctx = ctx_with(k, approver=Approver(None))
    r = run(k, ctx)
    assert r.state == "blocked" and r.error == AWAITING
    assert ctx.stash[PENDING_KEY] == {"c1"}


def test_pre_approved_call_runs_without_asking():
    """A call whose approval key (minted id, tool, arguments) is in ``ctx.stash[APPROVED_KEY]`` runs unasked."""
    k, approver = make_kernel(), Approver(False)
    ctx = ctx_with(k, approver=approver)
    ctx.stash[CALL_KEYS] = {"c1": "z1"}
    ctx.stash[APPROVED_KEY] = {approval_key("z1", "delete", {"path": "x"})}
    assert run(k, ctx).state == "success" and approver.asked == []


def test_an_approved_model_id_alone_approves_nothing():
    """The model's call id in the approved set (the old form) does not let the call through: the approver is asked."""
    k, approver = make_kernel(), Approver(False)
    ctx = ctx_with(k, approver=approver)
    ctx.stash[CALL_KEYS] = {"c1": "z1"}
    ctx.stash[APPROVED_KEY] = {"c1", approval_key("z1", "delete", {"path": "other"})}
    assert run(k, ctx).state == "blocked" and approver.asked == ["c1"]


def test_no_approver_blocks_sensitive_tools_and_says_how_to_configure_one():
    """Without an approver a sensitive tool is blocked with a message naming ``rails['approver']``."""
    k = make_kernel()
    r = run(k, k.context())
    assert r.state == "blocked" and "rails['approver']" in r.error


def test_approval_list_covers_tools_not_marked_sensitive():
    """Tools matching ``approval.tools`` need approval too."""
    k, approver = make_kernel(), Approver(False)
    r = run(k, ctx_with(k, approval={"tools": ["sh*"]}, approver=approver), name="shell")
    assert r.state == "blocked" and approver.asked == ["c1"]


def test_tools_neither_sensitive_nor_listed_need_no_approval():
    """A plain tool runs without the approver being asked."""
    k, approver = make_kernel(), Approver(False)
    assert run(k, ctx_with(k, approver=approver), name="shell").state == "success" and approver.asked == []


def test_approver_from_kernel_config():
    """``kernel.config["rails"]["approver"]`` is used when the agent sets none."""
    k = make_kernel(config={"rails": {"approver": Approver(True)}})
    assert run(k, k.context()).state == "success"


def test_approver_that_raises_fails_closed():
    """An approver that raises blocks the call (the rail fails closed)."""
    def approver(call, ctx):
        raise RuntimeError("no terminal")

    k = make_kernel()
    r = run(k, ctx_with(k, approver=approver))
    assert r.state == "blocked" and "no terminal" in r.error


def test_approver_answering_garbage_blocks():
    """An approver answer other than True, False or None blocks the call."""
    k = make_kernel()
    assert run(k, ctx_with(k, approver=Approver("yes"))).state == "blocked"


class Denier:
    """Another rail that denies every call."""

    def zagent_before_tool_call(self, call, ctx):
        return Deny("closed for maintenance")


def test_human_is_not_asked_about_a_call_another_rail_denied():
    """Approval runs last: a call denied by another rail never reaches the approver."""
    k, approver = make_kernel(Denier()), Approver(True)
    r = run(k, ctx_with(k, approver=approver))
    assert r.error == "closed for maintenance" and approver.asked == []


def test_unapproved_call_does_not_use_the_budget():
    """A declined or pending call is given back to the tool budget."""
    k = make_kernel()
    ctx = ctx_with(k, approver=Approver(None), tool_budget={"delete": 1})
    run(k, ctx)
    assert ctx.stash[BUDGET_KEY].counts == {"delete": 0}


def test_console_approver_yes(monkeypatch, capsys):
    """The console approver allows on "y" and shows the call on stderr."""
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    k = make_kernel()
    assert run(k, ctx_with(k, approver="console")).state == "success"
    assert "delete" in capsys.readouterr().err


def test_console_approver_no_and_end_of_input():
    """The console approver declines on "n" and on end of input."""
    k = make_kernel()
    for text in ("n\n", ""):
        import sys
        old, sys.stdin = sys.stdin, io.StringIO(text)
        try:
            assert run_sync(console_approver(ToolCall(id="1", name="delete"), k.context())) is False
        finally:
            sys.stdin = old


def test_console_approver_asks_when_the_terminal_refuses_the_type_ahead_flush(monkeypatch):
    """A terminal refusing the flush of what was typed ahead (``termios.error``: a background job, a pseudo-terminal
    gone away) does not fail the question: it is asked, and "y" allows."""
    termios = pytest.importorskip("termios")

    class Tty(io.StringIO):
        def isatty(self):
            return True

        def fileno(self):
            return 0

    def refuse(fd, queue):
        raise termios.error(5, "Input/output error")

    monkeypatch.setattr("sys.stdin", Tty("y\n"))
    monkeypatch.setattr(termios, "tcflush", refuse)
    k = make_kernel()
    assert run_sync(console_approver(ToolCall(id="1", name="delete"), k.context())) is True


def test_console_approver_later(monkeypatch):
    """The console approver answers None ("ask later") on "l", after re-asking on unknown input."""
    monkeypatch.setattr("sys.stdin", io.StringIO("maybe\nl\n"))
    k = make_kernel()
    assert run_sync(console_approver(ToolCall(id="1", name="delete"), k.context())) is None


def test_console_approver_now_offers_no_later(monkeypatch, capsys):
    """The chat's approver does not offer [l]ater: "l" is asked again, and "y" then allows."""
    from zagent.plugins.rails import console_approver_now

    monkeypatch.setattr("sys.stdin", io.StringIO("l\ny\n"))
    k = make_kernel()
    assert run_sync(console_approver_now(ToolCall(id="1", name="delete"), k.context())) is True
    err = capsys.readouterr().err
    assert "[l]ater" not in err and err.count("Allow? [y]es / [n]o:") == 2


def test_approval_of_sensitive_tools_can_be_switched_off():
    """``approval: {"sensitive": false}`` in the kernel's config lets sensitive tools run without a human."""
    k = make_kernel(config={"rails": {"approval": {"sensitive": False}}})
    assert run(k, k.context(agent="a")).state == "success"


def test_approval_false_switches_the_rail_off():
    """``approval: false`` in the kernel's config means no call needs a human."""
    k = make_kernel(config={"rails": {"approval": False}})
    assert run(k, k.context(agent="a")).state == "success"


def test_agent_approval_false_cannot_switch_the_kernel_default_off():
    """An agent's ``approval: false`` does not lift the kernel's default (sensitive tools ask a human)."""
    k = make_kernel()
    r = run(k, ctx_with(k, approval=False))
    assert r.state == "blocked" and "approver" in r.error


def test_approver_by_import_path(monkeypatch):
    """The kernel's ``approver`` may name a function as ``"package.module:function"``."""
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    k = make_kernel(config={"rails": {"approver": "zagent.plugins.rails.approval:console_approver"}})
    assert run(k, k.context(agent="a")).state == "success"


def test_a_declined_call_does_not_use_a_tool_call_of_the_usage_limit():
    """Under ``usage_limits: {tool_calls: 1}``, a call a human declined is not counted (it never ran, as the
    budget gives it back): the next allowed call still runs."""
    k = make_kernel()
    ctx = ctx_with(k, approver=Approver(False), usage_limits={"tool_calls": 1})
    assert run(k, ctx, "delete", "c1").state == "blocked"
    assert run(k, ctx, "shell", "c2").state == "success"


def test_a_call_waiting_for_a_human_does_not_use_a_tool_call_of_the_usage_limit():
    """A call left pending (the approver undecided) is not counted either: it runs, and is counted, once approved."""
    k = make_kernel()
    ctx = ctx_with(k, approver=Approver(None), usage_limits={"tool_calls": 1})
    assert run(k, ctx, "delete", "c1").state == "blocked"
    assert run(k, ctx, "shell", "c2").state == "success"
