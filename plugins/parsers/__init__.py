"""Built-in output parsers, text tool-call formats and prompt templates (entry point ``parsers``).

``zagent_register_parsers`` registers the output modes ``title``, ``json``, ``xml``, ``str``, ``custom``; the
tool-call formats ``tool_call`` (default), ``hermes``, ``mistral``, ``llama3``, ``fenced``, ``pycall``, ``pipe``;
and ``templates`` (``PromptTemplate``, ``ChatTemplate``). Protocols: docs/hooks.md. Cheap to import.
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
