"""The tool-loop core (``zagent.agentkit.toolloop``): offers, turns, results, scope and the shared nudge,
with the scripted provider; and the attack both loops meet through it (a tool the model was not offered)."""

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zagent import Kernel, Message, ToolCall, ToolResult, ToolSpec
from zagent.agentkit.toolloop import NUDGE, ToolLoop, results_messages, scoped

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react"]
PSEUDO = ToolSpec(name="ask_clarification", description="Ask the user.", parameters={"type": "object"})


@pytest.fixture
def kernel():
    """A fresh kernel with `word_count` (offered in these tests) and `steal` (never offered); `ran` records runs."""
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    k.ran = []

    def word_count(text: str) -> int:
        """Count the words of a text."""
        k.ran.append("word_count")
        return len(text.split())

    def steal(path: str) -> str:
        """Read a secret file."""
        k.ran.append("steal")
        return "the secret"

    k.add_tool(word_count)
    k.add_tool(steal)
    yield k
    k.close()


def call(name, **arguments):
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def turn(core, llm, offer, messages, ctx=None):
    return asyncio.run(core.turn(llm, offer, messages, ctx))


def test_native_offer_sends_specs_and_scopes_only_real_tools(kernel):
    """Native mode: the request carries every spec (pseudo-tools too); only registered tools are in names."""
    core = ToolLoop(kernel)
    llm = kernel.llm("scripted:n", replies=["hi"])
    offer = core.offer(llm, kernel.tools(["word_count"]), [PSEUDO])
    assert offer.native and offer.prompt_tools is None
    assert [s.name for s in offer.request_tools] == ["word_count", "ask_clarification"]
    assert offer.names == frozenset({"word_count"})
    turn(core, llm, offer, [Message.user("count")])
    assert [t.name for t in llm.requests[0].tools] == ["word_count", "ask_clarification"]


def test_prompt_offer_puts_the_tools_section_in_the_system_message(kernel):
    """Prompt mode: no native tools; the request's system message gets the tools section, the caller's list
    is left as it was."""
    core = ToolLoop(kernel)
    llm = kernel.llm("scripted:p", replies=["hi"], profile={"native_tools": False})
    offer = core.offer(llm, kernel.tools(["word_count"]))
    messages = [Message.system("Be brief."), Message.user("count")]
    turn(core, llm, offer, messages)
    sent = llm.requests[0]
    assert sent.tools == [] and sent.messages[0].content.startswith("Be brief.\n\n")
    assert "word_count" in sent.messages[0].content and "<tool_call>" in sent.messages[0].content
    assert messages[0].content == "Be brief."


def test_prompt_tools_section_is_rendered_once_per_tool_set(kernel):
    """The same tool set reuses the rendered section; a different set renders a new one."""
    core = ToolLoop(kernel)
    llm = kernel.llm("scripted:c", profile={"native_tools": False})
    first = core.offer(llm, kernel.tools(["word_count"])).prompt_tools
    assert core.offer(llm, kernel.tools(["word_count"])).prompt_tools is first
    assert core.offer(llm, kernel.tools(["word_count"]), [PSEUDO]).prompt_tools is not first


def test_no_tools_means_no_section_and_no_native_tools(kernel):
    """Nothing offered: the request is the conversation as it is, in either mode."""
    core = ToolLoop(kernel)
    llm = kernel.llm("scripted:e", replies=["hi"], profile={"native_tools": False})
    offer = core.offer(llm, [])
    got = turn(core, llm, offer, [Message.user("hi")])
    assert llm.requests[0].messages == [Message.user("hi")] and llm.requests[0].tools == []
    assert offer.names == frozenset() and got.text == "hi" and not got.wants_tools


def test_native_turn_reads_calls_with_unique_ids(kernel):
    """Repeated or empty call ids are replaced, in the kept reply too, so each result finds its own call."""
    core = ToolLoop(kernel)
    twice = {"tool_calls": [{"id": "x", "name": "word_count", "arguments": {"text": "a"}},
                            {"id": "x", "name": "word_count", "arguments": {"text": "b"}}]}
    llm = kernel.llm("scripted:ids", replies=[twice])
    got = turn(core, llm, core.offer(llm, kernel.tools(["word_count"])), [Message.user("count")])
    ids = [c.id for c in got.calls]
    assert len(set(ids)) == 2 and all(ids) and [c.id for c in got.reply.tool_calls] == ids
    assert got.wants_tools and got.completion is not None


