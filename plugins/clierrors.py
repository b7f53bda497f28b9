"""How the CLI shows errors: ``describe(exc)``, the text after ``zagent: error:`` (``error_text``: its lines after
the first indented, ``indented``, as are log records').

A ``ParseError`` (also a workflow node's) names the fields at fault, quotes the start of the model's reply (and
repair answer) and says what to try next; a ``ProviderTimeout`` says how to raise the timeout; others print as
they are.
"""

from __future__ import annotations

from typing import Any

EXCERPT = 300


def error_text(exc: BaseException) -> str:
    """``describe(exc)`` as the CLI prints it (``indented``, ``masked``)."""
    return indented(masked(describe(exc)))


def masked(text: str) -> str:
    """``text`` with the values of secret-named environment variables (``OPENAI_API_KEY``...) and URL passwords
    masked: what the CLI prints on stderr (errors, tracebacks with their causes, warnings, log records) may quote
    them, as a failing library's message does."""
    from zagent.agentkit.secrets import mask_env

    return mask_env(text)


def indented(text: str) -> str:
    """``text`` with each line after the first that starts at the margin indented, any line break counted
    (``\r``, ``\u2028``...): text quoting a spec or a server (a model name holding a line break) cannot print a
    line that reads as zagent's own. The CLI's errors and its log records both go through it."""
    first, *rest = text.splitlines() or [""]
    return "\n".join([first, *(line if not line or line[0].isspace() else "  " + line for line in rest)])


def describe(exc: BaseException) -> str:
    """The text after ``zagent: error: `` for ``exc``."""
    from zagent.errors import ParseError

    from zagent.errors import ProviderTimeout

    if isinstance(exc, ParseError):
        return _parse_error(exc)
    causes = getattr(exc, "causes", None)  # a workflow's failed nodes
    if isinstance(causes, dict) and any(isinstance(c, ParseError) for c in causes.values()):
        head = str(exc).split(" failed: ", 1)[0] + " failed"
        parts = [f"{node}: {describe(c) if isinstance(c, ParseError) else c}" for node, c in causes.items()]
        return head + ":\n" + "\n".join(parts)
    if isinstance(exc, ProviderTimeout):
        return (f"{exc}\n  on the command line: --timeout SECONDS (or ZAGENT_TIMEOUT=SECONDS); a small local "
                "model may need minutes per reply, and a max_tokens in the agent's llm_config bounds it")
    return str(exc)


def _parse_error(exc: Any) -> str:
    attempts = [a for a in (getattr(exc, "attempts", None) or []) if isinstance(a, str)]
    raw = exc.raw if isinstance(exc.raw, str) else ""
    problems = [f"field {name!r}: {reason}" for name, reason in (exc.invalid or {}).items()]
    missing = [n for n in (exc.missing or []) if n not in (exc.invalid or {})]
    if missing:
        problems.append(f"no value found for {', '.join(missing)}")
    what = "; ".join(problems) or str(exc).split(";", 1)[0]
    lines = [f"the model's reply did not match the requested output format ({what})"]
    if len(attempts) >= 2:
        lines.append(f"  model's reply: {excerpt(attempts[0])}")
        lines.append(f"  its answer to the repair prompt: {excerpt(attempts[-1])}")
        lines.append("  zagent already asked the model once more with a repair prompt. Try parse_mode \"json\" "
                     "(easiest for small models), a stronger model, or a lower temperature in llm_config.")
    else:
        lines.append(f"  model's reply: {excerpt(raw)}")
        lines.append("  try parse_mode \"json\" (easiest for small models), a stronger model, or a lower "
                     "temperature in llm_config.")
    return "\n".join(lines)


def excerpt(text: str, limit: int = EXCERPT) -> str:
    """The start of ``text`` on one line, quoted, with its length when cut."""
    flat = " ".join(text.split())
    if not flat:
        return "(empty)"
    if len(flat) <= limit:
        return repr(flat)
    return f"{flat[:limit]!r}... ({len(text)} characters)"
