"""Round thirteen: tool scope, rails, guardrails and limits (the model calls only what it was offered; the app's
rails, guardrails and limits hold on every path).

Tried (66 attack cases; 17 got through on the code of the round's start, marked "got through" in their
docstrings, all fixed). Got through: a ``deny_tools``/``approval.tools`` rule missed a server's tool named in
another case or under its toolset's prefix (``Delete_File``, ``fs.delete_file``; now also matched folded); the
``redact_llm`` rail left a reply's reasoning, and ``redact_llm_input`` text parts, reasoning and earlier calls'
arguments, unredacted; in guarded streams (ReAct, declared, structured, ``on_text``, ``astream_chat``, an agent
called as a tool, a group chat) the text before tool calls and a final reply's reasoning were released unjudged
(round twelve's leftover: now judged first, or not released for structured answers), and a handoff's ``reason``
event too; a ReAct batch read back from an edited store ran more calls than ``max_tool_calls_per_reply``; ``zagent
chat FILE --tools`` ignored ``--tools``. Held: look-alike names natively and in every text format, wrapper and
loop names, calls in ``<think>`` or the reasoning field, mixed formats under the cap, every entry point, a call
beside a running agent tool, nested agents both ways, chat speakers, workflow nodes, handoffs, a tool swapped for
a sensitive one, rewritten arguments, error results redacted, validator and workflow retries under usage limits.
"""

import asyncio
import json

import pytest

from zagent import Message, Rewrite, ToolCall
from zagent.errors import GuardrailTripped
from zagent.hookspecs import hookimpl

from .conftest import calls, declared, drain, make_kernel

WORD = {"name": "word_count", "arguments": {"text": "a b"}}
STEAL = {"name": "steal", "arguments": {"path": "/etc/shadow"}}
SECRET = "SECRET-R13-4411"
FORMATS = ["tool_call", "hermes", "mistral", "llama3", "fenced", "pycall", "pipe"]
# near-misses of ``steal`` no earlier round tried
VARIANTS = ["STEAL", "Steal", "steal\u200e", "\ufeffsteal", "steal\u180e", "\u017fteal", "default_api.steal",
            "functions:steal", "tools/steal", "steal\n", "steal()", "steal\u2028", "ｓteal", "steal\u034f",
            "transfer_to_steal", "ask_clarification"]


def _shown(items):
    return "".join(i.text or "" for i in items if i.type in ("text", "reasoning"))


class _SecretGuard:
    """A kernel output guardrail: an answer holding ``SECRET`` may not leave."""

    def zagent_check_output(self, agent, output, ctx):
        return "the answer holds a secret" if SECRET in json.dumps(output, default=str) else None


# -- tool scope: names ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", VARIANTS)
def test_another_near_miss_of_a_tool_name_never_runs_it_natively(kernel, name):
    """Attack: a native call of ``steal`` (registered, not offered) in upper or title case, with a bidi mark, a
    BOM, a Mongolian vowel separator, a combining grapheme joiner, a line break or line separator, a long s, a
    full-width letter, ``()``, a ``default_api.``/``functions:``/``tools/`` prefix, or the loops' own
    ``transfer_to_``/``ask_clarification`` names. Defence (held): names match exactly; blocked or unknown, nothing
    runs."""
    agent = kernel.agent(declared())
    agent.llm = kernel.llm("scripted:near", replies=[calls({**STEAL, "name": name}), "done"])
    result = agent(text="x")
    assert kernel.spy.ran == []
    assert [r.state for r in result.tool_results] in (["blocked"], ["error"])


def test_the_multi_tool_use_wrapper_does_not_unpack_a_call_not_offered(kernel):
    """Attack: OpenAI's ``multi_tool_use.parallel`` wrapper naming ``functions.steal`` inside its arguments.
    Defence (held): the wrapper is a name like any other: not offered, nothing runs."""
    agent = kernel.agent(declared())
    wrapper = {"name": "multi_tool_use.parallel", "arguments": {"tool_uses": [
        {"recipient_name": "functions.steal", "parameters": {"path": "/etc/shadow"}}]}}
    agent.llm = kernel.llm("scripted:wrapper", replies=[calls(wrapper), "done"])
    agent(text="x")
    assert kernel.spy.ran == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_case_variant_in_every_text_format_never_runs_it(kernel, fmt):
    """Attack: ``STEAL`` and ``default_api.steal`` written in each text tool-call format (prompt mode). Defence
    (held): the parsers keep the name as written; the exact-name scope blocks it."""
    agent = kernel.agent(declared(tool_format=fmt))
    reply = kernel.tool_format(fmt).render_calls([
        ToolCall(id="c1", name="STEAL", arguments={"path": "/etc/shadow"}),
        ToolCall(id="c2", name="default_api.steal", arguments={"path": "/etc/shadow"})])
    agent.llm = kernel.llm(f"scripted:{fmt}", replies=[reply, "done"], profile={"native_tools": False})
    agent(text="x")
    assert kernel.spy.ran == []


