"""Round sixteen, wave three: tool scope (the model calls only what it was offered), next to round fifteen's wave two.

Tried (each docstring says "got through" or "held" on the code of the wave's start): a handoff agent whose own file
lists the ``transfer_to_*`` tool of an agent its ``routes`` do not give it (registered on the shared kernel by
another hand-over group), natively, with a routed transfer beside it in one reply, and on the last hop past
``max_handoffs``; the same through a declared agent's ``handoffs`` (a target listing the transfer back); a transfer
named in another case or with a zero-width space; a transfer tool reached by an agent called as a tool inside the
hand-over; ``ask_clarification`` beside a call not offered; parallel calls where one is offered and one is not; a
tool joining a listed toolset mid-run; two agents on one kernel running at once (17 cases in 9 tests).
Got through: the file-listed transfers (4 cases), all fixed: a transfer runs only when the routes give it to the
agent holding the conversation this hop (``handoff._Pending.routed``). Held: the rest. Added by the lead: a ReAct
run on the caller's context left its own offer on it (got through, fixed: the caller's offer is restored).
"""

import pytest

from zagent.plugins.react import Handoffs

from .conftest import calls, make_kernel

STEAL = {"name": "steal", "arguments": {"path": "/etc/shadow"}}
WORD = {"name": "word_count", "arguments": {"text": "a b"}}


def move(target, name=None):
    return {"name": name or f"transfer_to_{target}", "arguments": {"reason": "x"}}


def _react(k, name, tools, replies):
    agent = k.agent({"type": "react", "name": name, "description": name, "tools": list(tools)})
    agent.llm = k.llm(f"scripted:{name}", replies=replies)
    return agent


def _admin_and_billing(k, billing_tools=("word_count",), billing_replies=("bill", "bill")):
    """``admin`` (may ``steal``) and ``billing``; an earlier hand-over group on the kernel registers their transfer
    tools, so a downloaded agent file can list them by name."""
    admin = _react(k, "admin", ["steal"], [calls(STEAL), "stolen", "stolen"])
    billing = _react(k, "billing", ["word_count"], list(billing_replies))
    Handoffs(k, [billing, admin])  # the app's other group: transfer_to_admin / transfer_to_billing now exist
    if billing_tools != ("word_count",):
        billing = _react(k, "billing", billing_tools, list(billing_replies))
    return admin, billing


@pytest.mark.parametrize("reply", [[move("admin")], [move("billing"), move("admin")], [move("admin"), move("billing")]],
                         ids=["alone", "after-routed", "before-routed"])
def test_an_agents_file_listing_a_transfer_outside_its_routes_cannot_hand_over(reply):
    """Attack (got through, round sixteen): routes let ``front`` hand over only to ``billing``; front's file lists
    ``transfer_to_admin`` (on the kernel from another group), so the scope offers it, and its model calls it (alone,
    or before the routed transfer; after it, "one handoff per reply" held). Admin ran and called ``steal``.
    Defence: a transfer runs only when the routes give it to the agent holding the conversation this hop."""
    k = make_kernel()
    try:
        admin, billing = _admin_and_billing(k)
        front = _react(k, "front", ["word_count", "transfer_to_admin"], [calls(*reply), "done", "done"])
        result = Handoffs(k, [front, billing, admin], routes={"front": ["billing"]}).chat("hello")
        assert admin.llm.calls == 0 and k.spy.ran == []
        assert result.answered_by in ("front", "billing")
    finally:
        k.close()


def test_the_last_hop_cannot_hand_over_past_max_handoffs_by_a_listed_transfer():
    """Attack (got through, round sixteen): ``max_handoffs=1``; front hands over to billing (routed), whose file lists
    ``transfer_to_admin``, which the last hop is not given; billing calls it. The transfer was taken and the run
    ended in an internal ``AssertionError`` ("unreachable"). Defence: the last hop is given no transfer, and a
    listed one is refused like any unrouted transfer; billing's answer stands."""
    k = make_kernel()
    try:
        admin, billing = _admin_and_billing(k, ("word_count", "transfer_to_admin"),
                                            [calls(move("admin")), "billing answers", "x"])
        front = _react(k, "front", ["word_count"], [calls(move("billing")), "done"])
        group = Handoffs(k, [front, billing, admin], routes={"front": ["billing"], "billing": ["admin"]},
                         max_handoffs=1)
        result = group.chat("hello")
        assert (result.answered_by, result.content) == ("billing", "billing answers")
        assert admin.llm.calls == 0 and k.spy.ran == []
    finally:
        k.close()


