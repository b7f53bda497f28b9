"""Attack: an agent's rails (from its spec) try to lift the policy the host app set in Kernel(config=...)."""

import pytest

from zagent import ToolCall, run_sync

from .conftest import make_kernel


def run(k, rails, name="word_count", call_id="c1", **arguments):
    arguments = arguments or ({"text": "a b"} if name not in ("wipe", "leak") else {})
    ctx = k.context(agent="a", agent_config={"rails": rails})
    return run_sync(k.arun_tool(ToolCall(id=call_id, name=name, arguments=arguments), ctx))


def kernel_with(rails):
    k = make_kernel(config={"rails": rails})
    k.add_tool(lambda: "wiped", name="wipe", sensitive=True, description="wipe everything")
    return k


def test_agent_cannot_remove_a_kernel_deny():
    """deny_tools: [] in the agent does not lift the kernel's deny."""
    k = kernel_with({"deny_tools": ["steal"]})
    assert run(k, {"deny_tools": []}, "steal", path="p").state == "blocked"


def test_agent_can_add_a_deny():
    """The agent's deny_tools add to the kernel's."""
    k = kernel_with({"deny_tools": ["steal"]})
    r = run(k, {"deny_tools": ["word_count"]})
    assert r.state == "blocked" and "deny_tools" in r.error


def test_agent_allow_list_cannot_widen_the_kernels():
    """Kernel allows only word_count; an agent allowing '*' still cannot run steal."""
    k = kernel_with({"allow_tools": ["word_count"]})
    assert run(k, {"allow_tools": ["*"]}, "steal", path="p").state == "blocked"
    assert run(k, {"allow_tools": ["*"]}).state == "success"


def test_agent_allow_list_narrows():
    """An agent's allow-list applies on top of the kernel's."""
    k = kernel_with({"allow_tools": ["word_count", "steal"]})
    assert run(k, {"allow_tools": ["word_count"]}, "steal", path="p").state == "blocked"


def test_agent_cannot_raise_a_kernel_budget():
    """Kernel budget 1 call; an agent budget of 100 does not raise it (the lower limit wins)."""
    k = kernel_with({"tool_budget": {"*": 1}})
    ctx = k.context(agent="a", agent_config={"rails": {"tool_budget": {"word_count": 100}}})
    first = k.run_tool(ToolCall(id="1", name="word_count", arguments={"text": "a"}), ctx)
    second = k.run_tool(ToolCall(id="2", name="word_count", arguments={"text": "a"}), ctx)
    assert (first.state, second.state) == ("success", "blocked") and "budget" in second.error


def test_agent_can_lower_a_budget():
    """Kernel budget 5, agent budget 1: the second call is blocked."""
    k = kernel_with({"tool_budget": {"*": 5}})
    ctx = k.context(agent="a", agent_config={"rails": {"tool_budget": {"word_count": 1}}})
    k.run_tool(ToolCall(id="1", name="word_count", arguments={"text": "a"}), ctx)
    assert k.run_tool(ToolCall(id="2", name="word_count", arguments={"text": "a"}), ctx).state == "blocked"


@pytest.mark.parametrize("agent_limit, state", [(10_000, "blocked"), (None, "blocked"), (5, "blocked")])
def test_agent_cannot_raise_the_argument_size_limit(agent_limit, state):
    """max_argument_bytes: the lower of kernel's and agent's (an agent cannot raise or remove it)."""
    k = kernel_with({"max_argument_bytes": 20})
    assert run(k, {"max_argument_bytes": agent_limit}, text="x" * 50).state == state


def test_agent_cannot_turn_approval_off():
    """approval: false in the agent does not run a sensitive tool past a kernel approver that says no."""
    k = kernel_with({"approver": lambda call, ctx: False})
    r = run(k, {"approval": False}, "wipe")
    assert r.state == "blocked" and "declined" in r.error
    r = run(k, {"approval": {"sensitive": False}}, "wipe", call_id="c2")
    assert r.state == "blocked"


def test_agent_cannot_replace_the_kernels_approver():
    """An agent's own approver (say-yes) does not replace the kernel's (say-no)."""
    k = kernel_with({"approver": lambda call, ctx: False})
    assert run(k, {"approver": lambda call, ctx: True}, "wipe").state == "blocked"


def test_agent_can_add_approval():
    """An agent may require approval for a tool the kernel lets through."""
    k = kernel_with({"approver": lambda call, ctx: False})
    r = run(k, {"approval": {"tools": ["word_count"]}})
    assert r.state == "blocked" and "declined" in r.error


def test_agent_cannot_switch_redaction_off():
    """The kernel's redact patterns apply whatever the agent says; the agent's are added."""
    k = make_kernel(config={"rails": {"redact": [r"sk-\w+"]}})
    k.add_tool(lambda: "key sk-abc and pin 1234", name="leak", description="leaks")
    r = run(k, {"redact": [r"\d{4}"], "redact_llm": False}, "leak")
    assert r.content == "key [REDACTED] and pin [REDACTED]"


def test_kernel_policy_without_agent_rails_is_unchanged():
    """With no agent rails, the kernel's settings apply as they are."""
    k = kernel_with({"deny_tools": ["steal"]})
    assert run(k, {}, "steal", path="p").state == "blocked" and run(k, {}).state == "success"