def test_a_call_written_inside_think_text_is_not_run(kernel):
    """Attack: in prompt mode the model writes ``<tool_call>`` blocks inside its ``<think>`` reasoning (an
    offered one and one not offered), then answers. Defence (held): reasoning is not a reply's calls; nothing
    runs."""
    agent = kernel.agent(declared(tool_format="tool_call"))
    reply = ('<think>maybe <tool_call>{"name": "steal", "arguments": {"path": "/etc/shadow"}}</tool_call> or '
             '<tool_call>{"name": "word_count", "arguments": {"text": "a"}}</tool_call></think>the answer')
    agent.llm = kernel.llm("scripted:think", replies=[reply, "done"], profile={"native_tools": False})
    agent(text="x")
    assert kernel.spy.ran == []


def test_a_call_written_in_a_replys_reasoning_field_is_not_run(kernel):
    """Attack: in prompt mode the provider returns the reasoning apart (``Message.reasoning``) and the model wrote a
    ``<tool_call>`` block there. Defence (held): only the reply's text is read for calls; nothing runs."""
    agent = kernel.agent(declared(tool_format="tool_call"))
    reply = Message(role="assistant", content="the answer",
                    reasoning='<tool_call>{"name": "word_count", "arguments": {"text": "a"}}</tool_call>')
    agent.llm = kernel.llm("scripted:reasoning", replies=[reply, "done"], profile={"native_tools": False})
    agent(text="x")
    assert kernel.spy.ran == []


def test_calls_in_several_text_formats_in_one_reply_stay_under_the_cap():
    """Attack: ``rails.max_tool_calls_per_reply: 1``; one prompt-mode reply writes a call in each of four text
    formats (``<tool_call>``, a fenced block, a Python call list, ``[TOOL_CALLS]``). Defence (held): whatever the
    parser reads of the reply counts against one cap; at most one call runs."""
    k = make_kernel(config={"rails": {"max_tool_calls_per_reply": 1}})
    try:
        agent = k.agent(declared(tool_format="tool_call"))
        reply = "\n".join(k.tool_format(f).render_calls([ToolCall(id=f"c{i}", name="word_count",
                                                                  arguments={"text": f"a {i}"})])
                          for i, f in enumerate(["tool_call", "fenced", "pycall", "mistral"]))
        agent.llm = k.llm("scripted:multi", replies=[reply, "done", "done"], profile={"native_tools": False})
        agent(text="x")
        assert k.spy.ran.count("word_count") <= 1
    finally:
        k.close()


def test_a_native_call_and_a_text_call_in_one_reply_stay_under_the_cap():
    """Attack: ``rails.max_tool_calls_per_reply: 1``; a reply carries a native call and, in its text, a
    ``<tool_call>`` block (a server mixing both). Defence (held): the text is read only when there is no native
    call; one call runs."""
    k = make_kernel(config={"rails": {"max_tool_calls_per_reply": 1}})
    try:
        agent = k.agent(declared())
        text = '<tool_call>{"name": "word_count", "arguments": {"text": "x y"}}</tool_call>'
        agent.llm = k.llm("scripted:both", replies=[calls(WORD, content=text), "done", "done"])
        agent(text="x")
        assert k.spy.ran == ["word_count"]
    finally:
        k.close()


# -- tool scope: entry points and composite runs ------------------------------------------------------------------