def test_prompt_turn_reads_text_calls_and_tells_malformed_ones(kernel):
    """Prompt mode: a well-formed text call is a call; a malformed one is an error fed back with the results."""
    core = ToolLoop(kernel)
    reply = ('<tool_call>{"name": "word_count", "arguments": {"text": "a b"}}</tool_call>\n'
             '<tool_call>{"name": "word_count", "arguments": {oops</tool_call>')
    llm = kernel.llm("scripted:t", replies=[reply], profile={"native_tools": False})
    offer = core.offer(llm, kernel.tools(["word_count"]))
    got = turn(core, llm, offer, [Message.user("count")])
    assert [c.name for c in got.calls] == ["word_count"] and len(got.errors) == 1 and got.wants_tools
    result = ToolResult(call_id=got.calls[0].id, name="word_count", state="success", content="2")
    [message] = offer.results_messages([result], got.errors)
    assert message.role == "user" and f'id="{got.calls[0].id}"' in message.content
    assert message.content.endswith(offer.feedback(got.errors)) and offer.feedback(got.errors)


def test_native_text_call_is_read_as_a_call(kernel):
    """A local server's text call of an offered tool becomes a native call (text_tool_fallback)."""
    core = ToolLoop(kernel)
    llm = kernel.llm("scripted:f", replies=['{"name": "word_count", "arguments": {"text": "a b"}}'])
    got = turn(core, llm, core.offer(llm, kernel.tools(["word_count"])), [Message.user("count")])
    assert [c.name for c in got.calls] == ["word_count"] and got.reply.tool_calls == got.calls


def test_native_text_call_of_a_tool_not_offered_stays_text(kernel):
    """The fallback never turns a text mention of an unoffered tool into a call."""
    core = ToolLoop(kernel)
    text = '{"name": "steal", "arguments": {"path": "/etc/shadow"}}'
    llm = kernel.llm("scripted:s", replies=[text])
    got = turn(core, llm, core.offer(llm, kernel.tools(["word_count"])), [Message.user("count")])
    assert got.calls == [] and got.text == text and not got.wants_tools


def test_native_text_fallback_off_by_profile(kernel):
    """``text_tool_fallback=False`` keeps a text call as text."""
    core = ToolLoop(kernel)
    llm = kernel.llm("scripted:o", replies=['{"name": "word_count", "arguments": {"text": "a"}}'],
                     profile={"text_tool_fallback": False})
    got = turn(core, llm, core.offer(llm, kernel.tools(["word_count"])), [Message.user("count")])
    assert got.calls == []


def test_native_text_call_repeating_an_earlier_call_stays_text(kernel):
    """A restated call already made in the conversation is an echo, not a request: it is not run again."""
    core = ToolLoop(kernel)
    made = ToolCall(id="c1", name="word_count", arguments={"text": "a"})
    history = [Message.user("count"), Message(role="assistant", content="", tool_calls=[made]),
               Message.tool("1", "c1", "word_count")]
    llm = kernel.llm("scripted:r", replies=['{"name": "word_count", "arguments": {"text": "a"}}'])
    got = turn(core, llm, core.offer(llm, kernel.tools(["word_count"])), history)
    assert got.calls == [] and "word_count" in got.text


def test_results_messages_native_is_one_tool_message_per_result():
    """Native mode: each result becomes a tool message answering its call id, in order."""
    results = [ToolResult(call_id="a", name="t", state="success", content="1"),
               ToolResult(call_id="b", name="t", state="success", content="2")]
    messages = results_messages(results, native=True, feedback="ignored in native mode")
    assert [(m.role, m.tool_call_id, m.content) for m in messages] == [("tool", "a", "1"), ("tool", "b", "2")]


def test_scoped_sets_and_restores_the_offered_tools(kernel):
    """Inside ``scoped`` the context offers the offer's names; the previous scope is back after, even on error."""
    core = ToolLoop(kernel)
    ctx = kernel.context()
    ctx.offered_tools = frozenset({"outer"})
    offer = core.offer(kernel.llm("scripted:x"), kernel.tools(["word_count"]))
    with pytest.raises(RuntimeError), scoped(ctx, offer):
        assert ctx.offered_tools == frozenset({"word_count"})
        raise RuntimeError("boom")
    assert ctx.offered_tools == frozenset({"outer"})


def test_core_refuses_a_tool_it_was_not_offered(kernel):
    """Attack: the model calls `steal` (registered, not offered). Through the core it is blocked, never run."""
    core = ToolLoop(kernel)
    llm = kernel.llm("scripted:a", replies=[call("steal", path="/etc/shadow")])
    ctx = kernel.context()
    offer = core.offer(llm, kernel.tools(["word_count"]))
    got = turn(core, llm, offer, [Message.user("count")], ctx)
    with scoped(ctx, offer):
        [result] = asyncio.run(core.run_tools(got.calls, ctx))
    assert result.state == "blocked" and "not offered" in result.content and kernel.ran == []


