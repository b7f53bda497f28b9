"""``CustomizeAgent``: an agent declared, not coded, from an ``AgentSpec`` (what JSON/YAML agent files hold).

``from_dict``/``load`` validate the spec (a precise ``ConfigError``) and build an ``Agent`` with one
``CustomizeAction``; ``to_dict``/``save`` write it back without secrets. Import paths it names are imported only
under the trust in force (docs/security.md).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, Optional, Union

import attrs
import msgspec
from zagent.agentkit import fields as zfields
from zagent.errors import ConfigError
from zagent.providerkit.credentials import spec_options
from zagent.speckit.paths import check_spec_path, path_options
from zagent.agentkit.files import write_atomic
from zagent.agentkit.outputtypes import fields_for, is_output_type, type_path
from zagent.agentkit.placeholders import placeholders
from zagent.speckit import trusting
from zagent.speckit.trust import resolve
from zagent.agentkit.approvals import resolve_approver
from zagent.speckit.rails import check_rails, check_user_data_switches
from zagent.speckit.specs import convert_spec, public_spec
from zagent.agentkit.secrets import public_data
from zagent.agentkit.toolrefs import resolve_tool_refs
from zagent.types import Field

from .action import CustomizeAction
from .agent import Agent
from .memorykeys import spec_memory_key

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

TEXT = Field(name="content", type="string", description="the answer")
"""The output of an agent that declares none (EvoAgentX's first example): the reply's text."""
_PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})")


class AgentSpec(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """The declarative form of a ``CustomizeAgent`` (what JSON/YAML agent files hold)."""

    name: str
    type: str = "customize"
    description: str = ""
    prompt: Optional[str] = None
    prompt_template: Optional[dict[str, Any]] = None
    system_prompt: Optional[str] = None
    inputs: list[Field] = []
    outputs: list[Field] = []
    output_type: Optional[str] = None
    """A pydantic model, msgspec Struct, dataclass or attrs class by import path: its fields are the outputs and
    the answer is an instance of it (``agentkit.outputtypes``); in Python, the class itself."""
    parse_mode: Optional[str] = None
    title_format: Optional[str] = None
    parse_func: Optional[str] = None
    tools: list[str] = []
    agents: list[Any] = []
    """Agents offered as tools: agent files (relative to this file's folder) or inline specs (``astool``)."""
    tool_format: str = "tool_call"
    llm: Optional[str] = None
    llm_config: Optional[dict[str, Any]] = None
    max_steps: int = 20
    max_tool_call_concurrency: int = 4
    memory_size: Optional[int] = 200
    memory_chars: Optional[int] = None
    use_long_term_memory: bool = False
    long_term_memory: Optional[dict[str, Any]] = None
    agent_config: dict[str, Any] = {}
    output_validators: list[str] = []
    """Checks on the output, by registered name or import path, that may ask again (``validators``)."""
    max_output_retries: int = 1
    guardrails: dict[str, list[str]] = {}
    """This agent's input and output guardrails, by registered name or import path (``guardrails``)."""

    def __repr__(self) -> str:  # an own api_key in llm_config (or an inline agent's) is never shown
        from zagent.speckit.specs import spec_repr

        return spec_repr(self)


@attrs.define(repr=False, eq=False, kw_only=True, slots=False)
class CustomizeAgent(Agent):
    """An ``Agent`` built from an ``AgentSpec``; ``spec`` keeps the declaration."""

    spec: Optional[AgentSpec] = None

    @classmethod
    def from_dict(cls, data: Union[dict[str, Any], AgentSpec], kernel: "Kernel", *,
                  base_dir: Optional[str] = None, llm: Any = None) -> "CustomizeAgent":
        """Validate ``data`` (a ``ConfigError`` for unknown keys or types, duplicate names, inputs the prompt never
        uses, unknown tools or parse modes) and build the agent (``llm``: an instance replacing the spec's model)."""
        typed = data.get("output_type") if isinstance(data, dict) else None
        if isinstance(data, dict) and typed is not None and not isinstance(typed, str):  # a class: its path kept
            data = {**data, "output_type": type_path(typed) if is_output_type(typed) else repr(typed)}
        spec = data if isinstance(data, AgentSpec) else _convert_spec(data)
        output_type = None
        if spec.output_type is not None:
            output_type = typed if typed is not None and not isinstance(typed, str) else resolve(
                spec.output_type, key="output_type", kernel=kernel, base_dir=base_dir)
            spec = _typed_outputs(spec, output_type)
        _validate(spec, kernel)
        long_term = dict(spec.long_term_memory) if spec.long_term_memory is not None else None
        if long_term is not None:  # next to the spec file, not the cwd; any option named like a path
            for key in path_options(None, long_term):  # ``path`` and any key named like a path
                long_term[key] = check_spec_path(long_term[key], f"long_term_memory.{key}",
                                                 (".db", ".sqlite", ".sqlite3") if key == "path" else (),
                                                 kernel=kernel)
            embedder = long_term.get("embedder")  # code: only an object Python code gives, never a name or mapping
            if embedder is not None and not callable(getattr(embedder, "aembed", None)):
                raise ConfigError(f"agent {spec.name!r}: long_term_memory.embedder {str(embedder)[:80]!r} is not an "
                                  "embedder: an embedder is code, which a spec file cannot name; leave the key out, "
                                  "or give an object with aembed(texts) from Python code")
        ltm_name = (long_term or {}).get("name", "sqlite")
        if spec.use_long_term_memory and (not isinstance(ltm_name, str) or kernel.find("memory", ltm_name) is None):
            raise ConfigError(f"agent {spec.name!r}: long_term_memory name {ltm_name!r} is not a memory backend "
                              f"(registered: {', '.join(kernel.names('memory')) or 'none'}); is its plugin loaded?")
        agent_config = dict(spec.agent_config)
        check_rails(agent_config.get("rails"), "agent_config.rails")
        check_user_data_switches(agent_config, kernel.config, spec.name)
        if isinstance(agent_config.get("rails"), dict):  # an approver import path: resolved now, under the trust
            agent_config["rails"] = resolve_approver(agent_config["rails"], kernel)
        tools = resolve_tool_refs(kernel, spec.tools, base_dir=base_dir)
        if spec.agents:
            from .astool import resolve_agent_refs

            tools += [n for n in resolve_agent_refs(kernel, spec.agents, base_dir=base_dir) if n not in tools]
        if spec.title_format is not None:  # names only ({title}), checked now: docs/security.md, placeholders
            placeholders(spec.title_format, ("title",), f"title_format of agent {spec.name!r}")
        parse_mode = _parse_mode(spec)
        parse_func = (resolve(spec.parse_func, key="parse_func", kernel=kernel, base_dir=base_dir)
                      if spec.parse_func else None)
        action = CustomizeAction(
            kernel=kernel, name=spec.name, description=spec.description, prompt=spec.prompt or "",
            template=spec.prompt_template, tools=tools, inputs=list(spec.inputs), outputs=list(spec.outputs) or [TEXT],
            parse_mode=parse_mode, title_format=spec.title_format, parse_func=parse_func,
            max_steps=spec.max_steps, max_tool_call_concurrency=spec.max_tool_call_concurrency,
            tool_format=spec.tool_format)
        from .validators import check_retries, resolve_validators

        validators = resolve_validators(kernel, spec.output_validators, base_dir=base_dir)
        retries = check_retries(spec.max_output_retries, f"agent {spec.name!r}")
        from .guardrails import resolve_guardrails

        guardrails = resolve_guardrails(kernel, spec.guardrails, base_dir=base_dir)
        with spec_options(f"agent {spec.name!r}", kernel):  # the user's key goes only to the user's base URL
            return cls(kernel=kernel, output_validators=validators, max_output_retries=retries, guardrails=guardrails,
                       output_type=output_type, name=spec.name, description=spec.description, system_prompt=spec.system_prompt,
                       actions=[action], llm=llm if llm is not None else spec.llm, llm_config=spec.llm_config,
                       memory_size=spec.memory_size, memory_chars=spec.memory_chars, use_long_term_memory=spec.use_long_term_memory,
                       long_term_memory=long_term, agent_config=agent_config, spec=public_spec(spec),
                       memory_key=spec_memory_key(spec))

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"], kernel: "Kernel", *, trust: Any = None) -> "CustomizeAgent":
        """Read a JSON or YAML agent file. Import paths in it are refused unless trusted: ``trust=True``,
        ``Kernel(config={"trusted_imports": [...]})`` or a ``zagent.speckit.Trust`` (e.g. ``Trust.for_file(path)``
        for modules next to the file)."""
        from zagent.speckit import load_spec_file, spec_file

        p = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(p))
        with trusting(trust), spec_file(p):  # paths it names may lie next to it
            return cls.from_dict(load_spec_file(p), kernel, base_dir=folder)

    def to_dict(self) -> dict[str, Any]:
        """The declaration as plain data, without secrets (no API keys, tokens or clients)."""
        assert self.spec is not None
        data: dict[str, Any] = msgspec.to_builtins(self.spec)  # a Struct's builtins: a dict by field name
        data["llm_config"] = self.llm_config or {}
        data.pop("llm", None)
        if data.get("output_type"):  # its outputs come from the class again when the file is read
            data.pop("outputs", None)
        public: dict[str, Any] = public_data(data)  # no secrets at any depth (keys, auth headers, clients)
        return public

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write the declaration as JSON, or YAML (needs ``zagent[yaml]``) when the name ends in .yaml/.yml."""
        p = os.fspath(path)
        data = self.to_dict()
        if p.endswith((".yaml", ".yml")):
            try:
                import yaml  # type: ignore[import-untyped]
            except ImportError:
                raise ConfigError("saving YAML needs the extra: pip install 'zagent[yaml]'") from None
            text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        else:
            text = msgspec.json.format(msgspec.json.encode(data)).decode() + "\n"
        write_atomic(p, text)

    def prompt_preview(self, inputs: Optional[dict[str, Any]] = None) -> str:
        """The user prompt as the model would see it; missing inputs shown as ``{name}``."""
        action = self._declared_action()
        values = {n: (inputs or {}).get(n, "{" + n + "}") for n in action.input_spec.names}
        return action.render_prompt(values)

    def system_preview(self, inputs: Optional[dict[str, Any]] = None) -> str:
        """The system message: the agent's system prompt and the template's system section."""
        action = self._declared_action()
        values = {n: (inputs or {}).get(n, "{" + n + "}") for n in action.input_spec.names}
        section = action.render_turns(values)[0]
        return "\n\n".join(p for p in (self.system_prompt or "", section) if p)

    def _declared_action(self) -> CustomizeAction:
        """The default action, the ``CustomizeAction`` the spec declares (the one whose prompt is previewed)."""
        action = self.action()
        if not isinstance(action, CustomizeAction):
            raise ConfigError(f"agent {self.name!r}: action {action.name!r} is a {type(action).__name__}, not a "
                              "declared CustomizeAction, so it has no prompt to preview")
        return action


def _convert_spec(data: dict[str, Any]) -> AgentSpec:
    return convert_spec(data, AgentSpec, "agent spec")


def _typed_outputs(spec: AgentSpec, output_type: Any) -> AgentSpec:
    """``spec`` with the outputs of its ``output_type`` class (a ``ConfigError`` if it also declares others)."""
    from zagent.speckit.trust import NotImported

    if isinstance(output_type, NotImported):  # a command that only reads the spec
        return spec
    where = f"agent {spec.name!r}: output_type {spec.output_type!r}"
    fields = [msgspec.convert(f, Field) for f in fields_for(output_type, where)]
    if spec.outputs and list(spec.outputs) != fields:
        raise ConfigError(f"agent {spec.name!r}: give 'outputs' or 'output_type', not both (the class declares "
                          "the outputs)")
    return msgspec.structs.replace(spec, outputs=fields)


def _validate(spec: AgentSpec, kernel: "Kernel") -> None:
    where = f"agent {spec.name!r}"
    if bool(spec.prompt) == bool(spec.prompt_template):
        raise ConfigError(f"{where}: give exactly one of 'prompt' or 'prompt_template'")
    if spec.type != "customize":
        raise ConfigError(f"{where}: type {spec.type!r} is not 'customize'")
    inputs = zfields.compile_fields(list(spec.inputs))
    outputs = zfields.compile_fields(list(spec.outputs) or [TEXT])  # none declared: the reply's text
    clash = set(inputs.names) & set(outputs.names)
    if clash:
        raise ConfigError(f"{where}: {', '.join(sorted(clash))} declared both as input and output")
    used = _placeholders(spec)
    unused = [n for n in inputs.names if n not in used]
    chat_style = spec.prompt_template is not None and spec.prompt_template.get("style") == "chat"
    if unused and not chat_style:  # a chat template lists every input left out in the request turn
        raise ConfigError(f"{where}: input(s) {', '.join(unused)} never appear in the prompt; "
                          f"add {' '.join('{' + n + '}' for n in unused)} to it or remove them")
    mode = spec.parse_mode or _default_mode(spec)
    if kernel.find("parsers", mode) is None:
        raise ConfigError(f"{where}: unknown parse_mode {mode!r}; installed: {', '.join(kernel.names('parsers'))}")
    if mode == "custom" and not spec.parse_func:
        raise ConfigError(f"{where}: parse_mode 'custom' needs parse_func ('package.module:function')")


def _placeholders(spec: AgentSpec) -> set[str]:
    texts: list[str] = [spec.prompt or "", spec.system_prompt or ""]
    if spec.prompt_template:
        texts.extend(_strings(spec.prompt_template))
    return {m.group(1) for t in texts for m in _PLACEHOLDER.finditer(t)}


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _default_mode(spec: AgentSpec) -> str:
    """``title`` by default (``str`` without outputs); ``json`` when a template is used and an output is an
    object or array."""
    if _complex_outputs(spec):
        return "json"
    return "title" if spec.outputs else "str"


def _complex_outputs(spec: AgentSpec) -> list[str]:
    if not spec.prompt_template:
        return []
    return [f.name for f in spec.outputs if f.type in ("object", "array", "dict", "list", "json")]


def _parse_mode(spec: AgentSpec) -> str:
    """The mode the agent parses with: EvoAgentX's switch to ``json`` (with a warning) when a template's
    outputs include objects or arrays and the mode named is a text mode that cannot carry them."""
    if spec.parse_mode in ("title", "xml", "str") and _complex_outputs(spec):
        import logging

        logging.getLogger("zagent").warning(
            "agent %r: output(s) %s are objects or arrays, which parse_mode %r cannot carry; parsing as 'json' "
            "instead (set parse_mode 'json' to silence this)", spec.name, ", ".join(_complex_outputs(spec)),
            spec.parse_mode)
        return "json"
    return spec.parse_mode or _default_mode(spec)


def build_customize(spec: dict[str, Any], kernel: "Kernel") -> CustomizeAgent:
    """The ``customize`` agent-type factory used by ``kernel.agent(dict)``."""
    return CustomizeAgent.from_dict(spec, kernel)