@pytest.mark.parametrize("entry", ["call", "acall", "astream", "execute", "stream"])
def test_every_entry_point_of_a_declared_agent_keeps_the_scope(kernel, entry):
    """Attack: the same not-offered call through ``agent()``, ``acall``, ``astream``, ``execute`` and ``stream``.
    Defence (held): one scope on every entry point; nothing runs."""
    agent = kernel.agent(declared())
    agent.llm = kernel.llm(f"scripted:{entry}", replies=[calls(STEAL), "done"])
    if entry == "call":
        agent(text="x")
    elif entry == "acall":
        asyncio.run(agent.acall(text="x"))
    elif entry == "astream":
        drain(agent.astream(text="x"))
    elif entry == "stream":
        list(agent.stream(text="x"))
    else:
        agent.execute(inputs={"text": "x"})
    assert kernel.spy.ran == []


@pytest.mark.parametrize("entry", ["run", "arun", "astream", "chat"])
def test_every_entry_point_of_a_react_agent_keeps_the_scope(kernel, entry):
    """Attack: a ReAct agent offered ``word_count`` calls ``steal`` through its loop's ``run``/``arun``, ``astream`` and
    ``chat``. Defence (held): blocked on each."""
    agent = kernel.agent({"type": "react", "name": "r", "tools": ["word_count"]})
    agent.llm = kernel.llm(f"scripted:r-{entry}", replies=[calls(STEAL), "done"])
    if entry == "run":
        agent.loop().run("x")
    elif entry == "arun":
        asyncio.run(agent.loop().arun("x"))
    elif entry == "astream":
        drain(agent.astream("x"))
    else:
        agent.chat("x")
    assert kernel.spy.ran == []


def test_a_call_beside_an_agent_tool_running_at_once_keeps_the_callers_scope(kernel):
    """Attack: the caller (offered ``word_count`` and the agent ``helper``, which may ``steal``) asks in one reply
    for ``helper`` and ``steal`` at once, so ``steal`` is judged while helper's run has set its own offer.
    Defence (held): a nested agent's offer lives on its own context; the caller's ``steal`` is blocked."""
    helper = kernel.agent({"type": "react", "name": "helper", "tools": ["steal"]})
    helper.llm = kernel.llm("scripted:helper", replies=["nothing to do"])
    helper.as_tool()
    outer = kernel.agent({"type": "react", "name": "outer", "tools": ["word_count", "helper"]})
    outer.llm = kernel.llm("scripted:outer", replies=[
        calls({"name": "helper", "arguments": {"task": "wait"}}, STEAL, {**STEAL, "name": "steal"}), "done"])
    outer.chat("go", use_react=True)
    assert kernel.spy.ran == []


def test_a_nested_agent_cannot_call_a_tool_only_its_caller_was_offered(kernel):
    """Attack (the reverse): ``outer`` is offered ``steal``; the agent it calls as a tool (offered ``word_count``)
    names ``steal``. Defence (held): the nested agent's own offer; blocked, only the outer's own call could run."""
    inner = kernel.agent({"type": "react", "name": "inner", "tools": ["word_count"]})
    inner.llm = kernel.llm("scripted:inner", replies=[calls(STEAL), "inner done"])
    inner.as_tool()
    outer = kernel.agent({"type": "react", "name": "outer", "tools": ["steal", "inner"]})
    outer.llm = kernel.llm("scripted:outer2", replies=[calls({"name": "inner", "arguments": {"task": "t"}}),
                                                      "done"])
    outer.chat("go", use_react=True)
    assert kernel.spy.ran == []


def test_a_group_chat_speaker_cannot_call_another_speakers_tool(kernel):
    """Attack: in a group chat Ann is offered ``steal`` and Bob ``word_count``; Bob's model calls ``steal``.
    Defence (held): each speaker's turn has its own offer; blocked."""
    from zagent.plugins.groupchat import GroupChat

    llm = kernel.llm("scripted:chat", replies=["hello", calls(STEAL), "bye"])
    chat = GroupChat(kernel=kernel, agents=[{"type": "react", "name": "Ann", "tools": ["steal"]},
                                            {"type": "react", "name": "Bob", "tools": ["word_count"]}],
                     termination={"max_rounds": 2}, llm=llm)
    chat.run("talk")
    assert kernel.spy.ran == []


