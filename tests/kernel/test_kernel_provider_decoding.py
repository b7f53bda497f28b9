"""Who decodes a reply: the kernel takes a direct ``LLM`` subclass's reply as it is (only each tool call's own id
and a refused structured output are the kernel's), and a kit provider (``zagent.providerkit.ProviderLLM``) gets
think spans split and the tool names its wire refuses mapped both ways, whole and streamed."""

from __future__ import annotations

import asyncio

from zagent import Chunk, Completion, Kernel, LLM, Message, Model, ToolCall, ToolSpec
from zagent.providerkit import ProviderLLM

REPLY = "<think>no</think>yes"
DOTTED = [ToolSpec(name="time.now")]


def _reply(request, text=REPLY):
    """The reply both providers give: think span in the text, a call to the first offered tool as the wire names it."""
    calls = [ToolCall(id="c1", name=request.tools[0].name)] if request.tools else []
    return Completion(message=Message(role="assistant", content=text, tool_calls=calls))


class _Direct(LLM):
    """A third party's provider without the kit; it records the tool names it was sent."""

    tool_name_pattern = r"^[A-Za-z0-9_-]{1,64}$"  # not the kernel's: ignored without the kit
    sent: list[list[str]] = []

    async def _acomplete(self, request):
        self.sent.append([t.name for t in request.tools])
        return _reply(request)


class _Kit(ProviderLLM):
    """A kit provider whose wire refuses dotted names; it streams its text in awkward pieces."""

    tool_name_pattern = r"^[A-Za-z0-9_-]{1,64}$"
    sent: list[list[str]] = []

    async def _wire_complete(self, request):
        self.sent.append([t.name for t in request.tools])
        return _reply(request)

    async def _wire_stream(self, request):
        self.sent.append([t.name for t in request.tools])
        completion = _reply(request)
        for piece in ["<th", "ink>n", "o</thi", "nk>ye", "s"]:
            yield Chunk(type="text", text=piece)
        for call in completion.tool_calls:
            yield Chunk(type="tool_call", tool_call=call)
        yield Chunk(type="done", completion=completion)


def _chunks(model, **kwargs):
    async def run():
        return [c async for c in model.astream("q", **kwargs)]

    return asyncio.run(run())


def test_a_direct_llm_reply_reaches_the_caller_unchanged():
    """A provider subclassing LLM directly: its think span stays text, whole and streamed, and nothing is reasoning."""
    k = Kernel(entry_points=False)
    model = Model(_Direct(provider="d", model="m"), k)
    reply = model.complete("q")
    assert reply.text == REPLY and reply.reasoning == ""
    chunks = _chunks(model)
    assert "".join(c.text for c in chunks if c.type == "text") == REPLY
    assert not [c for c in chunks if c.type == "reasoning"] and chunks[-1].completion.text == REPLY
    k.close()


def test_a_direct_llm_gets_registered_tool_names():
    """Without the kit, tools reach the provider with their registered names and its calls are taken as named."""
    _Direct.sent = []
    reply = Model(_Direct(provider="d", model="m")).complete("q", tools=DOTTED)
    assert _Direct.sent == [["time.now"]] and reply.tool_calls[0].name == "time.now"


def test_the_kernel_still_gives_a_direct_llms_calls_their_own_ids():
    """Each call's own id stays the kernel's (an approval and a result bind one call), kit or not."""

    class Repeats(LLM):
        async def _acomplete(self, request):
            calls = [ToolCall(id="same", name="a"), ToolCall(id="same", name="b")]
            return Completion(message=Message(role="assistant", tool_calls=calls))

    calls = Repeats(provider="r", model="m").complete("q").tool_calls
    assert len({c.id for c in calls}) == 2 and all(c.id for c in calls)


def test_a_kit_provider_gets_think_spans_split():
    """ProviderLLM moves the think span to reasoning in a whole reply and as reasoning chunks in a stream."""
    k = Kernel(entry_points=False)
    model = Model(_Kit(provider="kit", model="m"), k)
    reply = model.complete("q")
    assert reply.text == "yes" and reply.reasoning == "no"
    chunks = _chunks(model)
    assert "".join(c.text for c in chunks if c.type == "text") == "yes"
    assert "".join(c.text for c in chunks if c.type == "reasoning") == "no"
    assert chunks[-1].completion.text == "yes" and chunks[-1].completion.reasoning == "no"
    k.close()


def test_a_kit_provider_maps_refused_tool_names_both_ways():
    """With tool_name_pattern, 'time.now' goes out as 'time_now' and the call comes back as 'time.now', whole and
    streamed (the tool_call chunk and the done reply)."""
    _Kit.sent = []
    model = Model(_Kit(provider="kit", model="m"))
    assert model.complete("q", tools=DOTTED).tool_calls[0].name == "time.now"
    chunks = _chunks(model, tools=DOTTED)
    assert _Kit.sent == [["time_now"], ["time_now"]]
    assert [c.tool_call.name for c in chunks if c.type == "tool_call"] == ["time.now"]
    assert chunks[-1].completion.tool_calls[0].name == "time.now"
