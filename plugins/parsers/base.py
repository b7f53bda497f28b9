"""``Parser``, the base of every built-in output mode: ``instructions``, ``parse``/``parse_typed`` (``ParseError``
naming what is wrong), ``render`` and the repair path. Subclasses implement ``_extract`` (raw values by field
name, or ``ParseError``), ``_instructions`` and ``_render``; an unknown option is a ``TypeError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional

from zagent.errors import ParseError
from zagent.agentkit.fields import FieldsIn, FieldSpec, compile_fields, convert, to_dict
from zagent.agentkit.thinking import strip_think

from . import lenient

if TYPE_CHECKING:  # pragma: no cover
    from zagent import RunContext


class Parser:
    """Base output parser. ``name`` is the mode it is registered under; ``options`` are its defaults."""

    name = "base"
    #: option names this mode understands (others raise ``ConfigError``-style ``TypeError``)
    option_names: frozenset[str] = frozenset()
    #: also read a JSON object holding the declared fields when the mode's own format is not there
    json_fallback = True
    #: apply ``lenient`` (JSON fallback, unwrapping, placeholder refusal); ``custom`` leaves it to its function
    lenient = True
    #: a reply parses only when it follows the format (a free answer does not), so an agent with tools may
    #: show the format once its tool phase ends (``str`` takes any text, ``custom`` is the user's to say)
    structured = True

    def __init__(self, **options: Any):
        self._check_options(options)
        self.options = options

    # -- public protocol ----------------------------------------------------------

    def instructions(self, fields: FieldsIn, **options: Any) -> str:
        """The output-format section of a prompt for these fields (cached per spec and options)."""
        spec = compile_fields(fields)
        key = self._cache_key("instructions", options)
        if key is None:
            return self._instructions(spec, self._opts(options))
        text = spec.cache.get(key)
        if text is None:
            if len(spec.cache) > 256:  # e.g. a fresh lambda option per call: keep the memo bounded
                spec.cache.clear()
            text = self._instructions(spec, self._opts(options))
            if len(text) <= 65_536:  # a spec's 512 KB title_format: built again, never kept by the shared spec
                spec.cache[key] = text
        return text

    def parse(self, text: str, fields: FieldsIn, **options: Any) -> dict[str, Any]:
        """Parse a reply into a plain dict of declared, converted values; raise ``ParseError``."""
        return to_dict(self.parse_typed(text, fields, **options))

    def parse_typed(self, text: str, fields: FieldsIn, **options: Any) -> Any:
        """Parse a reply into the spec's msgspec Struct; raise ``ParseError`` naming what is wrong."""
        if not isinstance(text, str):
            raise ParseError(f"{self.name} parser expects the reply as str, got {type(text).__name__}; "
                             "pass completion.text", raw=repr(text))
        text = strip_think(text)  # reasoning is never output, even when a caller passes raw model text
        spec = compile_fields(fields)
        if not spec.required and not text.strip():  # nothing asked for, nothing given: all defaults
            return convert({}, spec, raw=text)
        return convert(self._read(text, spec, self._opts(options)), spec, raw=text)

    def render(self, values: Mapping[str, Any], fields: FieldsIn, **options: Any) -> str:
        """Write ``values`` as a reply in this format (what a well-behaved model would answer)."""
        spec = compile_fields(fields)
        return self._render(dict(values), spec, self._opts(options))

    def repair_prompt(self, raw: str, fields: FieldsIn, error: Any, **options: Any) -> str:
        """The extraction prompt to send once when ``raw`` did not parse (see ``repair.repair_prompt``)."""
        from .repair import repair_prompt

        spec = compile_fields(fields)
        example, own = None, False
        if self.lenient:
            values = lenient.reply_as_example(raw, spec) if isinstance(raw, str) else None
            own = values is not None
            example = self.render(values if values is not None else lenient.example_values(spec), spec, **options)
        return repair_prompt(raw, spec, error, instructions=self.instructions(fields, **options), example=example,
                             example_is_reply=own)

    async def aparse_with_repair(self, text: str, fields: FieldsIn, llm: Any, ctx: Optional["RunContext[Any]"] = None, **options: Any) -> dict[str, Any]:
        """Parse; on ``ParseError`` ask ``llm`` once with the repair prompt and parse its reply."""
        from .repair import aparse_with_repair

        return await aparse_with_repair(self, text, fields, llm, ctx, **options)

    def parse_with_repair(self, text: str, fields: FieldsIn, llm: Any, ctx: Optional["RunContext[Any]"] = None, **options: Any) -> dict[str, Any]:
        """Sync twin of ``aparse_with_repair``."""
        from zagent import run_sync

        return run_sync(self.aparse_with_repair(text, fields, llm, ctx, **options))

    def _read(self, text: str, spec: FieldSpec, opts: dict[str, Any]) -> dict[str, Any]:
        """The mode's reading, made lenient and honest (``lenient``): a JSON object holding every
        required field is read when the mode's own reading fails or lacks one; self-keyed JSON values
        are unwrapped; a value echoing the format's placeholder is a ``ParseError``."""
        if not self.lenient:
            return self._extract(text, spec, opts)
        try:
            values = self._extract(text, spec, opts)
        except ParseError:
            found = lenient.json_values(text, spec) if self.json_fallback else None
            if found is None:
                raise
            values = found
        else:
            if self.json_fallback and lenient.lacks_required(values, spec):
                values = lenient.json_values(text, spec) or values
        values = lenient.unwrap(values, spec)
        lenient.check_placeholders(values, spec, text)
        return values

    # -- for subclasses -------------------------------------------------------------

    def _extract(self, text: str, spec: FieldSpec, opts: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def _instructions(self, spec: FieldSpec, opts: dict[str, Any]) -> str:
        raise NotImplementedError

    def _render(self, values: dict[str, Any], spec: FieldSpec, opts: dict[str, Any]) -> str:
        raise NotImplementedError

    # -- helpers ----------------------------------------------------------------------

    def _opts(self, options: dict[str, Any]) -> dict[str, Any]:
        if not options:
            return self.options
        self._check_options(options)
        return {**self.options, **options}

    def _check_options(self, options: dict[str, Any]) -> None:
        unknown = set(options) - self.option_names
        if unknown:
            known = ", ".join(sorted(self.option_names)) or "none"
            raise TypeError(f"{self.name} parser got unknown option(s) {', '.join(sorted(unknown))}; "
                            f"it accepts: {known}")

    def _cache_key(self, what: str, options: dict[str, Any]) -> Optional[tuple[Any, ...]]:
        if not options:
            return (self.name, id(self), what)
        try:
            items = tuple(sorted(options.items()))
            hash(items)
        except TypeError:
            return None
        return (self.name, id(self), what, items)

    def __repr__(self) -> str:
        return f"<zagent parser {self.name!r}>"


def missing_error(spec: FieldSpec, found: Mapping[str, Any], raw: str, how: str) -> ParseError:
    """A ``ParseError`` for a reply in which none of the declared fields could be located."""
    missing = [n for n in spec.required if n not in found]
    return ParseError(
        f"no {how} found for the output field(s) {', '.join(spec.names)} in the reply; ask the model to "
        "answer in the requested output format (e.g. with the parser's repair prompt)",
        raw=raw, missing=missing,
    )
