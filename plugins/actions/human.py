"""Human agents (agent type ``human``): a person answers instead of a model.

A ``HumanAction`` hands a ``HumanRequest`` to a responder (``agent.responder``, else ``Kernel(config={"human_responder":
fn})``, else the CLI's ``terminal_responder``): async, or sync in a worker thread (it may block). It returns the
outputs, a dict by name (a string for one output), checked as a model's reply is. None found: ``ConfigError``.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, cast

import attrs

from zagent.agentkit import fields as zfields
from zagent.agentkit.placeholders import placeholders
from zagent.errors import ConfigError, ParseError
from zagent import LLM
from zagent.types import Message, Usage

from .action import Action
from .actionrun import ActionOutput
from .agent import Agent

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel, RunContext

CONFIG_KEY = "human_responder"


@attrs.frozen
class HumanRequest:
    """What a person is asked: the agent, the rendered prompt, the inputs and the outputs wanted."""

    agent: str
    prompt: str
    inputs: dict[str, Any]
    outputs: tuple[Any, ...]
    run_id: str
    required: tuple[str, ...] = ()


@attrs.define(repr=False, eq=False, kw_only=True, slots=False)
class HumanAction(Action):
    """Renders the prompt and asks the agent's responder for the outputs."""

    owner: Any = None

    def render_prompt(self, inputs: dict[str, Any]) -> str:
        values = {n: inputs.get(n, "") for n in self.input_spec.names}
        if not self.prompt:
            return ""
        return placeholders(self.prompt, values, f"prompt of human agent {self.name!r}").render(values)

    async def aexecute(self, llm: Any, inputs: dict[str, Any], *, ctx: "RunContext[Any]",
                       system_prompt: Optional[str] = None) -> ActionOutput:
        prompt = self.render_prompt(inputs)
        request = HumanRequest(agent=getattr(self.owner, "name", self.name), prompt=prompt, inputs=dict(inputs),
                               outputs=tuple(self.output_spec.fields), run_id=ctx.run_id,
                               required=self.output_spec.required)
        responder = _responder(self.owner, ctx.kernel)
        answer = responder(request) if asyncio.iscoroutinefunction(responder) else \
            await asyncio.to_thread(responder, request)
        if hasattr(answer, "__await__"):
            answer = await answer
        values = self._values(answer)
        try:
            output = zfields.convert(values, self.output_spec, raw=str(answer))
        except ParseError as exc:
            raise ParseError(f"the answer of human agent {request.agent!r} does not fit its outputs: {exc}",
                             raw=str(answer)) from None
        raw = str(answer)
        return ActionOutput(output=output, raw=raw, steps=0, prompt=prompt, usage=Usage(), tool_results=[],
                            messages=[Message(role="user", content=prompt), Message(role="assistant", content=raw)])

    def _values(self, answer: Any) -> dict[str, Any]:
        names = self.output_spec.names
        if isinstance(answer, dict):
            return answer
        if isinstance(answer, str) and len(names) == 1:
            return {names[0]: answer}
        raise ConfigError(f"a responder for human agent {getattr(self.owner, 'name', self.name)!r} returned "
                          f"{type(answer).__name__}; return a dict keyed by output name ({', '.join(names)})"
                          + (" or a string" if len(names) == 1 else ""))


@attrs.define(repr=False, eq=False, kw_only=True, slots=False)
class HumanAgent(Agent):
    """An ``Agent`` whose one action is answered by a person (see the module docstring)."""

    responder: Optional[Callable[[HumanRequest], Any]] = None

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        for action in self._actions.values():
            if isinstance(action, HumanAction):
                action.owner = self

    async def _extract(self, action: Action, ctx: "RunContext[Any]", missing: Sequence[str]) -> dict[str, Any]:
        raise ConfigError(f"human agent {self.name!r} needs input(s) {', '.join(missing)}, which were not given; "
                          "pass them as inputs (a person's agent does not guess them from earlier messages)")


