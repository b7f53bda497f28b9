"""Tools: the ``Tool`` class, the ``@tool`` decorator, schemas from type hints and docstrings, argument
validation. A parameter annotated ``RunContext`` is injected and hidden from the model. Running tools is
``zagent._tools.run``'s job.
"""

from __future__ import annotations

import inspect
import re
import typing
from typing import Any, Callable, Optional

import attrs
import msgspec

from .._runs.context import RunContext
from ..errors import ToolError
from .._trust.limits import MAX_DEPTH, data_problem, json_depth
from .schemaargs import check_arguments, schema_type
from ..types import ToolSpec

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,127}$")
_SECTION_RE = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?)\s*:\s*$")


class ArgumentsError(Exception):
    """Raised by ``Tool.validate``; the message is written for the model to act on."""


@attrs.define(repr=False, eq=False)
class Tool:
    """A callable a model can use.

    :ivar name: unique name (letters, digits, ``_ . -``); toolsets namespace groups.
    :ivar description: what the model is told the tool does.
    :ivar handler: sync or async function receiving the validated arguments.
    :ivar parameters: JSON schema of the arguments (derived from the handler).
    :ivar toolset: group name used to select tools (``k.tools(toolset=...)``).
    :ivar timeout: seconds before a call becomes a ``timeout`` result (``None``: no limit).
    :ivar available: zero-argument check; a tool whose check is false is not offered.
    :ivar sensitive: rails may ask a human before running it.
    :ivar inline: ``True``: run a sync handler on the event loop (for cheap, pure
        functions; no timeout can interrupt it); ``False``: always in the kernel's
        tool threads (for anything that may block); ``None`` (default): measured,
        see ``zagent._tools.threads.InlineProbe`` -- threads until the handler has
        returned quickly every time, then on the loop, back to threads for good if
        a call there is ever slow.
    """

    name: str
    description: str
    handler: Callable[..., Any]
    parameters: dict[str, Any]
    args_type: Optional[type] = None
    toolset: str = "default"
    timeout: Optional[float] = 60.0
    available: Optional[Callable[[], bool]] = None
    sensitive: bool = False
    inline: Optional[bool] = None
    ctx_param: Optional[str] = None
    is_async: bool = False
    metadata: dict[str, Any] = attrs.field(factory=dict)
    emoji: str = ""  # shown beside the tool's name (Agent-Z's ToolEntry.emoji; in tool_definitions' metadata)
    _spec: Optional[ToolSpec] = attrs.field(default=None, init=False)
    _checker: Any = attrs.field(default=None, init=False)  # the explicit schema, compiled on first use

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        **options: Any,
    ) -> "Tool":
        """Make a tool from a plain function, deriving name, description and schema (``parameters=`` or
        Agent-Z's ``schema=`` gives the JSON schema instead: arguments are then checked against it)."""
        if not callable(fn):
            raise ToolError(f"cannot make a tool from {fn!r}: it is not callable")
        tool_name = name or getattr(fn, "__name__", None) or type(fn).__name__
        summary, param_docs = parse_docstring(inspect.getdoc(fn) or "")
        args_type, ctx_param = _args_struct(fn, tool_name, param_docs)
        schema = options.pop("parameters", None) or options.pop("schema", None)
        if schema is not None:
            if not isinstance(schema, dict):
                raise ToolError(f"tool {tool_name!r}: the schema must be a JSON schema dict, got {type(schema).__name__}")
            return cls(name=tool_name, description=description if description is not None else summary, handler=fn,
                       parameters=schema, ctx_param=ctx_param, is_async=_is_async(fn), **options)
        is_async = _is_async(fn)
        return cls(
            name=tool_name,
            description=description if description is not None else summary,
            handler=fn,
            parameters=_with_factory_defaults(_schema_of(args_type), fn),
            args_type=args_type,
            ctx_param=ctx_param,
            is_async=is_async,
            **options,
        )

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name):
            raise ToolError(
                f"invalid tool name {self.name!r}: use 1-128 letters, digits, '_', '.' or '-', "
                "starting with a letter or '_'"
            )

    @property
    def spec(self) -> ToolSpec:
        """What models are told: name, description, JSON schema (built once)."""
        if self._spec is None:
            self._spec = ToolSpec(name=self.name, description=self.description, parameters=self.parameters)
        return self._spec

    def is_available(self) -> bool:
        """Run the availability check; a check that raises counts as unavailable."""
        if self.available is None:
            return True
        try:
            return bool(self.available())
        except Exception:
            return False

    def validate(self, arguments: Any) -> dict[str, Any]:
        """Convert model-sent arguments to the handler's keyword arguments.

        Lax conversion, the way a user expects: ``"42"`` becomes ``42`` for an
        ``int`` parameter, ``"3.5"`` does not. Raises ``ArgumentsError`` with a
        message a model can act on.
        """
        if isinstance(arguments, (str, bytes)):
            text = arguments.decode("utf-8", "replace") if isinstance(arguments, bytes) else arguments
            if json_depth(text) > MAX_DEPTH:  # decoding it would recurse that deep
                raise self._refused(f"nested deeper than {MAX_DEPTH} levels")
            try:
                arguments = msgspec.json.decode(arguments) if arguments.strip() else {}
            except msgspec.DecodeError as exc:
                raise ArgumentsError(
                    f"arguments for tool {self.name!r} are not valid JSON ({exc}); "
                    "send a JSON object matching the tool's schema"
                ) from None
        if not isinstance(arguments, dict):
            raise ArgumentsError(
                f"arguments for tool {self.name!r} must be a JSON object, got {type(arguments).__name__}"
            )
        problem = data_problem(arguments)
        if problem is not None:
            raise self._refused(problem)
        try:
            if self.args_type is None:  # an explicit schema: checked once any coercion is done, here only
                required = self.parameters.get("required") if isinstance(self.parameters, dict) else None
                missing = [r for r in required if isinstance(r, str) and r not in arguments] \
                    if isinstance(required, list) else []
                if missing:  # said as for any zagent tool, naming every missing one (msgspec names the first)
                    raise msgspec.ValidationError("missing required argument(s) " + ", ".join(map(repr, missing)))
                return check_arguments(arguments, self._schema_checker())
            obj: Any = msgspec.convert(arguments, self.args_type, strict=False)
        except msgspec.ValidationError as exc:
            raise ArgumentsError(
                f"invalid arguments for tool {self.name!r}: {exc}. "
                f"Call it again with arguments matching this schema: {msgspec.json.encode(self.parameters).decode()}"
            ) from None
        return {f: getattr(obj, f) for f in obj.__struct_fields__}

    def _schema_checker(self) -> Any:
        if self._checker is None:
            schema = self.parameters if isinstance(self.parameters, dict) else {}
            top = schema.get("type", "object")  # arguments are an object: a schema saying otherwise is not used
            self._checker = schema_type({**schema, "type": "object"}) if top == "object" else Any
        return self._checker

    def _refused(self, problem: str) -> ArgumentsError:
        return ArgumentsError(
            f"arguments for tool {self.name!r} were refused: {problem}; call it again with arguments "
            f"matching this schema: {msgspec.json.encode(self.parameters).decode()}")

    def __repr__(self) -> str:
        kind = "async" if self.is_async else "sync"
        return f"<Tool {self.name!r} toolset={self.toolset!r} {kind}>"


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))


