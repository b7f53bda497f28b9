"""``Tool`` and ``@tool``: a callable with a JSON schema read from its type hints and docstring, and argument
validation; a ``RunContext`` parameter is injected, hidden from the model."""

from __future__ import annotations

import copy
import inspect
import re
import typing
from typing import Any, Callable, Optional

import attrs
import msgspec

from .._runs.context import RunContext
from ..errors import ToolError
from .._trust.limits import MAX_DEPTH, data_problem, json_depth, non_finite
from .schemaargs import check_arguments, schema_type
from ..types import ToolSpec

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,127}$")
_SECTION_RE = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?)\s*:\s*$")


class ArgumentsError(Exception):
    """Raised by ``Tool.validate``; the message is written for the model to act on."""


@attrs.define(repr=False, eq=False)
class Tool:
    """A callable a model can use: ``name`` (letters, digits, ``_ . -``), ``description``, ``handler`` (sync or
    async, given the validated arguments), ``parameters`` (JSON schema), ``toolset``, ``timeout`` (seconds,
    ``None``: none), ``available`` (a check), ``sensitive`` (rails may ask a human) and ``inline`` (a sync
    handler on the event loop: ``True``, in threads: ``False``, measured: ``None``; docs/architecture.md)."""

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
    def from_function(cls, fn: Callable[..., Any], *, name: Optional[str] = None,
                      description: Optional[str] = None, **options: Any) -> "Tool":
        """Make a tool from a plain function, deriving name, description and schema (``parameters=`` or
        Agent-Z's ``schema=`` gives the JSON schema instead: arguments are then checked against it)."""
        if not callable(fn):
            raise ToolError(f"cannot make a tool from {fn!r}: it is not callable")
        tool_name = name or getattr(fn, "__name__", None) or type(fn).__name__
        summary, param_docs = parse_docstring(inspect.getdoc(fn) or "")
        args_type: Optional[type]
        args_type, ctx_param = _args_struct(fn, tool_name, param_docs)
        schema = options.pop("parameters", None) or options.pop("schema", None)
        if schema is None:
            schema = _without_secret_defaults(_with_factory_defaults(_schema_of(args_type), fn))
        elif not isinstance(schema, dict):
            raise ToolError(f"tool {tool_name!r}: the schema must be a JSON schema dict, got {type(schema).__name__}")
        else:
            args_type = None  # an explicit schema: arguments are checked against it
        return cls(name=tool_name, description=description if description is not None else summary, handler=fn,
                   parameters=schema, args_type=args_type, ctx_param=ctx_param, is_async=_is_async(fn), **options)

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name):
            raise ToolError(f"invalid tool name {self.name!r}: use 1-128 letters, digits, '_', '.' or '-', "
                            "starting with a letter or '_'")

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
        """The handler's keyword arguments from model-sent ones, converted laxly (``"42"`` is ``42`` for an
        ``int``); ``ArgumentsError`` with a message the model can act on."""
        if isinstance(arguments, (str, bytes)):
            text = arguments.decode("utf-8", "replace") if isinstance(arguments, bytes) else arguments
            if json_depth(text) > MAX_DEPTH:  # decoding it would recurse that deep
                raise self._refused(f"nested deeper than {MAX_DEPTH} levels")
            try:
                arguments = msgspec.json.decode(arguments) if arguments.strip() else {}
            except msgspec.DecodeError as exc:
                raise ArgumentsError(f"arguments for tool {self.name!r} are not valid JSON ({exc}); "
                                     "send a JSON object matching the tool's schema") from None
        if not isinstance(arguments, dict):
            raise ArgumentsError(f"arguments for tool {self.name!r} must be a JSON object, "
                                 f"got {type(arguments).__name__}")
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
                kwargs: dict[str, Any] = check_arguments(arguments, self._schema_checker())
            else:
                try:
                    obj: Any = msgspec.convert(arguments, self.args_type, strict=False)
                except msgspec.ValidationError:
                    given = _nulls_dropped(self.args_type, arguments)  # ``null`` for ``x: T = None``: the default
                    if given is None:
                        raise
                    obj = msgspec.convert(given, self.args_type, strict=False)
                kwargs = {f: getattr(obj, f) for f in obj.__struct_fields__}
        except msgspec.ValidationError as exc:
            raise ArgumentsError(f"invalid arguments for tool {self.name!r}: {exc}. Call it again with arguments "
                                 f"matching {self._schema_text()}") from None
        where = non_finite(kwargs)  # "NaN" or "inf" converted to a float: comparisons with it are all false
        if where is not None:
            raise self._refused(f"at {where}: NaN or an infinite number, which JSON does not have; send a finite "
                                "number")
        return kwargs

    @staticmethod
    def rail_arguments(kwargs: dict[str, Any]) -> dict[str, Any]:
        """``validate``'s result as rails read and rewrite it: plain JSON data (anything else as its ``repr``)."""
        plain: dict[str, Any] = msgspec.to_builtins(kwargs, enc_hook=repr)
        return plain

    def _schema_checker(self) -> Any:
        if self._checker is None:
            schema = self.parameters if isinstance(self.parameters, dict) else {}
            top = schema.get("type", "object")  # arguments are an object: a schema saying otherwise is not used
            self._checker = schema_type({**schema, "type": "object"}) if top == "object" else Any
        return self._checker

    def _refused(self, problem: str) -> ArgumentsError:
        return ArgumentsError(
            f"arguments for tool {self.name!r} were refused: {problem}; call it again with arguments "
            f"matching {self._schema_text()}")

    def _schema_text(self) -> str:
        """The schema as an error quotes it: whole up to 4,000 characters, else named (the model has it already;
        a 256 KiB schema quoted in every error would fill its context)."""
        text = msgspec.json.encode(self.parameters).decode()
        return f"this schema: {text}" if len(text) <= 4000 else f"the schema listed with the tool {self.name!r}"

    def __repr__(self) -> str:
        kind = "async" if self.is_async else "sync"
        return f"<Tool {self.name!r} toolset={self.toolset!r} {kind}>"


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))