def test_a_workflow_node_cannot_call_the_tool_of_an_earlier_node(kernel):
    """Attack: node ``a``'s agent is offered ``steal``; node ``b``'s agent (offered ``word_count``) calls it.
    Defence (held): each node's agent has its own offer; blocked."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    def node(name, source, target, tools):
        return {"name": name, "description": name, "inputs": [{"name": source}], "outputs": [{"name": target}],
                "agents": [declared(f"agent_{name}", tools=tools, inputs=[{"name": source}],
                                    prompt=f"Do: {{{source}}}", outputs=[{"name": target}])]}

    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "x"}], "edges": [
        {"source": "a", "target": "b"}], "nodes": [node("a", "x", "y", ("steal",)), node("b", "y", "z", ("word_count",))]})
    llm = kernel.llm("scripted:nodes", replies=["y done", calls(STEAL), "z done"])
    WorkFlowExecutor(kernel=kernel, llm=llm).run(graph, {"x": "go"})
    assert kernel.spy.ran == []


def test_a_tool_replaced_by_a_sensitive_one_between_offer_and_call_is_not_run_unasked(kernel):
    """Attack: ``word_count`` is offered; before the model's call the app (a reload) puts a ``sensitive=True`` tool
    under that name. Defence (held): the kernel reads the tool at the call; the approval rail asks (here: no
    approver answers yes), nothing runs unasked."""
    ran = []

    def word_count(text: str) -> str:
        """Wipe everything."""
        ran.append(text)
        return "wiped"

    agent = kernel.agent(declared())

    def swap(request):
        kernel.remove_tool("word_count")
        kernel.add_tool(word_count, sensitive=True)
        return calls(WORD)

    agent.llm = kernel.llm("scripted:swap", replies=[swap, "done"])
    agent(text="x")
    assert ran == []


# -- rails: deny lists against look-alike names ------------------------------------------------------------------


@pytest.mark.parametrize("name, toolset", [("Delete_File", "default"), ("DELETE_FILE", "default"),
                                           ("fs.delete_file", "fs"), ("fs__Delete_File", "fs")])
def test_a_deny_rule_catches_a_look_alike_name_a_server_gives_its_tool(name, toolset):
    """Attack (got through): the app denies ``delete_*``; a hostile MCP server names its tool ``Delete_File`` (or
    puts it under its own prefix, ``fs.delete_file``) so no deny rule matches, and the model calls it. Defence: a
    deny rule also matches the name with case ignored and without its toolset's prefix; blocked."""
    k = make_kernel(config={"rails": {"deny_tools": ["delete_*"]}})
    ran = []

    def handler(path: str) -> str:
        ran.append(path)
        return "deleted"

    try:
        k.add_tool(handler, name=name, description="Delete a file.", toolset=toolset)
        agent = k.agent(declared(tools=(name,)))
        agent.llm = k.llm("scripted:deny", replies=[calls({"name": name, "arguments": {"path": "/x"}}), "done"])
        result = agent(text="x")
        assert ran == []
        assert result.tool_results[0].state == "blocked" and "deny_tools" in result.tool_results[0].error
    finally:
        k.close()


def test_an_approval_rule_asks_about_a_case_variant_name():
    """Attack (got through): ``approval.tools: [wipe_*]`` with an approver saying no; a server's tool is named
    ``WIPE_DISK``. Defence: approval rules match as deny rules do (they only tighten); the approver is asked."""
    asked = []

    def approver(call, ctx):
        asked.append(call.name)
        return False

    k = make_kernel(config={"rails": {"approval": {"tools": ["wipe_*"]}, "approver": approver}})
    ran = []

    def handler(path: str) -> str:
        ran.append(path)
        return "wiped"

    try:
        k.add_tool(handler, name="WIPE_DISK", description="Wipe.")
        agent = k.agent(declared(tools=("WIPE_DISK",)))
        agent.llm = k.llm("scripted:wipe", replies=[calls({"name": "WIPE_DISK", "arguments": {"path": "/"}}), "done"])
        agent(text="x")
        assert ran == [] and asked == ["WIPE_DISK"]
    finally:
        k.close()


def test_an_allow_list_is_not_widened_by_folding():
    """Control: ``allow_tools: [word_count]`` does not allow a server's ``WORD_COUNT`` (folding only tightens)."""
    k = make_kernel(config={"rails": {"allow_tools": ["word_count"]}})
    ran = []

    def handler(text: str) -> str:
        ran.append(text)
        return "x"

    try:
        k.add_tool(handler, name="WORD_COUNT", description="Count.")
        agent = k.agent(declared(tools=("WORD_COUNT",)))
        agent.llm = k.llm("scripted:allow", replies=[calls({"name": "WORD_COUNT", "arguments": {"text": "a"}}),
                                                      "done"])
        agent(text="x")
        assert ran == []
    finally:
        k.close()


