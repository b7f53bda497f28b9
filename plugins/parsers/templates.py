"""Prompt templates: ``PromptTemplate.render`` gives one string, ``ChatTemplate.render`` a ``zagent.Message`` list,
both laid out in ``SECTIONS`` order. Placeholders are ``{identifier}`` (only the declared inputs, when there are
some; other braces stay literal); ``{{name}}`` is literal; a missing required input is a ``ConfigError``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Optional, Union

import msgspec
from zagent.errors import ConfigError
from zagent.agentkit.fields import FieldsIn, compile_fields
from zagent.agentkit.transcripts import turn_text
from zagent.types import Message

SECTIONS = ("system", "instruction", "context", "constraints", "demonstrations", "history",
            "inputs", "output_format", "tools")
TITLES = {
    "context": "## Context", "constraints": "## Constraints", "demonstrations": "## Examples",
    "history": "## Conversation so far", "inputs": "## Inputs", "output_format": "## Output format",
    "tools": "## Tools",
}
#: sections a caller may fill at render time (``render(inputs, {"context": ...})``)
RENDER_SECTIONS = ("history", "context", "tools", "output_format")
_TOKEN = re.compile(r"\{\{([A-Za-z_]\w*)\}\}|\{([A-Za-z_]\w*)\}")
_Part = Union[str, tuple[str], tuple[str, str]]  # a literal string, or (placeholder name,) / (name, wrapping tag)
_OPEN_TAG = re.compile(r"<([A-Za-z][\w-]*)>$")
_MISSING = object()


def _fmt(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, Message):
        return value.content or ""
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        return str(value)


class Text:
    """A text split once into literal strings and placeholder names; ``render`` just joins."""

    __slots__ = ("parts", "names", "static")

    def __init__(self, text: str, known: Optional[frozenset[str]] = None):
        parts: list[_Part] = []
        pos = 0
        for m in _TOKEN.finditer(text):
            escaped, name = m.group(1), m.group(2)
            if escaped is not None:  # {{name}}: a literal {name} where name would be a placeholder
                keep = known is None or escaped in known
                parts.append(text[pos:m.start()] + ("{" + escaped + "}" if keep else m.group(0)))
            elif known is None or name in known:
                parts.append(text[pos:m.start()])
                parts.append((name,))
            else:
                parts.append(text[pos:m.end()])
            pos = m.end()
        parts.append(text[pos:])
        self.parts = _wrapped(_merge(parts))
        self.names = frozenset(p[0] for p in self.parts if isinstance(p, tuple))
        self.static = "".join(p for p in self.parts if isinstance(p, str)) if not self.names else None  # all str then

    def render(self, values: Mapping[str, str]) -> str:
        if self.static is not None:
            return self.static
        return "".join(p if isinstance(p, str) else values[p[0]] if len(p) == 1 else _inert(values[p[0]], p[1])
                       for p in self.parts)


def _wrapped(parts: list[_Part]) -> list[_Part]:
    """A placeholder written ``<tag>{name}</tag>`` becomes ``(name, tag)``: its value cannot close the tag."""
    for i, p in enumerate(parts):
        if isinstance(p, tuple) and 0 < i < len(parts) - 1:
            before, after = parts[i - 1], parts[i + 1]
            m = _OPEN_TAG.search(before) if isinstance(before, str) and isinstance(after, str) else None
            if m is not None and isinstance(after, str) and after.startswith(f"</{m.group(1)}>"):
                parts[i] = (p[0], m.group(1))
    return parts


def _inert(value: str, tag: str) -> str:
    """``value`` with each ``<tag>``/``</tag>`` of its own written ``&lt;tag>``: an input (an earlier step's model
    output, a tool result) stays inside the tag the prompt put it in, never closing it to add text of its own."""
    if "<" not in value:
        return value
    # one whitespace run before the name (``\s*/?\s*`` split a long run every way: quadratic in its length)
    return re.sub(r"<(?=\s*(?:/\s*)?" + re.escape(tag) + r"\b)", "&lt;", value, flags=re.I)


def _merge(parts: list[_Part]) -> list[_Part]:
    out: list[_Part] = []
    for p in parts:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        elif p != "":
            out.append(p)
    return out


class PromptTemplate:
    """A one-string prompt made of the fixed sections; ``render(**inputs) -> str``.

    :param instruction: the task, with ``{input}`` placeholders.
    :param system: the role / persona text (first).
    :param context: background text (placeholders allowed); ``render(context=...)`` overrides it.
    :param constraints: rules, as a list (rendered as bullets) or one text.
    :param demonstrations: examples: ``{"inputs": {...}, "outputs": {...}}`` (rendered with
        the parser) or ``{"input": "...", "output": "..."}`` texts.
    :param inputs: declared input fields (``zagent.Field``/dicts/names). Inputs not used as
        placeholders are listed in the inputs section.
    :param outputs: output fields; with ``parser`` they make the output-format section.
    :param parser: an output parser (``kernel.parser(mode)``), for the output format and examples.
    :param output_format: the output-format text, if not made by ``parser``.
    :param tools: the tools section text (e.g. a tool-call format's ``render_tools(...)``).
    :param titles: section titles to replace (``{"inputs": "### Input"}``; ``None`` drops a title).
    """

    def __init__(
        self,
        instruction: str = "",
        *,
        system: str = "",
        context: str = "",
        constraints: Union[str, Sequence[str]] = (),
        demonstrations: Sequence[Mapping[str, Any]] = (),
        inputs: Optional[FieldsIn] = None,
        outputs: Optional[FieldsIn] = None,
        parser: Any = None,
        output_format: str = "",
        tools: str = "",
        titles: Optional[Mapping[str, Optional[str]]] = None,
    ):
        self.input_spec = compile_fields(inputs) if inputs is not None else None
        self.output_spec = compile_fields(outputs) if outputs is not None else None
        known = frozenset(self.input_spec.names) if self.input_spec is not None else None
        self.parser = parser
        self.titles = {**TITLES, **(titles or {})}
        self.texts = {
            "system": Text(system, known),
            "instruction": Text(instruction, known),
            "context": Text(context, known),
            "constraints": Text(_bullets(constraints), known),
        }
        if not output_format and parser is not None and self.output_spec is not None:
            output_format = parser.instructions(self.output_spec)
        self.output_format = output_format
        self.tools = tools
        self.placeholders = frozenset().union(*(t.names for t in self.texts.values()))
        #: names that are always inputs at render time, even ``context`` or ``history``
        self.declared = self.placeholders | (known or frozenset())
        self.demos = [self._demo(d) for d in demonstrations]
        self._plan: Optional[list[Union[str, tuple[str, Optional[str]]]]] = None

    # -- inputs -----------------------------------------------------------------------

    def values(self, inputs: Mapping[str, Any], *, sections: Sequence[str] = ()) -> dict[str, str]:
        """Input values as text, with defaults; ``ConfigError`` names a missing required input.

        ``sections``: the sections filled at render time, only to explain a missing input given as one.
        """
        out: dict[str, str] = {}
        if self.input_spec is not None:
            for f in self.input_spec.fields:
                value = inputs.get(f.name, _MISSING)
                if value is _MISSING or value is None:
                    if f.required and f.default is None:
                        raise self._missing(f.name, inputs, sections)
                    value = f.default
                out[f.name] = _fmt(value)
        for name in self.placeholders:
            if name not in out:
                if name not in inputs:
                    raise self._missing(name, inputs, sections)
                out[name] = _fmt(inputs[name])
        return out

    def _missing(self, name: str, inputs: Mapping[str, Any], sections: Sequence[str] = ()) -> ConfigError:
        where = [k for k, t in self.texts.items() if name in t.names] or ["inputs"]
        given = ", ".join(sorted(inputs)) or "none"
        hint = (f"; {name!r} was given as a render-time section, which does not fill the input of that name"
                if name in sections else "")
        return ConfigError(f"prompt template needs input {name!r} (used in {', '.join(where)}){hint}; "
                           f"pass it in the inputs: render({{{name!r}: ...}}) or render({name}=...); "
                           f"inputs given: {given}")

    # -- sections -----------------------------------------------------------------------

    def sections(self, inputs: Mapping[str, Any], *, history: Any = None, context: Optional[str] = None,
                 tools: Optional[str] = None, output_format: Optional[str] = None) -> dict[str, str]:
        """Every section's text (empty string when absent), in the fixed order."""
        given = [k for k, v in (("history", history), ("context", context), ("tools", tools),
                                ("output_format", output_format)) if v is not None]
        vals = self.values(inputs, sections=given)
        s = {k: t.render(vals) for k, t in self.texts.items()}
        if context is not None:
            s["context"] = context
        s["demonstrations"] = "\n\n".join(
            f"Example {i}:\n{_titled('Input', u)}\n{_titled('Output', a)}" for i, (u, a) in enumerate(self.demos, 1))
        s["history"] = _history_text(history)
        s["inputs"] = self._inputs_text(vals)
        s["output_format"] = self.output_format if output_format is None else output_format
        s["tools"] = self.tools if tools is None else tools
        return {k: s[k] for k in SECTIONS}

    def _inputs_text(self, vals: Mapping[str, str]) -> str:
        if self.input_spec is None:
            return ""
        return _pairs((f.name, vals[f.name]) for f in self.input_spec.fields if f.name not in self.placeholders)

    def _demo(self, demo: Mapping[str, Any]) -> tuple[str, str]:
        if "inputs" in demo or "outputs" in demo:
            ins = demo.get("inputs", {})
            user = _pairs(ins.items()) if isinstance(ins, Mapping) else _fmt(ins)
            outs = demo.get("outputs", {})
            if isinstance(outs, Mapping) and self.parser is not None and self.output_spec is not None:
                return user, self.parser.render(outs, self.output_spec)
            return user, _pairs(outs.items()) if isinstance(outs, Mapping) else _fmt(outs)
        if "input" in demo and "output" in demo:
            return _fmt(demo["input"]), _fmt(demo["output"])
        if self.input_spec is not None and self.output_spec is not None and demo:  # EvoAgentX's form: by field name
            names = set(self.input_spec.names) | set(self.output_spec.names)
            unknown = sorted(k for k in demo if k not in names)
            if not unknown:
                return self._demo({"inputs": {k: v for k, v in demo.items() if k in self.input_spec.names},
                                   "outputs": {k: v for k, v in demo.items() if k in self.output_spec.names}})
            raise ConfigError(f"demonstration key(s) {', '.join(map(repr, unknown))} are neither inputs nor outputs "
                              f"({', '.join(sorted(names))}); key a demonstration by field name, or use "
                              "'inputs'/'outputs' (dicts) or 'input'/'output' (texts)")
        raise ConfigError(f"a demonstration needs 'inputs'/'outputs' (dicts) or 'input'/'output' (texts), "
                          f"got keys {sorted(demo)}")

    def _join(self, sections: Mapping[str, str], keys: Sequence[str]) -> str:
        blocks = []
        for k in keys:
            text = sections[k].strip()
            if text:
                title = self.titles.get(k)
                blocks.append(f"{title}\n{text}" if title else text)
        return "\n\n".join(blocks)

    def render(self, inputs: Optional[Mapping[str, Any]] = None, sections: Optional[Mapping[str, Any]] = None,
               /, **kwargs: Any) -> str:
        """The whole prompt as one string: ``render({"q": ...}, {"context": ...})`` or ``render(q=..., context=...)``.

        A keyword is an input when the template declares that name (an input or a placeholder); otherwise
        ``history``, ``context``, ``tools`` and ``output_format`` fill those sections, and ``inputs=``/``sections=``
        are the two dicts.
        """
        vals, extra = self._split(inputs, sections, kwargs)
        return self._join(self.sections(vals, **extra), SECTIONS)

    def render_parts(self, inputs: Optional[Mapping[str, Any]] = None,
                     sections: Optional[Mapping[str, Any]] = None, /, **kwargs: Any) -> tuple[str, str]:
        """``(system, user)``: the ``system`` section alone, and every other section as one string
        (what an agent sends as a system message and a user turn). Arguments as for ``render``."""
        if sections is None and not kwargs and inputs is not None:  # the agents' call: a plan made once
            return self._parts_planned(inputs)
        vals, extra = self._split(inputs, sections, kwargs)
        s = self.sections(vals, **extra)
        return s["system"].strip(), self._join(s, tuple(k for k in SECTIONS if k != "system"))

    def _parts_planned(self, inputs: Mapping[str, Any]) -> tuple[str, str]:
        """``render_parts(inputs)`` with no render-time sections: the sections that do not depend on the
        inputs are joined once (``_plan``); only the input-dependent ones are rendered per call."""
        plan = self._plan
        if plan is None:
            plan = self._plan = self._make_plan()
        vals = self.values(inputs)
        blocks = []
        for item in plan:
            if isinstance(item, str):
                blocks.append(item)
                continue
            key, title = item
            text = (self._inputs_text(vals) if key == "inputs" else self.texts[key].render(vals)).strip()
            if text:
                blocks.append(f"{title}\n{text}" if title else text)
        return self.texts["system"].render(vals).strip(), "\n\n".join(blocks)

    def _make_plan(self) -> list[Union[str, tuple[str, Optional[str]]]]:
        """The user part's sections in order: a finished block (text) when it does not depend on the
        inputs, else ``(section, title)``; empty static sections are left out."""
        static = self.sections({n: "" for n in self.declared} if self.input_spec is None else
                               {f.name: "" for f in self.input_spec.fields} | {n: "" for n in self.placeholders})
        plan: list[Union[str, tuple[str, Optional[str]]]] = []
        for key in SECTIONS[1:]:
            title = self.titles.get(key)
            dynamic = (key in self.texts and self.texts[key].names) or (key == "inputs" and self.input_spec is not None
                                                                     and any(f.name not in self.placeholders
                                                                             for f in self.input_spec.fields))
            if dynamic:
                plan.append((key, title))
                continue
            text = static[key].strip()
            if text:
                plan.append(f"{title}\n{text}" if title else text)
        return plan

    def _split(self, inputs: Optional[Mapping[str, Any]], sections: Optional[Mapping[str, Any]],
               kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """(inputs, sections) from render's arguments; declared input names always stay inputs."""
        declared = self.declared
        for key in ("inputs", "sections"):  # keyword forms of the two dicts, unless declared as inputs
            if key in kwargs and key not in declared and isinstance(kwargs[key], Mapping):
                given = kwargs.pop(key)
                if key == "inputs":
                    inputs = {**given, **(inputs or {})}
                else:
                    sections = {**given, **(sections or {})}
        extra = {k: kwargs.pop(k) for k in RENDER_SECTIONS if k in kwargs and k not in declared}
        unknown = set(sections or {}) - set(RENDER_SECTIONS)
        if unknown:
            raise ConfigError(f"unknown render-time section(s) {', '.join(sorted(unknown))}; sections are "
                              f"{', '.join(RENDER_SECTIONS)}; pass template inputs in the inputs dict or as keywords")
        extra.update(sections or {})
        return {**(inputs or {}), **kwargs}, extra

    def __repr__(self) -> str:
        return f"<{type(self).__name__} placeholders={sorted(self.placeholders)}>"


class ChatTemplate(PromptTemplate):
    """The same sections as chat turns: ``render(**inputs) -> list[zagent.Message]``.

    The system turn holds system, instruction, context and constraints; each demonstration is a user/assistant
    pair; history follows; the final user turn holds inputs, output format and tools.
    """

    SYSTEM = ("system", "instruction", "context", "constraints")
    FINAL = ("inputs", "output_format", "tools")

    def render(self, inputs: Optional[Mapping[str, Any]] = None,  # type: ignore[override]
               sections: Optional[Mapping[str, Any]] = None, /, **kwargs: Any) -> list[Message]:
        """The prompt as chat turns; arguments as for ``PromptTemplate.render``."""
        vals, extra = self._split(inputs, sections, kwargs)
        history = extra.pop("history", None)
        s = self.sections(vals, **extra)
        messages: list[Message] = []
        system = self._join(s, self.SYSTEM)
        if system:
            messages.append(Message(role="system", content=system))
        for user, assistant in self.demos:
            messages.append(Message(role="user", content=user))
            messages.append(Message(role="assistant", content=assistant))
        messages.extend(_history_messages(history))
        messages.append(Message(role="user", content=self._join(s, self.FINAL) or "Go ahead."))
        return messages


def _bullets(constraints: Union[str, Sequence[str]]) -> str:
    if isinstance(constraints, str):
        return constraints
    return "\n".join(f"- {c}" for c in constraints)


def _pairs(items: Any) -> str:
    lines = []
    for name, value in items:
        text = _fmt(value)
        lines.append(f"{name}:\n{text}" if "\n" in text else f"{name}: {text}")
    return "\n".join(lines)


def _titled(title: str, text: str) -> str:
    return f"{title}:\n{text}"


def _history_messages(history: Any) -> list[Message]:
    if not history:
        return []
    if isinstance(history, str):
        return [Message(role="user", content=history)]
    out = []
    for m in history:
        out.append(m if isinstance(m, Message) else msgspec.convert(m, Message))
    return out


def _history_text(history: Any) -> str:
    if not history:
        return ""
    if isinstance(history, str):
        return history
    return "\n".join(turn_text(f"{m.role}: ", m.content or "") for m in _history_messages(history))


