"""Repair, not silence: ``repair_prompt`` builds the extraction prompt; ``aparse_with_repair`` re-asks the model
once on ``ParseError``, then raises a ``ParseError`` naming the missing and invalid fields, with both raw replies
(``raw``, ``attempts``). Other plugins reach it through ``kernel.parser(mode)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from zagent.errors import ParseError
from zagent.agentkit.fields import FieldsIn, compile_fields, describe

if TYPE_CHECKING:
    from zagent import RunContext
    from .base import Parser

_MAX_RAW = 12000


def repair_prompt(raw: str, fields: FieldsIn, error: Any, *, instructions: Optional[str] = None,
                  example: Optional[str] = None, example_is_reply: bool = False) -> str:
    """The extraction prompt: what was wrong (``error``: a ``ParseError`` or any message), the raw reply, the
    field spec, and the format to use.

    The format is ``example``, a filled-in reply (the parser's ``render`` of example values, which the parser
    refuses; with ``example_is_reply``, the previous reply itself, to send back in that layout), else
    ``instructions`` (the parser's output-format section).
    """
    spec = compile_fields(fields)
    shown = raw if len(raw) <= _MAX_RAW else raw[:_MAX_RAW] + "\n[... reply truncated ...]"
    if example is not None and example_is_reply:
        fmt = ("Here is your previous reply put in the required layout. Send it back in exactly this layout, "
               "correcting it if needed (drop anything that is not the answer), and nothing else:\n\n"
               f"<example>\n{example}\n</example>")
    elif example is not None:
        fmt = ("Answer in exactly the layout of this example. Its values are made up: put the real values "
               "from your previous reply in their place, and do not copy the example's values.\n\n"
               f"<example>\n{example}\n</example>")
    else:
        fmt = instructions or "Reply with a single JSON object whose keys are the field names."
    return (
        "Your previous reply could not be read. Extract the requested fields from it and answer again in "
        "the required format. Use only information in the reply; if a required field is not there, "
        "leave it out rather than inventing it.\n\n"
        f"## What was wrong\n{_problem(error)}\n\n"
        f"## Previous reply\n<reply>\n{shown}\n</reply>\n\n"
        f"## Fields\n{describe(spec)}\n\n"
        f"## Output format\n{fmt}"
    )


def _problem(error: Any) -> str:
    if isinstance(error, ParseError):
        parts = []
        for name, reason in error.invalid.items():
            parts.append(f"field {name!r} is invalid: {reason}")
        missing = [n for n in error.missing if n not in error.invalid]
        if missing:
            head = str(error).split(";", 1)[0]
            parts.append(f"missing required field(s): {', '.join(missing)} ({head})")
        if parts:
            return "\n".join(f"- {p}" for p in parts)
    return f"- {error}"


async def aparse_with_repair(
    parser: Parser, text: str, fields: FieldsIn, llm: Any, ctx: Optional["RunContext[Any]"] = None, **options: Any
) -> dict[str, Any]:
    """Parse ``text`` with ``parser``; on ``ParseError`` ask ``llm`` once with the repair prompt and parse its reply.

    :param llm: anything with ``async acomplete(messages, ctx=..., output_spec=...)`` (a ``zagent.LLM``); its
        reply's ``.text`` (or the reply itself, if a str) is parsed.
    :raises ParseError: when the repaired reply does not parse either (``raw``: the first reply, ``attempts``: both).
    """
    try:
        return parser.parse(text, fields, **options)
    except ParseError as first:
        prompt = parser.repair_prompt(text, fields, first, **options)
        reply = await llm.acomplete(prompt, ctx=ctx, output_spec=_output_spec(parser, fields, options))
        second = reply if isinstance(reply, str) else (getattr(reply, "text", None) or "")
        try:
            return parser.parse(second, fields, **options)
        except ParseError as last:
            raise _final_error(first, last, text, second) from last


def _output_spec(parser: Any, fields: FieldsIn, options: dict[str, Any]) -> dict[str, Any]:
    """What the repair request tells offline providers: mode, fields and plain (JSON-able) options."""
    spec: dict[str, Any] = {"mode": getattr(parser, "name", "json"), "fields": list(compile_fields(fields).fields)}
    plain = {k: v for k, v in options.items() if isinstance(v, (str, int, float, bool)) or v is None}
    if plain:
        spec["options"] = plain
    return spec


def _final_error(first: ParseError, last: ParseError, text: str, second: str) -> ParseError:
    err = ParseError(
        f"reply did not parse, and neither did the repaired reply: {last}. Both raw replies are kept on "
        "this error (.raw, .attempts); check the model, the prompt or the output mode",
        raw=text, missing=last.missing, invalid=last.invalid,
    )
    err.attempts = [text, second]
    err.first_error = first  # type: ignore[attr-defined]
    return err
