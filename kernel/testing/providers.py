"""Conformance suite for LLM provider plugins: subclass ``ProviderTests`` in a class named ``Test...`` and set
``plugins``, ``model``, ``options`` and ``secret`` (never shown in reprs or errors), optionally
``make_failing_llm``, ``make_llm`` or ``supports_tools = False``. The backend must answer ``prompt`` with text and
call the one tool offered on ``tool_prompt``. Only zagent and pytest are imported.
"""

from __future__ import annotations

import asyncio
from typing import Any, Iterator, Optional, Sequence

import pytest

from .. import LLM, Chunk, Completion, Kernel, Message, Model, ModelProfile, ProviderError, ToolCall, ToolSpec, Usage

ECHO_TOOL = ToolSpec(
    name="echo",
    description="Repeat the given text back.",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)


class ProviderTests:
    """Rules every provider follows. Set ``plugins`` and ``model`` (and ``options``), or override ``make_llm``."""

    plugins: Sequence[Any] = ()
    model: str = ""
    options: dict[str, Any] = {}
    secret: Optional[str] = None
    supports_tools: bool = True
    prompt: str = "Say hello."
    tool_prompt: str = "Call the echo tool with the text 'hi'."

    # -- fixtures to override -------------------------------------------------------

    def make_kernel(self) -> Kernel:
        return Kernel(plugins=list(self.plugins), entry_points=False)

    def make_llm(self, kernel: Kernel) -> Model:
        if not self.model:
            raise NotImplementedError("set model = 'provider:model' on the test class, or override make_llm(kernel)")
        llm: Model = kernel.llm(self.model, **self.options)
        return llm

    def make_failing_llm(self, kernel: Kernel) -> Optional[Model]:
        """A model whose calls fail (bad key, unreachable URL...); ``None`` skips the error tests."""
        return None

    @pytest.fixture
    def kernel(self) -> Iterator[Kernel]:
        k = self.make_kernel()
        yield k
        k.close()

    @pytest.fixture
    def llm(self, kernel: Kernel) -> Model:
        return self.make_llm(kernel)

    @pytest.fixture
    def failing_llm(self, kernel: Kernel) -> Model:
        llm = self.make_failing_llm(kernel)
        if llm is None:
            pytest.skip("make_failing_llm() not provided")
        return llm

    # -- resolution and profile -----------------------------------------------------------

    def test_resolves_through_the_kernel(self, kernel: Kernel, llm: Model) -> None:
        """k.llm('provider:model') returns a zagent.Model of the provider's zagent.LLM, naming provider and model."""
        assert isinstance(llm, Model) and isinstance(llm.llm, LLM), \
            f"k.llm({self.model!r}) should return a zagent.Model of a zagent.LLM, got {type(llm).__name__}"
        assert llm.provider and llm.model, f"the LLM should name its provider and model, got {llm.provider!r} and {llm.model!r}"
        assert llm.name == f"{llm.provider}:{llm.model}", f"llm.name should be 'provider:model', got {llm.name!r}"

    def test_model_holds_no_kernel(self, kernel: Kernel, llm: Model) -> None:
        """The provider's model and what it holds (its HTTP client...) keep no reference to the Kernel: what a
        provider needs (rate limiters, HTTP options) it gets when it is built."""
        from .graph import references_to

        found = references_to(llm.llm, Kernel)
        assert not found, f"the provider's model should hold no Kernel, found one at {', '.join(found)}"

    def test_profile_is_a_model_profile(self, llm: Model) -> None:
        """The profile is a ModelProfile (what agents consult to pick strategies)."""
        assert isinstance(llm.profile, ModelProfile), \
            f"llm.profile should be a zagent.ModelProfile (default_profile()), got {type(llm.profile).__name__}"

    def test_profile_override_applies(self, kernel: Kernel) -> None:
        """profile={...} passed to k.llm overrides the provider's own profile."""
        llm = kernel.llm(self.model, **{**self.options, "profile": {"max_context_tokens": 1234}}) if self.model else None
        if llm is None:
            pytest.skip("model not set")
        assert llm.profile.max_context_tokens == 1234, \
            f"profile={{'max_context_tokens': 1234}} should win over the provider's, got {llm.profile.max_context_tokens}"

    # -- completion -------------------------------------------------------------------------

    def test_complete_returns_assistant_text(self, llm: Model) -> None:
        """complete() returns a Completion whose message is the assistant's, with text."""
        c = llm.complete(self.prompt)
        assert isinstance(c, Completion), f"_acomplete should return a zagent.Completion, got {type(c).__name__}"
        assert c.message.role == "assistant", f"the reply's role should be 'assistant', got {c.message.role!r}"
        assert isinstance(c.text, str) and c.text, f"the reply to {self.prompt!r} should have text, got {c.text!r}"

    def test_complete_reports_usage_and_finish(self, llm: Model) -> None:
        """Usage counts one call with non-negative tokens; a finish reason is given."""
        c = llm.complete(self.prompt)
        assert isinstance(c.usage, Usage), f"completion.usage should be a zagent.Usage, got {type(c.usage).__name__}"
        assert c.usage.calls == 1, f"one call should count usage.calls == 1, got {c.usage.calls}"
        assert c.usage.input_tokens >= 0 and c.usage.output_tokens >= 0, \
            f"token counts should be non-negative, got {c.usage.input_tokens} in and {c.usage.output_tokens} out"
        assert c.finish_reason, "completion.finish_reason should say why the reply ended ('stop', 'tool_calls'...)"

    def test_async_twin_matches(self, llm: Model) -> None:
        """acomplete() works from a plain asyncio program."""
        c = asyncio.run(llm.acomplete(self.prompt))
        assert c.message.role == "assistant" and c.text, \
            f"acomplete() should give an assistant reply with text, got role {c.message.role!r} and text {c.text!r}"

    def test_usage_is_added_to_the_run(self, kernel: Kernel, llm: Model) -> None:
        """A call made with a run context adds its usage to ctx.usage."""
        ctx = kernel.context()
        c = asyncio.run(llm.acomplete(self.prompt, ctx=ctx))
        assert ctx.usage.calls == 1 and ctx.usage.total_tokens == c.usage.total_tokens, \
            f"the run should count this call's usage ({c.usage}), it counted {ctx.usage}"

    # -- streaming --------------------------------------------------------------------------

    def test_stream_ends_with_one_done_chunk(self, llm: Model) -> None:
        """A stream yields text/tool_call chunks and ends with exactly one done chunk holding the completion."""
        chunks = list(llm.stream(self.prompt))
        assert all(isinstance(c, Chunk) for c in chunks), "_astream should yield zagent.Chunk objects only"
        kinds = [c.type for c in chunks]
        assert kinds.count("done") == 1 and kinds[-1] == "done", f"a stream should end with one 'done' chunk, got {kinds}"
        assert isinstance(chunks[-1].completion, Completion), "the 'done' chunk should hold the whole Completion"

    def test_stream_text_adds_up(self, llm: Model) -> None:
        """The text deltas of a stream add up to the done chunk's text."""
        chunks = list(llm.stream(self.prompt))
        text = "".join(c.text for c in chunks if c.type == "text")
        done = chunks[-1].completion
        assert done is not None and text and text == done.text, \
            f"the text deltas should add up to the done chunk's text: deltas {text!r}, done {getattr(done, 'text', None)!r}"

    def test_stream_chunk_kinds_are_known(self, llm: Model) -> None:
        """Every chunk is text, reasoning, tool_call or done; reasoning never shows up in the done text."""
        chunks = list(llm.stream(self.prompt))
        kinds = {c.type for c in chunks}
        assert kinds <= {"text", "reasoning", "tool_call", "done"}, \
            f"chunk types should be text, reasoning, tool_call or done; got also {sorted(kinds - {'text', 'reasoning', 'tool_call', 'done'})}"
        thought = "".join(c.text for c in chunks if c.type == "reasoning")
        done = chunks[-1].completion
        assert done is not None and (not thought or thought not in done.text), \
            "reasoning chunks should never be part of the done chunk's answer text"

    def test_leaving_a_stream_early_is_clean(self, llm: Model) -> None:
        """Stopping after the first chunk closes the stream without an error, and the model stays usable."""

        async def first_then_more() -> Completion:
            agen = llm.astream(self.prompt)
            async for _chunk in agen:
                break
            await agen.aclose()
            return await llm.acomplete(self.prompt)

        assert asyncio.run(first_then_more()).text, "after a stream left early, the next call should still answer"

    # -- tools ------------------------------------------------------------------------------

    def _tool_call(self, llm: Model) -> tuple[Completion, ToolCall]:
        if not self.supports_tools or not llm.profile.native_tools:
            pytest.skip("the provider (or this model's profile) has no native tool calls")
        c = llm.complete(self.tool_prompt, tools=[ECHO_TOOL])
        assert c.tool_calls, f"expected a call of the offered tool, got text {c.text!r}"
        return c, c.tool_calls[0]

    def test_tool_call_names_an_offered_tool(self, llm: Model) -> None:
        """Offered a tool and asked to use it, the model calls it: an id, the tool's name, object arguments."""
        c, call = self._tool_call(llm)
        assert isinstance(call, ToolCall) and call.id, f"a tool call should be a zagent.ToolCall with an id, got {call!r}"
        assert call.name == "echo", f"the call should name the offered tool 'echo', got {call.name!r}"
        assert isinstance(call.arguments, dict), f"arguments should be a dict, got {type(call.arguments).__name__}"
        assert len({x.id for x in c.tool_calls}) == len(c.tool_calls), "each call needs an id of its own"

    def test_tool_result_round_trip(self, llm: Model) -> None:
        """A tool result sent back with its call's id is accepted and answered."""
        c, call = self._tool_call(llm)
        history = [Message.user(self.tool_prompt), c.message, Message.tool("hi", call.id, call.name)]
        answer = llm.complete(history, tools=[ECHO_TOOL])
        assert answer.message.role == "assistant", f"a tool result sent back should be answered, got {answer.message!r}"

    def test_streamed_tool_calls_are_whole(self, llm: Model) -> None:
        """Streamed tool calls arrive as whole ToolCalls, the same ones the done chunk holds."""
        if not self.supports_tools or not llm.profile.native_tools or not llm.profile.streaming_tools:
            pytest.skip("no native streamed tool calls")
        chunks = list(llm.stream(self.tool_prompt, tools=[ECHO_TOOL]))
        calls = [c.tool_call for c in chunks if c.type == "tool_call"]
        assert calls and all(isinstance(c, ToolCall) and c.name == "echo" for c in calls), \
            f"a streamed call of 'echo' should arrive as whole tool_call chunks, got {calls!r}"
        done = chunks[-1].completion
        assert done is not None and [c.id for c in calls if c is not None] == [c.id for c in done.tool_calls], \
            "the streamed tool calls should be the ones the done chunk holds (same ids, same order)"

    # -- errors and secrets --------------------------------------------------------------------

    def test_failure_is_a_provider_error(self, failing_llm: Model) -> None:
        """A failing call raises a zagent.ProviderError (or subclass) naming the provider."""
        with pytest.raises(ProviderError) as info:
            failing_llm.complete(self.prompt)
        assert info.value.provider == failing_llm.provider, \
            f"ProviderError.provider should be {failing_llm.provider!r}, got {info.value.provider!r}"
        assert str(info.value), "a ProviderError should say what went wrong"

    def test_failure_in_a_stream_is_a_provider_error(self, failing_llm: Model) -> None:
        """A failing streamed call raises ProviderError too, never a raw transport exception."""
        with pytest.raises(ProviderError):
            list(failing_llm.stream(self.prompt))

    def test_secret_never_in_repr_or_errors(self, llm: LLM, kernel: Kernel) -> None:
        """The API key appears in no repr and in no error message."""
        if not self.secret:
            pytest.skip("secret not set")
        assert self.secret not in repr(llm), "the API key shows in repr(llm): mask it (zagent._trust.secrets)"
        failing = self.make_failing_llm(kernel)
        if failing is not None:
            with pytest.raises(ProviderError) as info:
                failing.complete(self.prompt)
            assert self.secret not in str(info.value) and self.secret not in getattr(info.value, "body", ""), \
                "the API key shows in a ProviderError's message or body: mask it (zagent._trust.secrets)"

    # -- lifecycle ---------------------------------------------------------------------------

    def test_close_then_close_again(self, llm: Model) -> None:
        """aclose() releases connections and may be called twice."""
        llm.complete(self.prompt)
        llm.close()
        llm.close()