def tool(fn: Optional[Callable[..., Any]] = None, /, **options: Any) -> Any:
    """``@tool`` or ``@tool(name=..., timeout=..., toolset=...)``: the function as a ``Tool`` (it is ``.handler``)."""
    if fn is None:
        return lambda f: Tool.from_function(f, **options)
    return Tool.from_function(fn, **options)


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """``(summary, {parameter: description})`` of a Google (``Args:``), NumPy (``Parameters`` over dashes) or
    reST (``:param name:``) docstring; the summary is the text before the first section."""
    params: dict[str, str] = {}
    summary: list[str] = []
    section: Optional[str] = None
    current: Optional[str] = None
    base = 0  # NumPy: the section title's indent; Google: the current item's
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        text, indent = line.strip(), len(line) - len(line.lstrip())
        if _is_underline(lines, i):
            continue
        if _is_underline(lines, i + 1):  # NumPy style: a section name over a row of dashes
            section, current, base = ("numpy" if text.lower() in _NUMPY_PARAMS else "other"), None, indent
            continue
        if section == "other":
            continue
        if section != "numpy":
            if found := _REST_ITEM.match(line):
                current, section = found.group(1), "rest"
                params[current] = found.group(2).strip()
                continue
            if found := _SECTION_RE.match(line):
                section, current, base = found.group(1), None, 1 << 30
                continue
            if section is None:
                summary.append(line)
                continue
        item = _ITEMS.get(section)
        found = item.match(line) if item is not None and indent <= base else None
        if found:
            current = found.group(1)
            params[current] = found.group(2).strip()
            base = base if section == "numpy" else indent
        elif current and text and (section != "rest" or not text.startswith(":")) and section in _READS:
            params[current] = (params[current] + " " + text).strip()
    return "\n".join(summary).strip(), params


