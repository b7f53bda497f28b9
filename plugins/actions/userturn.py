"""The user's turn of a chat: text, or a ``zagent.Message`` carrying image and file parts beside its text.

``user_turn`` checks it once, as untrusted input (``ConfigError``; an image part's URL as ``Part.image`` checks
one); ``check_parts`` raises ``ProviderConfigError`` for a part the model cannot take before any request;
``judged_text``/``history_text``: what input guardrails read of a turn. docs/media.md.
"""

from __future__ import annotations

from typing import Any, Union

from zagent.agentkit.inputs import check_text
from zagent.errors import ConfigError
from zagent.types import MAX_INLINE_BYTES, Message, Part, image_part

UserInput = Union[str, Message]

_KINDS = ("text", "image", "file")
#: file parts read as text (by the model, so by the input guardrails too)
_TEXT_FILES = ("text/", "application/json", "application/xml", "application/yaml", "application/x-yaml")


def user_turn(user_input: Any, where: str) -> Message:
    """``user_input`` (text or a user ``Message``) as the user ``Message`` to send; ``ConfigError`` otherwise."""
    if isinstance(user_input, str):
        check_text(user_input, where)
        return Message(role="user", content=user_input)
    if not isinstance(user_input, Message):
        raise ConfigError(f"{where} must be text or a zagent.Message (Message.user(text, image=...)), "
                          f"got {type(user_input).__name__}")
    if user_input.role != "user" or user_input.tool_calls or user_input.tool_call_id is not None:
        raise ConfigError(f"{where} must be a user message (Message.user(text, image=...)), got a "
                          f"{user_input.role!r} message" + (" with tool calls" if user_input.tool_calls else ""))
    check_text(user_input.content or "", where)
    for i, part in enumerate(user_input.parts):
        if not isinstance(part, Part) or part.type not in _KINDS:
            raise ConfigError(f"{where}: part #{i} is not a zagent.Part of kind text, image or file; build parts "
                              "with Part.image(...) / Part.file(...) or Message.user(text, image=..., file=...)")
        if part.type == "text":
            check_text(part.text, f"{where}, text part #{i}")
        if len(part.data) > MAX_INLINE_BYTES:
            raise ConfigError(f"{where}: part #{i} is {len(part.data)} bytes, over the {MAX_INLINE_BYTES}-byte "
                              "limit for inline parts; shrink it or send it by URL")
        if part.type == "image" and part.url:  # built by hand: its URL checked as Part.image checks one
            try:
                image_part(part.url, part.media_type or None)
            except ConfigError as exc:
                raise ConfigError(f"{where}: part #{i}: {exc}") from None
    return user_input


def text_of(turn: Message) -> str:
    """The turn's text (what routing, guardrails and retrieval read)."""
    return turn.content or ""


def judged_text(turn: Message) -> str:
    """What input guardrails read of the turn: its text, every text part and every text file (decoded), all of
    which the model reads; the text object itself when there is nothing else (``guardrails.hand_over``)."""
    extra = [p.text for p in turn.parts if p.type == "text" and p.text]
    extra += [p.data.decode("utf-8", "replace") for p in turn.parts
              if p.type == "file" and p.data and p.media_type.lower().startswith(_TEXT_FILES)]
    return "\n\n".join([turn.content or "", *extra]) if extra else turn.content or ""


def history_text(message: Message) -> str:
    """What input guardrails read of a message of a caller-given history (``guardrails.check_history``), whatever
    its role (a system, assistant or tool message the caller wrote too): its ``judged_text`` (text, text parts, text
    files) and its tool calls' names and arguments. The model reads them all."""
    if not message.tool_calls:
        return judged_text(message)
    calls = [f"{c.name}({c.arguments if isinstance(c.arguments, str) else _encode(c.arguments).decode()})"
             for c in message.tool_calls]
    return "\n\n".join(t for t in (judged_text(message), *calls) if t)


def _encode(value: Any) -> bytes:
    """``value`` as JSON (``repr`` of what JSON cannot hold), or as its ``repr`` when it cannot be encoded."""
    import msgspec

    try:
        return msgspec.json.encode(value, enc_hook=repr)
    except (TypeError, ValueError, RecursionError, msgspec.EncodeError):
        return repr(value).encode("utf-8", "replace")


def check_parts(llm: Any, turn: Message) -> None:
    """A part ``llm`` cannot take is a ``ProviderConfigError`` now, before any request (nothing is sent)."""
    if turn.parts:
        llm.request([turn])