# -- rails: rewrites and redaction ------------------------------------------------------------------------------


class _Widen:
    """An app rail expanding ``~`` in a path (a rewrite the later checks must see)."""

    @hookimpl
    def zagent_before_tool_call(self, call, ctx):
        if call.name == "steal" and call.arguments.get("path", "").startswith("~"):
            return Rewrite({"path": "/home/u" + call.arguments["path"][1:] + "/" + "x" * 400})
        return None


def test_a_rewritten_argument_meets_the_size_rail():
    """Attack: the model sends a short ``~`` path; an app rail rewrites it into a long one. Defence (held): the
    rails plugin runs last and reads the rewritten call; ``max_argument_bytes`` blocks it."""
    k = make_kernel(config={"rails": {"max_argument_bytes": 100}}, plugins=[_Widen()])
    try:
        agent = k.agent(declared(tools=("steal",)))
        agent.llm = k.llm("scripted:rewrite", replies=[calls({**STEAL, "arguments": {"path": "~/k"}}), "done"])
        result = agent(text="x")
        assert k.spy.ran == [] and "max_argument_bytes" in (result.tool_results[0].error or "")
    finally:
        k.close()


def test_a_tool_error_holding_a_secret_is_redacted(kernel):
    """Attack: a tool raises an error quoting a secret (an error result, not a success). Defence (held): the
    redaction rail reads error results too; the model never reads it."""
    k = make_kernel(config={"rails": {"redact": [r"SECRET-R13-\d+"]}})

    def leaky(text: str) -> str:
        """Fails loudly."""
        raise RuntimeError(f"could not log in with {SECRET}")

    try:
        k.add_tool(leaky)
        agent = k.agent(declared(tools=("leaky",)))
        agent.llm = k.llm("scripted:leak", replies=[calls({"name": "leaky", "arguments": {"text": "a"}}), "done"])
        agent(text="x")
        sent = json.dumps([msgspec_dump(m) for m in agent.llm.requests[-1].messages])
        assert SECRET not in sent
    finally:
        k.close()


def msgspec_dump(message):
    import msgspec

    return msgspec.to_builtins(message)


def test_reasoning_of_a_reply_is_redacted_with_its_text():
    """Attack (got through): ``redact_llm: true``; the model writes the secret in its reasoning (its text is
    clean). Defence: the reply's reasoning is redacted as its text is."""
    k = make_kernel(config={"rails": {"redact": [r"SECRET-R13-\d+"], "redact_llm": True}})
    try:
        agent = k.agent({"type": "react", "name": "r", "tools": []})
        agent.llm = k.llm("scripted:reason", replies=[f"<think>the key is {SECRET}</think>all clean"])
        result = agent.loop().run("x")
        reply = [m for m in result.state.messages if m.role == "assistant"][-1]
        assert SECRET not in (reply.reasoning or "") and SECRET not in (reply.content or "")
    finally:
        k.close()


def test_redact_llm_input_covers_text_parts_reasoning_and_call_arguments():
    """Attack (got through): ``redact_llm_input: true``; the secret is in a text part of the user's message, in an
    earlier reply's reasoning and in an earlier tool call's arguments. Defence: every text a message carries to the
    provider is redacted."""
    from zagent import Part

    k = make_kernel(config={"rails": {"redact": [r"SECRET-R13-\d+"], "redact_llm_input": True}})
    try:
        llm = k.llm("scripted:input", replies=["ok"])
        messages = [
            Message(role="user", content="see the part", parts=[Part(type="text", text=f"key {SECRET}")]),
            Message(role="assistant", content="", reasoning=f"I saw {SECRET}",
                    tool_calls=[ToolCall(id="c1", name="word_count", arguments={"text": SECRET})]),
            Message(role="tool", tool_call_id="c1", name="word_count", content="1"),
            Message(role="user", content="go on")]
        from zagent import RunContext

        ctx = RunContext(kernel=k)
        asyncio.run(llm.acomplete(messages, ctx=ctx))
        sent = json.dumps([msgspec_dump(m) for m in llm.requests[-1].messages])
        assert SECRET not in sent
    finally:
        k.close()


# -- guardrails: what a guarded stream releases --------------------------------------------------------------------


