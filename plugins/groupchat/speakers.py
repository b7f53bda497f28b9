"""The speaker adapter protocol: ``speak(agent, turn)`` gives an agent a ``Turn`` (a snapshot of the history, a
``RunContext`` with the chat's run id) and returns its ``Reply``, by the first rule that fits: native
``aspeak``/``speak``, chat agent ``achat``, declared agent ``aexecute``, a function. Sync code runs in the
kernel's tool threads. See docs/groupchat.md#speakers-the-adapter-protocol.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import attrs
import msgspec

from zagent.agentkit.interrupts import run_in_context
from zagent.errors import ConfigError
from zagent.agentkit.awaits import maybe_await
from zagent.types import Usage

from .history import ChatMessage, as_chat_messages, render_transcript

if TYPE_CHECKING:  # pragma: no cover
    from zagent import RunContext

REPLY_FIELDS = ("reply", "content", "message", "answer", "text", "response")
TURN_INPUTS = ("transcript", "history", "task", "speaker", "name", "round", "last_message", "last_speaker")
INSTRUCTION = ("You are {speaker}, one of several participants in a group chat working on this task:\n{task}\n\n"
               "Read the conversation so far and give your next contribution as {speaker}. "
               "Reply with your message only.")

_encoder = msgspec.json.Encoder(enc_hook=repr)


@attrs.frozen(repr=False)
class Turn:
    """What one speaker sees when asked for its turn (see the module docstring)."""

    speaker: str
    round: int
    task: str
    inputs: dict[str, Any]
    messages: tuple[ChatMessage, ...]
    ctx: "RunContext[Any]"

    @property
    def transcript(self) -> str:
        return render_transcript(self.messages)

    @property
    def instruction(self) -> str:
        return INSTRUCTION.format(speaker=self.speaker, task=self.task)

    def as_messages(self) -> list[Any]:
        """The history from this speaker's point of view (``zagent.Message`` list)."""
        return as_chat_messages(self.messages, self.speaker)

    def values(self) -> dict[str, Any]:
        """The named values a declared agent's inputs are filled from."""
        last = self.messages[-1] if self.messages else None
        values = dict(self.inputs)
        values.update(transcript=self.transcript, history=self.transcript, task=self.task, speaker=self.speaker,
                      name=self.speaker, round=self.round, last_message=last.content if last else "",
                      last_speaker=last.speaker if last else "")
        return values

    def __repr__(self) -> str:
        return f"<Turn {self.speaker!r} round={self.round} messages={len(self.messages)}>"


@attrs.frozen(repr=False)
class Reply:
    """A speaker's answer: ``content`` is recorded in the history; ``output`` keeps typed fields."""

    content: str
    output: dict[str, Any] = attrs.field(factory=dict)
    usage: Usage = Usage()
    adapter: str = "native"

    def __repr__(self) -> str:
        return f"<Reply {self.adapter} {self.content[:40]!r}>"


async def speak(agent: Any, turn: Turn) -> Reply:
    """Ask ``agent`` for its turn, by the first rule of the module docstring that fits."""
    if callable(getattr(agent, "aspeak", None)):
        return _as_reply(await maybe_await(agent.aspeak(turn)), "native", turn)
    if callable(getattr(agent, "speak", None)):
        return _as_reply(await _call(agent.speak, turn), "native", turn)
    if _chats(agent):
        return await _chat(agent, turn)
    if callable(getattr(agent, "aexecute", None)):
        return await _execute(agent, turn)
    if callable(agent):
        return _as_reply(await _call(agent, turn), "function", turn)
    raise ConfigError(f"speaker {turn.speaker!r} ({type(agent).__name__}) has none of aspeak/speak, achat, "
                      "aexecute, and is not callable; see zagent.plugins.groupchat.speakers")


def _chats(agent: Any) -> bool:
    """Speaks through ``achat``: a chat agent. Declared agents have ``achat`` too, but say
    ``speaks_by_chat = False`` and speak through ``aexecute`` (the transcript as an input), unless they
    have no action to execute (an ``Agent`` with none can only chat)."""
    return callable(getattr(agent, "achat", None)) and bool(getattr(agent, "speaks_by_chat", True))


async def _call(fn: Any, turn: Turn) -> Any:
    """Await an async function; run a sync one in the kernel's tool threads, so the event loop never blocks."""
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None)):
        return await fn(turn)
    import asyncio

    loop = asyncio.get_running_loop()
    return await maybe_await(await loop.run_in_executor(turn.ctx.kernel.tool_executor(), run_in_context(fn, turn)))


async def _chat(agent: Any, turn: Turn) -> Reply:
    kwargs: dict[str, Any] = {"history": turn.as_messages(), "use_react": bool(getattr(agent, "tools", None))}
    if _accepts_ctx(agent.achat):  # the react plugin's achat: the turn runs under the chat's run id
        kwargs["ctx"] = turn.ctx
    response = await agent.achat(turn.instruction, **kwargs)
    raw = (getattr(response, "metadata", None) or {}).get("usage") or {}
    usage = msgspec.convert(raw, Usage) if isinstance(raw, dict) else Usage()
    turn.ctx.add_usage(usage)
    return Reply(content=str(response.content), usage=usage, adapter="chat")


def _accepts_ctx(fn: Any) -> bool:
    import inspect

    try:
        return "ctx" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


async def _execute(agent: Any, turn: Turn) -> Reply:
    values = turn.values()
    action_of = getattr(agent, "action", None)
    names = action_of().input_spec.names if callable(action_of) else tuple(values)
    inputs = {n: values[n] for n in names if n in values}
    before = turn.ctx.usage
    result = await agent.aexecute(None, inputs=inputs, ctx=turn.ctx)
    output = result.to_dict() if hasattr(result, "to_dict") else {}
    usage = getattr(result, "usage", None) or _minus(turn.ctx.usage, before)
    return Reply(content=_content_of(output), output=output, usage=usage, adapter="execute")


def check_inputs(agent: Any, available: set[str]) -> list[str]:
    """Required inputs of a declared agent's default action that neither a turn nor the chat fills."""
    if getattr(agent, "aspeak", None) or getattr(agent, "speak", None) or _chats(agent):
        return []
    action_of = getattr(agent, "action", None)
    if not callable(action_of) or not callable(getattr(agent, "aexecute", None)):
        return []
    action = action_of()
    return [n for n in action.required_inputs if n not in available and n not in TURN_INPUTS]


def _content_of(output: dict[str, Any]) -> str:
    if len(output) == 1:
        value = next(iter(output.values()))
    else:
        key = next((k for k in REPLY_FIELDS if k in output), None)
        value = output[key] if key is not None else output
    return value if isinstance(value, str) else _encoder.encode(value).decode()


def _as_reply(value: Any, adapter: str, turn: Turn) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply(content=value, adapter=adapter)
    if value is None:
        raise ConfigError(f"speaker {turn.speaker!r} returned None; return the message text (or a Reply)")
    return Reply(content=str(value), adapter=adapter)


def _minus(after: Usage, before: Usage) -> Usage:
    return Usage(input_tokens=after.input_tokens - before.input_tokens,
                 output_tokens=after.output_tokens - before.output_tokens, calls=after.calls - before.calls)
