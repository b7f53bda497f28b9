"""How a group chat asks one agent for its turn: the speaker adapter protocol.

Every speaker gets a ``Turn`` (who speaks, the round, the task, the chat's
inputs, a *snapshot* of the shared history and a ``RunContext`` tagged with
the chat's run id) and gives back a ``Reply`` (text everyone will see, typed
output if any, tokens spent). ``speak(agent, turn)`` picks the first rule that
fits the agent:

1. **native**: the agent has ``aspeak(turn)`` (or sync ``speak(turn)``)
   returning a ``str`` or a ``Reply``. Write this for a custom agent class.
   Sync methods and functions run in the kernel's tool threads
   (``Kernel.tool_executor``), so they may block without stalling the chat's
   event loop; an abort stops waiting for them (the thread finishes alone).
2. **chat agents** (``achat``, e.g. the react plugin's ``ReActAgent``, or an ``Agent`` without actions):
   ``achat(instruction, history=<the history as messages>, use_react=<has tools>)``,
   plus ``ctx=<the turn's context>`` when ``achat`` takes one (the chat's run id).
   The agent's own past turns are ``assistant`` messages, everyone else's are
   ``user`` messages written ``"Name: text"``.
3. **declared agents** (``aexecute``, e.g. ``CustomizeAgent``): the default
   action runs with its input fields filled by name: ``transcript``/``history``
   (the history as ``Name: text`` blocks), ``task``, ``speaker``/``name``,
   ``round``, ``last_message``/``last_speaker``, and any input of the chat
   (``--input x=...``). The reply is the single output field, else the field
   named ``reply``/``content``/``message``/``answer``/``text``/``response``,
   else all outputs as JSON. The ``RunContext`` is passed, so tool calls run
   through ``Kernel.arun_tool`` with the chat's run id and every rail applies.
4. **functions**: ``fn(turn)`` (sync or async) returning a ``str`` or ``Reply``.

``check_inputs`` tells, before a chat starts, which declared inputs no rule fills.
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