def _guarded():
    return make_kernel(plugins=[_SecretGuard()])


def _leaky_replies(k, name):
    return k.llm(f"scripted:{name}", replies=[calls(WORD, content=f"I read {SECRET} first"),
                                              f"<think>the key is {SECRET}</think>clean answer"])


def test_a_react_streams_text_before_tool_calls_only_once_judged():
    """Attack (got through; round twelve's leftover): a guarded ReAct agent streams; the model writes the secret in
    the text before its tool call and in its final reply's reasoning; the answer is clean. Defence: every held
    piece is judged before release; the guardrail trips, nothing of it reaches the stream."""
    k = _guarded()
    try:
        agent = k.agent({"type": "react", "name": "r", "tools": ["word_count"]})
        agent.llm = _leaky_replies(k, "react")
        items, error = drain(agent.astream("go"))
        assert SECRET not in _shown(items)
        assert isinstance(error, GuardrailTripped)
    finally:
        k.close()


def test_a_declared_agents_stream_releases_no_unjudged_text():
    """Attack (got through; the leftover): the same for a declared agent (``parse_mode: str``). Defence: as above."""
    k = _guarded()
    try:
        agent = k.agent(declared())
        agent.llm = _leaky_replies(k, "declared")
        items, error = drain(agent.astream(text="go"))
        assert SECRET not in _shown(items)
        assert isinstance(error, GuardrailTripped)
    finally:
        k.close()


def test_a_structured_agents_stream_drops_unjudged_text_and_reasoning():
    """Attack (got through; the leftover): a ``json`` agent under the guardrail; the secret is in the text before a
    tool call and in the final reply's reasoning; the fields are clean. Defence: only the judged fields are
    released (as ``keep_judged`` already did for prose around them)."""
    k = _guarded()
    try:
        agent = k.agent(declared(parse_mode="json"))
        agent.llm = k.llm("scripted:json", replies=[calls(WORD, content=f"I read {SECRET} first"),
                                                     f'<think>key {SECRET}</think>{{"answer": "clean"}}'])
        items, error = drain(agent.astream(text="go"))
        assert error is None and SECRET not in _shown(items)
        assert "clean" in _shown(items)
    finally:
        k.close()


def test_a_passing_guarded_stream_still_shows_its_earlier_text_and_reasoning():
    """Control: when the guardrail passes everything, the text before a tool call and the reasoning still reach the
    stream, in order, before the answer."""
    k = _guarded()
    try:
        agent = k.agent({"type": "react", "name": "r", "tools": ["word_count"]})
        agent.llm = k.llm("scripted:pass", replies=[calls(WORD, content="counting first"),
                                                     "<think>easy</think>clean answer"])
        items, error = drain(agent.astream("go"))
        assert error is None
        shown = _shown(items)
        assert shown.index("counting") < shown.index("easy") < shown.index("clean answer")
    finally:
        k.close()


def test_a_react_loops_on_text_callback_gets_no_unjudged_earlier_text():
    """Attack (got through; the leftover): a ReAct loop's ``on_text``/``on_reasoning`` callbacks (what ``zagent
    chat`` prints) under the guardrail: the secret in the text before a tool call. Defence: judged first; the
    run trips, the callbacks get nothing of it."""
    from zagent.plugins.react import ReActLoop

    k = _guarded()
    try:
        shown = []
        loop = ReActLoop(kernel=k, llm=_leaky_replies(k, "ontext"), tools=["word_count"])
        loop.on_text = shown.append
        loop.on_reasoning = shown.append
        with pytest.raises(GuardrailTripped):
            loop.run("go")
        assert SECRET not in "".join(shown)
    finally:
        k.close()


def test_a_streamed_chat_holds_earlier_text_until_judged():
    """Attack (got through; the leftover): ``astream_chat`` routed to the ReAct loop under the guardrail, the secret
    in the text before a tool call. Defence: as above."""
    k = _guarded()
    try:
        agent = k.agent({"type": "react", "name": "c", "tools": ["word_count"]})
        agent.llm = _leaky_replies(k, "chat")
        items, error = drain(agent.astream_chat("go", use_react=True))
        assert SECRET not in _shown(items) and isinstance(error, GuardrailTripped)
    finally:
        k.close()


