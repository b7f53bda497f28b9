"""Built-in output parsers, text tool-call formats and prompt templates (entry point ``parsers``).

Registers through ``zagent_register_parsers``:

- output modes ``title``, ``json``, ``xml``, ``str``, ``custom`` — each with
  ``instructions(fields, **options)``, ``parse(text, fields, **options) -> dict``,
  ``parse_typed(...) -> Struct``, ``render(values, fields, **options) -> str``,
  ``repair_prompt(raw, fields, error)`` and ``aparse_with_repair(text, fields, llm, ctx=None)``;
- tool-call formats ``tool_call`` (default), ``hermes``, ``mistral``, ``llama3``,
  ``fenced``, ``pycall`` (``[f(a=1), g(b=2)]``, read with ``ast``), ``pipe`` (tiny-agent's ``TOOL:name|k=v&k=v`` lines) — each with ``render_tools(tools)``, ``parse_tool_calls(text)``,
  ``extract(text) -> (calls, errors, text)``, ``feedback(errors)``, ``render_calls(calls)``.

Prompt templates (``PromptTemplate``, ``ChatTemplate``) live in ``.templates``;
other plugins get them with ``kernel.find("parsers", "templates")`` (a namespace object
with ``PromptTemplate``/``ChatTemplate``) rather than importing this package.

Cheap to import: standard library ``re``/``bisect``/``os`` and msgspec only (regexes compile once, at import).
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from . import templates
from .base import Parser
from .modes import CustomParser, JsonParser, StrParser, TitleParser, XmlParser
from .repair import aparse_with_repair, repair_prompt
from .templates import ChatTemplate, PromptTemplate
from .toolcalls import Extraction, ToolCallError, extract
from .toolformats import FORMATS, ToolCallFormat
from .pipeformat import PipeFormat

MODES = (TitleParser, JsonParser, XmlParser, StrParser, CustomParser)

if TYPE_CHECKING:  # mypy checks that what is registered keeps the contracts kernel.parser/tool_format promise
    from zagent.contracts import OutputParser, TextToolFormat
    from .pycall import PyCallFormat

    _modes: tuple[type[OutputParser], ...] = MODES
    _formats: tuple[type[TextToolFormat], ...] = (*FORMATS, PipeFormat, PyCallFormat)

__all__ = [
    "ChatTemplate", "CustomParser", "Extraction", "JsonParser", "Parser", "PromptTemplate", "StrParser",
    "TitleParser", "ToolCallError", "ToolCallFormat", "XmlParser", "aparse_with_repair", "extract",
    "repair_prompt", "zagent_register_parsers",
]


def zagent_register_parsers(register: Callable[..., Any]) -> None:
    """Register the five output modes, the text tool-call formats and the template namespace."""
    for cls in MODES:
        register(cls.name, cls())
    for fmt in FORMATS:
        register(fmt.name, fmt())
    register(PipeFormat.name, PipeFormat())  # tiny-agent's TOOL:name|k=v lines
    from .pycall import PyCallFormat

    register(PyCallFormat.name, PyCallFormat())
    register("templates", SimpleNamespace(
        PromptTemplate=PromptTemplate, ChatTemplate=ChatTemplate, SECTIONS=templates.SECTIONS,
        name="templates"))
