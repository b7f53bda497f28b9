"""Repair, not silence: re-ask the model once with an extraction prompt, then give up loudly.

``repair_prompt`` builds the prompt (the raw reply, the field spec, what was
wrong, and the format to answer in). ``aparse_with_repair`` parses, on
``ParseError`` sends that prompt once through ``llm.acomplete`` and parses the
answer; if that fails too, the final ``ParseError`` names the missing and
invalid fields and keeps the raw text of both attempts (``raw`` is the first
reply, ``attempts`` lists both). Nothing is dropped or invented.

Other plugins reach this through a parser object (``kernel.parser("json")
.aparse_with_repair(...)``), never by importing this module.
"""

from __future__ import annotations

from typing import Any, Optional

from zagent.errors import ParseError
from zagent.fields import FieldsIn, compile_fields, describe

_MAX_RAW = 12000


def repair_prompt(raw: str, fields: FieldsIn, error: Any, *, instructions: Optional[str] = None) -> str:
    """The extraction prompt: the raw reply, the field spec, what was wrong, and the format to use.

    :param raw: the model's reply that failed to parse.
    :param fields: the output field declaration.
    :param error: the ``ParseError`` (or any message) saying what was wrong.
    :param instructions: the output-format section to answer in (the parser's
        ``instructions(fields)``); defaults to a JSON object of the fields.
    """
    spec = compile_fields(fields)
    shown = raw if len(raw) <= _MAX_RAW else raw[:_MAX_RAW] + "\n[... reply truncated ...]"
    fmt = instructions or ("Reply with a single JSON object whose keys are the field names.")
    return (
        "Your previous reply could not be read. Extract the requested fields from it and answer again in "
        "the required format. Use only information in the reply; if a required field is not there, "
        "leave it out rather than inventing it.\n\n"
        f"## Previous reply\n<reply>\n{shown}\n</reply>\n\n"
        f"## What was wrong\n{_problem(error)}\n\n"
        f"## Fields\n{describe(spec)}\n\n"
        f"## Output format\n{fmt}"
    )


def _problem(error: Any) -> str:
    if isinstance(error, ParseError):
        parts = []
        if error.missing:
            parts.append("missing required field(s): " + ", ".join(error.missing))
        for name, reason in error.invalid.items():
            parts.append(f"field {name!r} is invalid: {reason}")
        if parts:
            return "\n".join(f"- {p}" for p in parts)
    return f"- {error}"


async def aparse_with_repair(
    parser: Any, text: str, fields: FieldsIn, llm: Any, ctx: Any = None, **options: Any
) -> dict[str, Any]:
    """Parse ``text``; on ``ParseError`` ask ``llm`` once with the repair prompt and parse its reply.

    :param parser: an output parser (``kernel.parser(mode)``).
    :param llm: anything with ``async acomplete(messages, ctx=..., output_spec=...)``
        (a ``zagent.LLM``); its reply's ``.text`` (or the reply itself, if a str) is parsed.
    :raises ParseError: when the repaired reply does not parse either; ``raw``
        holds the first reply and ``attempts`` both replies.
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
    err.attempts = [text, second]  # type: ignore[attr-defined]
    err.first_error = first  # type: ignore[attr-defined]
    return err