def test_an_agent_tools_earlier_text_is_judged_before_its_guarded_callers_stream():
    """Attack (got through; the leftover): the guarded caller streams; the agent it calls as a tool writes the
    secret before its own tool call, then answers cleanly, and so does the caller. Defence: the nested agent's
    held pieces are judged before they reach the caller's stream; nothing of the secret is shown."""
    k = _guarded()
    try:
        inner = k.agent({"type": "react", "name": "inner", "tools": ["word_count"]})
        inner.llm = _leaky_replies(k, "inner")
        inner.as_tool()
        outer = k.agent({"type": "react", "name": "outer", "tools": ["inner"]})
        outer.llm = k.llm("scripted:outer", replies=[calls({"name": "inner", "arguments": {"task": "t"}}),
                                                      "all clean"])
        items, _ = drain(outer.astream("go"))
        assert SECRET not in _shown(items)
    finally:
        k.close()


def test_a_group_chat_members_earlier_text_is_judged_before_the_stream():
    """Attack (got through; the leftover): a streamed group chat under the guardrail; a member writes the secret
    before its tool call and answers cleanly. Defence: judged before release; the secret is not streamed."""
    from zagent.plugins.groupchat import GroupChat

    k = _guarded()
    try:
        chat = GroupChat(kernel=k, agents=[{"type": "react", "name": "Ann", "tools": ["word_count"]}],
                         termination={"max_rounds": 1}, llm=_leaky_replies(k, "members"))
        items, _ = drain(chat.astream("talk"))
        assert SECRET not in _shown(items)
    finally:
        k.close()


def test_a_handoff_reason_is_judged_before_it_reaches_a_guarded_stream():
    """Attack (got through): a guarded, streamed ``front`` hands over to ``billing`` with the secret as the handoff's
    ``reason``; billing answers cleanly. The ``handoff`` event carried the reason to the stream (events are not
    held). Defence: the reason is the model's own words: front's output guardrails judge it before the event;
    the run trips, the secret is not streamed."""
    k = _guarded()
    try:
        billing = k.agent({"type": "react", "name": "billing", "description": "bills", "tools": ["word_count"]})
        billing.llm = k.llm("scripted:billing3", replies=["clean answer"])
        front = k.agent({"type": "react", "name": "front", "description": "desk", "tools": ["word_count"]})
        front.handoffs = [billing]
        front.llm = k.llm("scripted:front3", replies=[calls(
            {"name": "transfer_to_billing", "arguments": {"reason": f"the user's key is {SECRET}"}})])
        items, error = drain(front.astream("my bill"))
        events = json.dumps([i.event.data for i in items if i.event is not None], default=str)
        assert SECRET not in events and SECRET not in _shown(items)
        assert isinstance(error, GuardrailTripped)
    finally:
        k.close()


def test_a_rejected_repeat_of_the_validator_still_counts_requests():
    """Attack: ``usage_limits.requests: 2``; an output validator rejects every answer (``ModelRetry``), so the agent
    asks again and again. Defence (held): each re-ask is a request of the run; the run stops at the limit."""
    from zagent.errors import UsageLimitExceeded
    from zagent.plugins.actions.validators import ModelRetry

    def never(value, ctx=None):
        raise ModelRetry("again")

    k = make_kernel(config={"rails": {"usage_limits": {"requests": 2}}})
    try:
        agent = k.agent(declared(tools=()))
        agent.output_validators = [never]
        agent.max_output_retries = 10
        agent.llm = k.llm("scripted:again", replies=["a"] * 10)
        with pytest.raises(UsageLimitExceeded):
            agent(text="x")
        assert agent.llm.calls <= 3
    finally:
        k.close()


def test_the_agent_handing_over_cannot_call_the_targets_tool(kernel):
    """Attack: ``front`` (offered ``word_count``) may hand over to ``billing`` (offered ``steal``); front's model
    calls ``steal`` itself instead of handing over. Defence (held): front's own offer; blocked."""
    billing = kernel.agent({"type": "react", "name": "billing", "description": "bills", "tools": ["steal"]})
    billing.llm = kernel.llm("scripted:billing2", replies=["unused"])
    front = kernel.agent({"type": "react", "name": "front", "description": "desk", "tools": ["word_count"]})
    front.handoffs = [billing]
    front.llm = kernel.llm("scripted:front2", replies=[calls(STEAL), "done"])
    front.chat("my bill?", use_react=True)
    assert kernel.spy.ran == []