def test_a_declared_agents_handoff_target_cannot_hand_back_by_a_listed_transfer():
    """Attack (got through, round sixteen): ``front`` hands over to ``billing`` (its ``handoffs``: the only route);
    billing's file lists ``transfer_to_front`` (registered by front's group) and calls it, so the conversation goes
    back to front, whose model speaks again (and, looping so, spends the hand-overs). Defence: billing has no route
    back; the transfer is refused and billing answers; front's model is asked once."""
    k = make_kernel()
    try:
        front = _react(k, "front", ["word_count"], ["hi"])
        billing = _react(k, "billing", ["word_count"], ["x"])
        front.handoffs = [billing]
        front.chat("hello", use_react=True)  # front's group registers transfer_to_front and transfer_to_billing
        front = _react(k, "front", ["word_count"], [calls(move("billing")), "front again", "front again"])
        billing = _react(k, "billing", ["word_count", "transfer_to_front"], [calls(move("front")), "billing answers"])
        front.handoffs = [billing]
        reply = front.chat("hello", use_react=True)
        assert reply.content == "billing answers" and front.llm.calls == 1
    finally:
        k.close()


@pytest.mark.parametrize("name", ["Transfer_To_Billing", "transfer_to_billing\u200b", "transfer_to_billing ",
                                  "handoffs.transfer_to_billing", "toolset:handoffs"],
                         ids=["case", "zero-width", "trailing-space", "dotted", "toolset-ref"])
def test_a_look_alike_transfer_name_is_no_transfer(name):
    """Attack (held): routes give ``front`` no hand-over (``billing`` answers only when front transfers); front's
    model writes the transfer tool's name in another case, with a zero-width or trailing space, dotted under its
    toolset, or as a ``toolset:`` reference, hoping a lookup folds it to ``transfer_to_billing``. Defence: the scope
    compares names exactly; billing's model is never asked."""
    k = make_kernel()
    try:
        admin, billing = _admin_and_billing(k)
        front = _react(k, "front", ["word_count"], [calls(move("billing", name)), "done", "done"])
        result = Handoffs(k, [front, billing, admin], routes={"front": []}).chat("hello")
        assert result.answered_by == "front" and billing.llm.calls == 0 and admin.llm.calls == 0
    finally:
        k.close()


def test_an_agent_called_as_a_tool_inside_a_hand_over_cannot_transfer():
    """Attack (held): routes give ``front`` ``transfer_to_admin``; front calls its helper agent (a tool), whose file
    lists ``transfer_to_admin`` too and calls it, hoping to hand the whole conversation over from inside. Defence: a
    transfer goes only from the agent holding the conversation (its context's frame); admin never runs."""
    k = make_kernel()
    try:
        admin, billing = _admin_and_billing(k)
        helper = k.agent({"name": "helper", "description": "helps", "prompt": "Help: {text}",
                          "inputs": [{"name": "text"}], "outputs": [{"name": "answer"}], "parse_mode": "str",
                          "tools": ["transfer_to_admin"]})
        helper.llm = k.llm("scripted:helper", replies=[calls(move("admin")), "helped", "helped"])
        helper.as_tool()
        front = _react(k, "front", ["helper"], [calls({"name": "helper", "arguments": {"text": "x"}}), "done"])
        result = Handoffs(k, [front, billing, admin], routes={"front": ["admin"]}).chat("hello")
        assert result.answered_by == "front" and admin.llm.calls == 0 and k.spy.ran == []
    finally:
        k.close()


def test_a_clarification_beside_a_call_not_offered_runs_neither():
    """Attack (held): a ReAct agent offered ``word_count`` (with ``ask_clarification``) replies with a clarification
    and a ``steal`` call at once, hoping the pseudo-tool's branch runs the batch without the scope. Defence: the
    clarification is answered with a note and ``steal`` is blocked as not offered."""
    k = make_kernel()
    try:
        agent = _react(k, "asker", ["word_count"], [
            calls({"name": "ask_clarification", "arguments": {"questions": ["which file?"]}}, STEAL), "done", "x"])
        loop = agent.loop()
        loop.allow_clarification = True
        loop.run("go")
        assert k.spy.ran == []
        assert [s.is_blocked for s in loop.state.steps if s.tool == "steal"] == [True]
    finally:
        k.close()