_NUMPY_PARAMS = ("parameters", "params", "arguments", "args", "other parameters", "keyword arguments")
_REST_ITEM = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_GOOGLE_ITEM = re.compile(r"^\s+(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_ITEMS = {"numpy": re.compile(r"^\s*\*{0,2}(\w+)()\s*(?::.*)?$"),
          **dict.fromkeys(("Args", "Arguments", "Parameters"), _GOOGLE_ITEM)}
_READS = frozenset(("numpy", "rest", "Args", "Arguments", "Parameters"))


def _is_underline(lines: list[str], i: int) -> bool:
    """Whether line ``i`` is a NumPy section underline (dashes under a non-empty section name)."""
    if not 0 < i < len(lines):
        return False
    under, title = lines[i].strip(), lines[i - 1].strip()
    return len(under) >= 3 and set(under) == {"-"} and bool(title) and set(title) != {"-"}


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
        raise ToolError(f"tool {tool_name!r} has a parameter type msgspec cannot describe: {exc}. Use JSON-compatible "
                        "types (str, int, float, bool, list, dict, Literal, Enum, msgspec.Struct)") from exc
    return struct, ctx_param


def _nulls_dropped(args_type: Any, arguments: dict[str, Any]) -> Optional[dict[str, Any]]:
    """``arguments`` without the ``null`` values of parameters whose default is ``None`` (``auth: dict = None``,
    after a rail's rewrite filled defaults in, or a model's explicit ``null``), or ``None`` when there is none."""
    nulls = {f.name for f in msgspec.structs.fields(args_type) if f.default is None and arguments.get(f.name, 0) is None}
    return {k: v for k, v in arguments.items() if k not in nulls} if nulls else None


def _default(value: Any) -> Any:
    """A parameter default as a struct field default; a non-empty list/dict/set default is copied per call."""
    if isinstance(value, (list, dict, set, bytearray)) and value:
        return msgspec.field(default_factory=lambda: copy.deepcopy(value))
    return value


def _with_factory_defaults(schema: dict[str, Any], fn: Callable[..., Any]) -> dict[str, Any]:
    """Show defaults that msgspec keeps as factories (non-empty lists/dicts) in the schema too."""
    props = schema.get("properties", {})
    for p in inspect.signature(fn).parameters.values():
        if p.name in props and isinstance(p.default, (list, dict)) and p.default and "default" not in props[p.name]:
            props[p.name]["default"] = msgspec.to_builtins(p.default)
    return schema


def _without_secret_defaults(schema: dict[str, Any]) -> dict[str, Any]:
    """Leave out of the schema (sent to the model) a default that is a secret: that of a secret-named parameter
    (``api_key=os.environ[...]``), one holding a secret-named key at any depth (``options={"api_key": ...}``,
    ``headers={"Authorization": ...}``), or one quoting a secret environment value or a URL password. The
    parameter stays optional, and the function's own default applies."""
    props = schema.get("properties", {})
    texts = {name: str(sub["default"]) for name, sub in props.items() if isinstance(sub, dict) and "default" in sub
             and sub["default"] not in (None, "") and not isinstance(sub["default"], (bool, int, float))}
    if texts:
        from .._trust.secrets import env_masker, looks_secret

        masker = env_masker()
        for name, text in texts.items():
            if looks_secret(name) or masker(text) != text or _holds_secret(props[name]["default"], looks_secret):
                del props[name]["default"]
    return schema


def _holds_secret(value: Any, looks_secret: Any, depth: int = 20) -> bool:
    """Whether a JSON ``value`` has a non-empty value under a secret-named key at any depth."""
    if depth <= 0:
        return True  # deeper than a default needs: not offered
    if isinstance(value, dict):
        return any((looks_secret(str(k)) and v not in (None, "", {}, [])) or _holds_secret(v, looks_secret, depth - 1)
                   for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_secret(v, looks_secret, depth - 1) for v in value)
    return False


def _has_description(ann: Any) -> bool:
    return any(isinstance(meta, msgspec.Meta) and meta.description for meta in getattr(ann, "__metadata__", ()))


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