def test_core_never_runs_a_pseudo_tool_name(kernel):
    """Attack: a pseudo-tool the loop answers itself is shown to the model but not in scope, so a registered
    tool of the same name cannot be reached through it."""
    core = ToolLoop(kernel)
    llm = kernel.llm("scripted:ps")
    offer = core.offer(llm, kernel.tools(["word_count"]), [ToolSpec(name="steal", description="pseudo")])
    ctx = kernel.context()
    with scoped(ctx, offer):
        [result] = asyncio.run(core.run_tools([ToolCall(id="c", name="steal", arguments={"path": "x"})], ctx))
    assert result.state == "blocked" and kernel.ran == []


@pytest.fixture
def reads(monkeypatch):
    """Every ``ToolLoop.read`` call (to show a loop went through the core)."""
    seen = []
    original = ToolLoop.read

    def spy(self, llm, offer, reply, history=(), **options):
        seen.append(offer)
        return original(self, llm, offer, reply, history, **options)

    monkeypatch.setattr(ToolLoop, "read", spy)
    return seen


@pytest.mark.parametrize("native", [True, False])
def test_declared_agent_refuses_an_unoffered_tool_through_the_core(kernel, reads, native):
    """CustomizeAction (native and prompt mode): the core's offer scopes the run; `steal` is blocked."""
    agent = kernel.agent({"name": "Counter", "prompt": "Count: {text}", "inputs": [{"name": "text"}],
                          "outputs": [{"name": "answer"}], "parse_mode": "str", "tools": ["word_count"]})
    agent.llm = kernel.llm("scripted:d", replies=[call("steal", path="/etc/shadow"), "done"],
                           profile={"native_tools": native})
    result = agent(text="a b")
    assert [r.state for r in result.tool_results] == ["blocked"] and kernel.ran == []
    assert reads and all(o.names == frozenset({"word_count"}) for o in reads)


@pytest.mark.parametrize("native", [True, False])
def test_react_loop_refuses_an_unoffered_tool_through_the_core(kernel, reads, native):
    """ReAct (native and prompt mode): the core's offer scopes the step; `steal` is blocked and recorded."""
    from zagent.plugins.react import ReActLoop

    llm = kernel.llm("scripted:r", replies=[call("steal", path="/etc/shadow"), "done"],
                     profile={"native_tools": native})
    result = ReActLoop(kernel=kernel, llm=llm, tools=["word_count"]).run("count")
    [step] = [s for s in result.steps if s.tool]
    assert step.is_blocked and kernel.ran == [] and result.content == "done"
    assert reads and all(o.names == frozenset({"word_count"}) for o in reads)


def test_both_loops_send_the_one_nudge(kernel):
    """A reply with neither a call nor text gets the core's NUDGE, in the declared agent and in ReAct alike."""
    from zagent.plugins.react import ReActLoop

    agent = kernel.agent({"name": "Q", "prompt": "Q: {q}", "inputs": [{"name": "q"}],
                          "outputs": [{"name": "answer"}], "parse_mode": "str", "tools": ["word_count"]})
    agent.llm = kernel.llm("scripted:dn", replies=["", "fine"])
    agent(q="x")
    react_llm = kernel.llm("scripted:rn", replies=["", "fine"])
    ReActLoop(kernel=kernel, llm=react_llm, tools=["word_count"]).run("x")
    for llm in (agent.llm, react_llm):
        assert llm.requests[1].messages[-1] == Message.user(NUDGE)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["", "a", "b", "call_0_x"]), st.sampled_from(["word_count", "steal"])),
                min_size=1, max_size=6))
def test_read_gives_every_native_call_its_own_id(ids_and_names):
    """Whatever ids a server sends, the read calls keep their names and order and have unique non-empty ids."""
    k = Kernel(plugins=PLUGINS, entry_points=False)
    try:
        k.add_tool(lambda text: text, name="word_count")
        core = ToolLoop(k)
        llm = k.llm("scripted:h")
        calls = [ToolCall(id=i, name=n, arguments={}) for i, n in ids_and_names]
        got = core.read(llm, core.offer(llm, k.tools(["word_count"])), Message(role="assistant", content="",
                                                                                 tool_calls=calls))
        assert [c.name for c in got.calls] == [n for _, n in ids_and_names]
        assert all(c.id for c in got.calls) and len({c.id for c in got.calls}) == len(calls)
    finally:
        k.close()