def tool(fn: Optional[Callable[..., Any]] = None, /, **options: Any) -> Any:
    """Decorator: ``@tool`` or ``@tool(name=..., timeout=..., toolset=...)`` makes a ``Tool``.

    The decorated name is bound to the ``Tool``; call the original function
    through ``.handler``.
    """
    if fn is None:
        return lambda f: Tool.from_function(f, **options)
    return Tool.from_function(fn, **options)


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a docstring into (summary, {parameter: description}).

    Understands Google style (``Args:`` then ``name: text`` / ``name (type): text``),
    NumPy style (``Parameters`` over a row of dashes, then ``name : type`` with the
    description indented below) and reST (``:param name: text``). The summary is everything before the
    first section or ``:param``.
    """
    params: dict[str, str] = {}
    summary_lines: list[str] = []
    section: Optional[str] = None
    current: Optional[str] = None
    lines = doc.splitlines()
    numpy_base = 0
    for i, line in enumerate(lines):
        if _is_numpy_underline(lines, i):
            continue
        if _is_numpy_underline(lines, i + 1):  # NumPy style: a section name over a row of dashes
            name = line.strip().lower()
            section, current, numpy_base = ("numpy" if name in _NUMPY_PARAMS else "other"), None, _indent(line)
            continue
        if section == "numpy":
            item = re.match(r"^(\s*)(\*{0,2}\w+)\s*(?::\s*(.*))?$", line)
            if item and len(item.group(1)) <= numpy_base and line.strip():
                current = item.group(2).lstrip("*")
                params[current] = ""
            elif current and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
            continue
        if section == "other":
            continue
        rest = re.match(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$", line)
        if rest:
            current, section = rest.group(1), "rest"
            params[current] = rest.group(2).strip()
            continue
        head = _SECTION_RE.match(line)
        if head:
            section, current = head.group(1), None
            continue
        if section in ("Args", "Arguments", "Parameters"):
            item = re.match(r"^\s+(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", line)
            if item and (current is None or _indent(line) <= _indent_of_item(doc, current)):
                current = item.group(1)
                params[current] = item.group(2).strip()
            elif current and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
            continue
        if section == "rest":
            if current and line.strip() and not line.lstrip().startswith(":"):
                params[current] = (params[current] + " " + line.strip()).strip()
            continue
        if section is None:
            summary_lines.append(line)
    return "\n".join(summary_lines).strip(), params


_NUMPY_PARAMS = ("parameters", "params", "arguments", "args", "other parameters", "keyword arguments")


def _is_numpy_underline(lines: list[str], i: int) -> bool:
    """True if line ``i`` is a NumPy section underline (dashes under a non-empty section name)."""
    if i <= 0 or i >= len(lines):
        return False
    under, title = lines[i].strip(), lines[i - 1].strip()
    return len(under) >= 3 and set(under) == {"-"} and bool(title) and not set(title) <= {"-"}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _indent_of_item(doc: str, name: str) -> int:
    for line in doc.splitlines():
        if re.match(rf"^\s+{re.escape(name)}\s*(?:\([^)]*\))?\s*:", line):
            return _indent(line)
    return 0


def _args_struct(fn: Callable[..., Any], tool_name: str, docs: dict[str, str]) -> tuple[type, Optional[str]]:
    """Build the msgspec Struct of ``fn``'s parameters; return it and the RunContext parameter's name."""
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else getattr(fn, "__call__", fn)
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception as exc:
        raise ToolError(f"cannot read the type hints of tool {tool_name!r}: {exc}") from exc
    fields: list[tuple[Any, ...]] = []
    ctx_param = None
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.kind is p.POSITIONAL_ONLY:
            raise ToolError(f"tool {tool_name!r}: parameter {p.name!r} is positional-only; tools are called "
                            "with keyword arguments, so remove the '/' from the signature")
        ann = hints.get(p.name, Any)
        if ann is RunContext or typing.get_origin(ann) is RunContext:  # RunContext[Deps] too
            ctx_param = p.name
            continue
        if p.name in docs and not _has_description(ann):
            ann = typing.Annotated[ann, msgspec.Meta(description=docs[p.name])]
        fields.append((p.name, ann) if p.default is p.empty else (p.name, ann, _default(p.default)))
    safe = re.sub(r"\W", "_", tool_name)
    try:
        struct = msgspec.defstruct(f"{safe}_arguments", fields, kw_only=True, forbid_unknown_fields=True)
        msgspec.json.schema(struct)
    except (TypeError, ValueError) as exc:
        raise ToolError(
            f"tool {tool_name!r} has a parameter type msgspec cannot describe: {exc}. "
            "Use JSON-compatible types (str, int, float, bool, list, dict, Literal, Enum, msgspec.Struct)"
        ) from exc
    return struct, ctx_param


def _default(value: Any) -> Any:
    """A parameter default as a struct field default; a non-empty list/dict/set default is copied per call."""
    if isinstance(value, (list, dict, set, bytearray)) and value:
        import copy

        return msgspec.field(default_factory=lambda: copy.deepcopy(value))
    return value


def _with_factory_defaults(schema: dict[str, Any], fn: Callable[..., Any]) -> dict[str, Any]:
    """Show defaults that msgspec keeps as factories (non-empty lists/dicts) in the schema too."""
    props = schema.get("properties", {})
    for p in inspect.signature(fn).parameters.values():
        if p.name in props and isinstance(p.default, (list, dict)) and p.default and "default" not in props[p.name]:
            props[p.name]["default"] = msgspec.to_builtins(p.default)
    return schema


def _has_description(ann: Any) -> bool:
    for meta in getattr(ann, "__metadata__", ()):
        if isinstance(meta, msgspec.Meta) and meta.description:
            return True
    return False


def _schema_of(struct: type) -> dict[str, Any]:
    """The struct's JSON schema, inlined at the top (nested types stay in ``$defs``)."""
    full = msgspec.json.schema(struct)
    defs = dict(full.get("$defs", {}))
    name = full["$ref"].rsplit("/", 1)[-1]
    top = dict(defs.pop(name))
    top.pop("title", None)
    top.setdefault("properties", {})
    top.setdefault("required", [])
    if defs:
        top["$defs"] = defs
    return top