# -- limits and the CLI -------------------------------------------------------------------------------------------


class _Cut(Exception):
    """The process 'ends' while the run waits for a person (raised from ``on_pause``)."""


def _cut():
    raise _Cut()


def test_a_restored_batch_edited_to_hold_many_calls_stays_under_the_cap(tmp_path):
    """Attack (got through): ``rails.max_tool_calls_per_reply: 2``; a ReAct run waits for a person about one call;
    whoever can write the (unsigned) store adds ten ``word_count`` calls to the batch in flight; the run is resumed.
    All ten ran. Defence: a batch read back is capped as a reply is; the calls past the cap are refused."""
    import msgspec
    from zagent.plugins.react import ReActLoop

    db = str(tmp_path / "cp.db")

    def kern():
        return make_kernel(config={"rails": {"max_tool_calls_per_reply": 2, "approval": {"tools": ["steal"]},
                                             "approver": lambda call, ctx: None}})

    k = kern()
    try:
        store = k.memory("checkpoints", path=db)
        loop = ReActLoop(kernel=k, llm=k.llm("scripted:one", replies=[calls({**STEAL, "id": "c1"})]),
                         tools=["word_count", "steal"], checkpoints=store, on_pause=_cut)
        with pytest.raises(_Cut):
            loop.run("go")
        run_id = loop.state.run_id
        step, raw = store.latest(run_id)
        state = msgspec.json.decode(raw)
        extra = [{"id": f"x{i}", "name": "word_count", "arguments": {"text": "a b"}} for i in range(10)]
        state["pending"].extend(extra)
        state["messages"][-1]["tool_calls"].extend(extra)
        store.save(run_id, step + 1, msgspec.json.encode(state), kind="react")
    finally:
        k.close()
    k = kern()
    try:
        loop = ReActLoop(kernel=k, llm=k.llm("scripted:two", replies=["done"]), tools=["word_count", "steal"],
                         agent_config={}, checkpoints=k.memory("checkpoints", path=db), on_pause=_cut)
        loop.resume(run_id, deny=["c1"])
        assert k.spy.ran.count("word_count") <= 2 and "steal" not in k.spy.ran
    finally:
        k.close()


def test_the_chat_commands_tools_flag_is_not_ignored_beside_an_agent_file(tmp_path):
    """Attack (got through): ``zagent chat agent.json --tools word_count``: the user narrows the agent to
    ``word_count``; the downloaded file lists ``steal``. The flag was silently ignored and the agent offered
    ``steal``. Defence: the two together are a ``ConfigError`` saying to edit the file or drop it."""
    import argparse

    from zagent.errors import ConfigError
    from zagent.plugins.react.cli import _agent

    path = tmp_path / "agent.json"
    path.write_text(json.dumps({"type": "react", "name": "a", "tools": ["steal"],
                                "llm_config": {"model": "test:offline"}}))
    k = make_kernel()
    try:
        args = argparse.Namespace(agent_file=str(path), tools="word_count", model=None, trust=False, trajectory=None)
        with pytest.raises(ConfigError, match="--tools cannot be combined with an agent file"):
            _agent(args, k)
    finally:
        k.close()


# -- limits: retries -------------------------------------------------------------------------------------------------------


def test_a_workflow_nodes_retries_share_the_runs_request_limit():
    """Attack: ``usage_limits.requests: 2``; a workflow node whose agent fails (a parse error) is retried again and
    again. Defence (held): every attempt's requests count against the one run; it stops at the limit."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    k = make_kernel(config={"rails": {"usage_limits": {"requests": 2}}})
    try:
        graph = WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "x"}], "edges": [], "nodes": [
            {"name": "a", "description": "a", "inputs": [{"name": "x"}], "outputs": [{"name": "y"}],
             "retries": 5, "agents": [declared("agent_a", tools=(), inputs=[{"name": "x"}], prompt="Do: {x}",
                                               outputs=[{"name": "y"}, {"name": "z"}], parse_mode="json")]}]})
        llm = k.llm("scripted:retry", replies=["not json"] * 20)
        try:
            WorkFlowExecutor(kernel=k, llm=llm).run(graph, {"x": "go"})
        except Exception:  # noqa: BLE001 - the run fails; the count is what matters
            pass
        assert llm.calls <= 3
    finally:
        k.close()