def _responder(agent: Any, kernel: "Kernel") -> Callable[[HumanRequest], Any]:
    found = getattr(agent, "responder", None) or kernel.config.get(CONFIG_KEY)
    if found is None:
        raise ConfigError(
            f"human agent {getattr(agent, 'name', '?')!r} has no responder: set agent.responder = fn, or "
            f"Kernel(config={{{CONFIG_KEY!r}: fn}}) where fn(request) returns the outputs; the zagent command "
            "line asks on the terminal")
    if not callable(found):
        raise ConfigError(f"{CONFIG_KEY} must be callable, got {type(found).__name__}")
    return cast(Callable[[HumanRequest], Any], found)  # the app's function (an attribute or a config value)


def terminal_responder(request: HumanRequest) -> dict[str, Any]:
    """Show the request on stderr and read one line per output from stdin (an empty line skips an optional one).
    The prompt, names and descriptions come from a spec: their control characters are shown escaped."""
    from zagent.agentkit.transcripts import turn_text
    from zagent.plugins.cliterminal import SafeStream

    err = SafeStream(sys.stderr)
    print(f"\n== {request.agent} asks you ({request.run_id}) ==", file=err)
    if request.prompt:  # indented: a line of it (model text) cannot fake the "== ... asks you ==" header or a label
        print(turn_text("  ", request.prompt), file=err)
    answers: dict[str, Any] = {}
    for field in request.outputs:
        required = field.name in request.required
        label = f"{field.name} ({field.type}{'' if required else ', optional'})"
        if field.description:
            label += f" - {field.description}"
        print(f"{label}: ", end="", file=err, flush=True)
        line = sys.stdin.readline()
        if not line:
            raise ConfigError(f"human agent {request.agent!r}: stdin closed before {field.name!r} was answered")
        text = line.rstrip("\n")
        if text or required:
            answers[field.name] = text
    return answers


_SPEC_KEYS = {"type", "name", "description", "prompt", "inputs", "outputs", "memory_size"}


def build_human(spec: dict[str, Any], kernel: "Kernel") -> HumanAgent:
    """The ``human`` agent-type factory used by ``kernel.agent(dict)``."""
    if not isinstance(spec, dict):
        raise ConfigError(f"a human agent spec must be a mapping, got {type(spec).__name__}")
    unknown = sorted(k if isinstance(k, str) else repr(k) for k in set(spec) - _SPEC_KEYS)  # YAML's 1: or yes:
    if unknown:
        raise ConfigError(f"human agent {spec.get('name')!r}: unknown key(s) {', '.join(unknown)}; "
                          f"use {', '.join(sorted(_SPEC_KEYS))}")
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError("a human agent needs a non-empty 'name'")
    if not spec.get("outputs"):
        raise ConfigError(f"human agent {name!r}: declare at least one output (what the person answers)")
    for key, kind in (("inputs", list), ("outputs", list), ("prompt", str), ("description", str)):
        if spec.get(key) is not None and not isinstance(spec[key], kind):
            raise ConfigError(f"human agent {name!r}: {key!r} must be a {'list of fields' if kind is list else 'text'}"
                              f", got {type(spec[key]).__name__}; write it as in examples/human_editor.json")
    from zagent.speckit.sizes import check_sizes

    check_sizes(spec, "human agent")  # memory_size is bounded like any spec count
    action = HumanAction(name=name, description=str(spec.get("description", "")), prompt=str(spec.get("prompt", "")),
                         inputs=list(spec.get("inputs") or []), outputs=list(spec["outputs"]))
    action.render_prompt({})  # the prompt's placeholders are checked now: names of inputs only (ConfigError)
    agent = HumanAgent(kernel=kernel, name=name, description=str(spec.get("description", "")), actions=[action],
                       llm=_no_model(), memory_size=spec.get("memory_size", 200))
    return agent


class _NoModel(LLM):
    """Stands in for the model a human agent never calls; calling it is a ``ConfigError``."""

    async def _acomplete(self, request: Any) -> Any:
        raise ConfigError("a human agent has no model: a person answers through its responder")


def _no_model() -> LLM:
    return _NoModel(provider="human", model="person")