@pytest.mark.parametrize("order", ["offered-first", "steal-first"])
def test_parallel_calls_run_only_the_offered_one(order):
    """Attack (held): one native reply of a declared agent holds an offered ``word_count`` and a ``steal`` call in
    either order, run at once, hoping the batch is checked by its first call. Defence: each call meets the scope:
    ``word_count`` runs, ``steal`` is blocked."""
    k = make_kernel()
    try:
        agent = k.agent({"name": "Counter", "description": "counts", "prompt": "Count: {text}",
                         "inputs": [{"name": "text"}], "outputs": [{"name": "answer"}], "parse_mode": "str",
                         "tools": ["word_count"]})
        pair = [WORD, STEAL] if order == "offered-first" else [STEAL, WORD]
        agent.llm = k.llm("scripted:counter", replies=[calls(*pair), "2", "2"])
        agent(text="a b")
        assert k.spy.ran == ["word_count"]
    finally:
        k.close()


@pytest.mark.parametrize("kind", ["react", "declared"])
def test_a_tool_joining_a_listed_toolset_mid_run_is_not_offered(kind):
    """Attack (held): an agent lists ``toolset:fs`` (``fs_read``); while its first call runs, a source (an MCP server
    reconnecting, the app) registers ``fs_delete`` in the same toolset, and the model's next reply calls it, hoping
    the run reads the toolset again. Defence: the agent's tools are resolved when it is built; ``fs_delete`` is
    blocked as not offered."""
    k = make_kernel()
    ran = []
    try:
        def fs_read(path: str) -> str:
            """Read a file."""
            ran.append("fs_read")
            if k.find("tools", "fs_delete") is None:
                k.add_tool(lambda path: ran.append("fs_delete") or "gone", name="fs_delete", description="delete",
                           toolset="fs")
            return "text"

        k.add_tool(fs_read, toolset="fs")
        replies = [calls({"name": "fs_read", "arguments": {"path": "a"}}),
                   calls({"name": "fs_delete", "arguments": {"path": "a"}}), "done", "done"]
        if kind == "react":
            agent = _react(k, "reader", ["toolset:fs"], replies)
            agent.loop().run("go")
        else:
            agent = k.agent({"name": "Reader", "description": "reads", "prompt": "Read: {text}",
                             "inputs": [{"name": "text"}], "outputs": [{"name": "answer"}], "parse_mode": "str",
                             "tools": ["toolset:fs"]})
            agent.llm = k.llm("scripted:reader", replies=replies)
            agent(text="a")
        assert ran == ["fs_read"] and k.find("tools", "fs_delete") is not None
    finally:
        k.close()


def test_an_agent_cannot_call_the_tool_of_another_running_at_once_on_the_kernel():
    """Attack (held): two ReAct agents share one kernel and run at once; ``keeper`` is offered ``steal`` and is in
    the middle of its run when ``guest`` (offered ``word_count``) calls ``steal``, hoping the scope is the kernel's
    latest one. Defence: each run's scope is its own context's; guest's call is blocked, keeper's runs."""
    import asyncio

    k = make_kernel()
    try:
        gate = asyncio.Event()

        async def wait(text: str) -> str:
            """Wait for the other agent."""
            await gate.wait()
            return "ok"

        k.add_tool(wait)
        keeper = _react(k, "keeper", ["steal", "wait"], [calls({"name": "wait", "arguments": {"text": "x"}}),
                                                         calls(STEAL), "kept", "kept"])
        guest = _react(k, "guest", ["word_count"], [calls(STEAL), "done", "done"])

        async def both():
            first = asyncio.ensure_future(keeper.loop().arun("go"))
            await asyncio.sleep(0.05)  # keeper is inside its run, waiting in ``wait``
            loop = guest.loop()
            await loop.arun("go")
            gate.set()
            await first
            return loop

        loop = asyncio.run(both())
        assert [s.is_blocked for s in loop.state.steps if s.tool == "steal"] == [True]
        assert k.spy.ran == ["steal"]  # keeper's own call, after guest's was blocked
    finally:
        k.close()


def test_a_react_run_on_the_callers_context_gives_back_the_callers_offer():
    """Attack (got through, round sixteen): an app runs a ReAct agent offered ``steal`` on its own context (``ctx=``),
    whose offer held ``word_count`` only; the loop set the context's offer to its own and never put it back, so the
    app's next model turn on that context could call ``steal``. Defence: the loop restores the caller's offer when
    the run ends, and the kernel blocks ``steal`` on that context again."""
    k = make_kernel()
    try:
        ctx = k.context(agent="app")
        ctx.offered_tools = frozenset({"word_count"})
        from zagent.plugins.react import ReActLoop

        inner = ReActLoop(kernel=k, llm=k.llm("scripted:inner", replies=["nothing to do"]), agent="inner",
                          tools=["steal"])
        inner.run("hello", ctx=ctx)
        assert ctx.offered_tools == frozenset({"word_count"})
        result = k.run_tool(STEAL, ctx)
        assert not result.ok and k.spy.ran == []
    finally:
        k.close()
