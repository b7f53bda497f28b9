"""``Action`` and ``CustomizeAction``: build a prompt → call the LLM → (run tools) → parse typed fields.

``CustomizeAction`` runs every declared agent: at most ``max_steps`` model calls (tools through ``Kernel.arun_tools``,
a reply that does not parse repaired once), else ``NoAnswerError`` with the trajectory. ``TEMPLATE_SECTIONS``: what a
``prompt_template`` may hold (docs/security.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional, Sequence

import attrs

from zagent.agentkit import fields as zfields
from zagent.agentkit.toolloop import Offer, ToolLoop, check_tool_format
from zagent.errors import ConfigError
from zagent.types import Message, Usage

from .actionrun import FORMAT_TURN, ActionOutput, ActionRun

if TYPE_CHECKING:  # pragma: no cover
    from zagent import LLM, Kernel, RunContext, Tool

TEMPLATE_SECTIONS = frozenset({"system", "instruction", "context", "constraints", "demonstrations", "titles"})

#: every key of a ``prompt_template`` mapping: the sections and ``style`` (``string`` or ``chat``)
TEMPLATE_KEYS = TEMPLATE_SECTIONS | {"style"}


@attrs.define(repr=False, eq=False, kw_only=True, slots=False)
class Action:
    """A unit of work: name, description, prompt, tools, input and output field specs.

    Subclasses implement ``aexecute``; ``execute`` is its sync twin. ``inputs``
    and ``outputs`` are field declarations (``zagent.Field`` or dicts), compiled
    once; required inputs are those without a default.
    """

    name: str
    description: str = ""
    prompt: str = ""
    tools: Sequence[str] = ()
    inputs: Any = attrs.field(factory=list)
    outputs: Any = attrs.field(factory=list)

    def __attrs_post_init__(self) -> None:
        self.input_spec = zfields.compile_fields(self.inputs or [])
        self.output_spec = zfields.compile_fields(self.outputs or [])

    @property
    def required_inputs(self) -> tuple[str, ...]:
        return self.input_spec.required

    def missing_inputs(self, given: dict[str, Any]) -> list[str]:
        return [n for n in self.required_inputs if given.get(n) in (None, "")]

    async def aexecute(self, llm: "LLM", inputs: dict[str, Any], *, ctx: "RunContext[Any]",
                       system_prompt: Optional[str] = None) -> ActionOutput:
        """Run the action. Subclasses override this, or only the sync ``execute``.

        A subclass that overrides only ``execute`` has it run in a worker thread
        (it may block); what it returns is the output (an ``ActionOutput`` is
        passed through as it is).
        """
        if type(self).execute is Action.execute:
            raise TypeError(f"{type(self).__name__} (action {self.name!r}) implements neither aexecute nor execute; "
                            "override one of them (async def aexecute(self, llm, inputs, *, ctx, system_prompt=None) "
                            "or def execute(self, llm, inputs, *, ctx, **kw))")
        import asyncio

        out = await asyncio.to_thread(self.execute, llm, inputs, ctx=ctx, system_prompt=system_prompt)
        if isinstance(out, ActionOutput):
            return out
        return ActionOutput(output=out, raw="" if out is None else str(out), messages=[], tool_results=[],
                            usage=Usage(), steps=0, prompt="")

    def start(self, llm: "LLM", inputs: dict[str, Any], *, ctx: "RunContext[Any]",
              system_prompt: Optional[str] = None) -> Awaitable[ActionOutput]:
        """``aexecute``'s run as an awaitable, for a caller that awaits it at once (the agent): an action
        whose ``aexecute`` only wraps another coroutine returns that one, one coroutine less in the await
        chain of every wait. The default is ``aexecute`` itself."""
        return self.aexecute(llm, inputs, ctx=ctx, system_prompt=system_prompt)

    def execute(self, llm: "LLM", inputs: dict[str, Any], *, ctx: "RunContext[Any]", **kw: Any) -> ActionOutput:
        """Sync twin of ``aexecute`` (a subclass may override this instead of ``aexecute``)."""
        from zagent import run_sync

        return run_sync(self.aexecute(llm, inputs, ctx=ctx, **kw))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} inputs={list(self.input_spec.names)} outputs={list(self.output_spec.names)}>"


@attrs.define(repr=False, eq=False, kw_only=True, slots=False)
class CustomizeAction(Action):
    """The prompt → LLM → tools → parse engine of declared agents.

    :ivar parse_mode: ``title``, ``json``, ``xml``, ``str``, ``custom`` or any registered mode.
    :ivar title_format: section heading format for ``title`` mode (``"## {title}"``).
    :ivar parse_func: for ``custom`` mode: ``parse_func(text) -> dict``.
    :ivar max_steps: LLM calls allowed before ``NoAnswerError`` (repairs not counted).
    :ivar max_tool_call_concurrency: tool calls run at once within one step.
    :ivar tool_format: text tool-call format for prompt mode (a registered parser name).
    :ivar template: a chat template dict (system, instruction, demonstrations, ...), used instead of ``prompt``.
    """

    kernel: "Kernel"
    parse_mode: str = "title"
    title_format: Optional[str] = None
    parse_func: Optional[Callable[[str], dict[str, Any]]] = None
    max_steps: int = 20
    max_tool_call_concurrency: int = 4
    tool_format: str = "tool_call"
    template: Optional[dict[str, Any]] = None
    repair: bool = True

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        if self.max_steps < 1:
            raise ConfigError(f"max_steps must be at least 1, got {self.max_steps}")
        self._parser = self.kernel.parser(self.parse_mode)
        self._parse_options = self._make_parse_options()
        self._instructions = self._parser.instructions(self.output_spec, **self._parse_options)
        self._prompt = self._compile_prompt()
        self._tools = [self.kernel.tool(n) for n in self.tools]
        self._output_hint = {"mode": self.parse_mode, "fields": list(self.output_spec.fields)}
        check_tool_format(self.kernel, self.tool_format, f"action {self.name!r}")
        self._tool_loop = ToolLoop(self.kernel, self.tool_format)
        self._format_later = bool(self._instructions.strip())  # every mode: a format next to tools fights them
        self._format_turn = FORMAT_TURN.format(instructions=self._instructions)
        self._schema_format: Optional[dict[str, Any]] = None

    def response_format(self, llm: "LLM", tools_offered: bool) -> Optional[dict[str, Any]]:
        """The structured-output request for ``llm`` (a JSON schema), or ``None`` to stay prompt-based."""
        if tools_offered or self.parse_mode != "json" or not self.output_spec.fields:
            return None
        if not llm.profile.json_schema_output:
            return None
        if self._schema_format is None:
            self._schema_format = {"title": self.name, **zfields.json_schema(self.output_spec)}
        return self._schema_format

    def _make_parse_options(self) -> dict[str, Any]:
        if self.parse_mode == "title" and self.title_format:
            return {"title_format": self.title_format}
        if self.parse_mode == "custom":
            if self.parse_func is None:
                raise ConfigError(f"action {self.name!r} uses parse_mode 'custom' but has no parse_func")
            return {"parse_func": self.parse_func}
        return {}

    def _compile_prompt(self) -> Any:
        """The prompt template, compiled once (through the kernel's ``templates`` namespace).

        ``style`` in the template picks the kind: ``string`` (default: one user turn) or ``chat``
        (a ``ChatTemplate``: demonstrations become real user/assistant turns before the request).
        Either way the ``system`` section is sent as a system message, after the agent's own."""
        templates = self.kernel.find("parsers", "templates")  # a namespace of template classes, not a parser
        if templates is None:
            raise ConfigError(f"action {self.name!r}: prompt templates come from the parsers plugin, which this "
                              "kernel has not loaded; add 'zagent.plugins.parsers' to its plugins")
        sections = dict(self.template or {"instruction": self.prompt})
        style = sections.pop("style", "string")
        if style not in ("string", "chat"):
            raise ConfigError(f"action {self.name!r}: prompt_template style {style!r} is not 'string' or 'chat'")
        unknown = set(sections) - TEMPLATE_SECTIONS
        if unknown:
            raise ConfigError(f"action {self.name!r}: unknown prompt_template section(s) {', '.join(sorted(unknown))}; "
                              f"use {', '.join(sorted(TEMPLATE_KEYS))}")
        kind = templates.ChatTemplate if style == "chat" else templates.PromptTemplate
        return kind(**sections, inputs=self.input_spec, outputs=self.output_spec,
                    parser=self._parser, output_format=self._instructions)

    @property
    def chat_style(self) -> bool:
        return self.template is not None and self.template.get("style") == "chat"

    def render_prompt(self, inputs: dict[str, Any]) -> str:
        """The user prompt for ``inputs``: the template's sections with the output format (the
        ``system`` section goes to the system message: ``render_turns``)."""
        return self.render_turns(inputs)[2]

    def render_turns(self, inputs: dict[str, Any], *, output_format: bool = True) -> tuple[str, list[Message], str]:
        """``(system section, demonstration turns, user prompt)`` for ``inputs``; ``output_format=False``
        leaves the output-format section out (the first prompt of a tool phase)."""
        sections = None if output_format else {"output_format": ""}
        if self.chat_style:
            messages = self._prompt.render(inputs, sections)
            system = messages[0].content if messages and messages[0].role == "system" else ""
            turns = messages[1:-1] if system else messages[:-1]
            return system, list(turns), messages[-1].content
        system, user = self._prompt.render_parts(inputs, sections)
        return system, [], user

    def offered_tools(self) -> list["Tool"]:
        return [t for t in self._tools if t.is_available()]

    async def aexecute(self, llm: "LLM", inputs: dict[str, Any], *, ctx: "RunContext[Any]",
                       system_prompt: Optional[str] = None, history: Sequence[Message] = ()) -> ActionOutput:
        return await self._begin(llm, inputs, ctx, system_prompt, history)

    def start(self, llm: "LLM", inputs: dict[str, Any], *, ctx: "RunContext[Any]",
              system_prompt: Optional[str] = None) -> Awaitable[ActionOutput]:
        if type(self).aexecute is not CustomizeAction.aexecute:  # a subclass's own aexecute runs
            return self.aexecute(llm, inputs, ctx=ctx, system_prompt=system_prompt)
        return self._begin(llm, inputs, ctx, system_prompt, ())

    def _begin(self, llm: "LLM", inputs: dict[str, Any], ctx: "RunContext[Any]", system_prompt: Optional[str],
               history: Sequence[Message]) -> Awaitable[ActionOutput]:
        """The run's first messages (rendered now, so bad inputs raise here) and its loop, to await."""
        tools = self.offered_tools()
        if tools and getattr(llm, "tools_probe_due", False):  # how the server takes tools: one probe, then known
            return self._probed(llm, inputs, ctx, system_prompt, history)
        format_later = self._format_later and bool(tools)
        section, demos, prompt = self.render_turns(inputs, output_format=not format_later)
        offer = self._tool_loop.offer(llm, tools)
        system = "\n\n".join(p for p in (system_prompt or "", section) if p)
        messages = self._first_messages(prompt, system, [*demos, *history], offer)
        run = ActionRun(self, llm, ctx, messages, offer, self.response_format(llm, bool(tools)),
                        format_due=format_later, prompt=prompt)
        return run.loop(prompt)

    async def _probed(self, llm: "LLM", inputs: dict[str, Any], ctx: "RunContext[Any]", system_prompt: Optional[str],
                      history: Sequence[Message]) -> ActionOutput:
        await self._tool_loop.prepare(llm)
        return await self._begin(llm, inputs, ctx, system_prompt, history)

    def _first_messages(self, prompt: str, system_prompt: Optional[str], history: Sequence[Message],
                        offer: Offer) -> list[Message]:
        messages: list[Message] = []
        system = offer.system_with_section(system_prompt or "")
        if system:
            messages.append(Message(role="system", content=system))
        messages.extend(history)
        messages.append(Message(role="user", content=prompt))
        return messages

    def parse(self, text: str) -> Any:
        """Parse a final reply into the output Struct (no repair)."""
        return self._parser.parse_typed(text, self.output_spec, **self._parse_options)
