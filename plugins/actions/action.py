"""``Action`` and ``CustomizeAction``: build a prompt → call the LLM → (run tools) → parse typed fields.

``CustomizeAction`` is the engine every declared agent runs on. One
``aexecute`` is a small loop, bounded by ``max_steps``:

1. ask the model (tools offered natively, or described in the prompt for
   models whose profile says ``native_tools=False``);
2. if it asked for tools, run them all through ``Kernel.arun_tools`` (rails,
   validation and timeouts apply; at most ``max_tool_call_concurrency`` at
   once) and feed the results back;
3. if it answered, parse the answer with the parser of ``parse_mode``; a
   reply that does not parse is re-asked once with the parser's repair prompt;
4. if it did neither, nudge it for an answer.

**Output strategy.** In ``json`` parse mode, a request that offers no tools
also asks for structured output (``response_format``: the JSON schema of the
output fields, titled with the action name) when the model's profile says
``json_schema_output=True`` (OpenAI's gpt-4o/4.1/5/o-series, Ollama, the
offline test model); the output instructions stay in the prompt, so the reply
is parsed the same way. A turn that offers tools (native or as text) stays
prompt-based: a forced schema would keep constrained-decoding servers from
calling tools, and text tool calls are not output JSON. Other profiles stay
prompt-based. Override per model when a server rejects ``response_format``:
``Kernel(config={"profiles": {"openai:my-model": {"json_schema_output": False}}})``
(``"openai:*"`` for every model of a provider) or ``k.llm(..., profile={...})``.

Past ``max_steps`` a ``NoAnswerError`` carries the whole trajectory. Work that
does not depend on the inputs (templates, output instructions, tool specs,
result types) is done once per action, not per call.

Reaches parsers (output modes, tool-call formats and the ``templates``
namespace), tools and providers through the kernel only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import attrs

from zagent.agentkit import fields as zfields
from zagent.errors import ConfigError, NoAnswerError, ParseError
from zagent.toolrun import with_unique_ids
from zagent.types import Message, ToolCall, ToolResult, Usage

from .toolmode import PromptTools, text_call_fallback

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel, RunContext
    from zagent.llm import LLM

NUDGE = ("You have not given a final answer yet. Stop calling tools unless you really need one more, "
         "and answer now in the requested output format.")


@attrs.define(repr=False, eq=False, slots=False)
class ActionOutput:
    """What one action run produced: the typed output, the raw reply and the trajectory."""

    output: Any
    raw: str
    messages: list[Message]
    tool_results: list[ToolResult]
    usage: Usage
    steps: int
    prompt: str


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

    async def aexecute(self, llm: "LLM", inputs: dict[str, Any], *, ctx: "RunContext",
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

    def execute(self, llm: "LLM", inputs: dict[str, Any], *, ctx: "RunContext", **kw: Any) -> ActionOutput:
        """Sync twin of ``aexecute`` (a subclass may override this instead of ``aexecute``)."""
        from zagent.sync import run_sync

        return run_sync(self.aexecute(llm, inputs, ctx=ctx, **kw))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} inputs={list(self.input_spec.names)} outputs={list(self.output_spec.names)}>"


@attrs.define(repr=False, eq=False, kw_only=True, slots=False)
class CustomizeAction(Action):
    """The prompt → LLM → tools → parse engine (see the module docstring).

    :ivar parse_mode: ``title``, ``json``, ``xml``, ``str``, ``custom`` or any registered mode.
    :ivar title_format: section heading format for ``title`` mode (``"## {title}"``).
    :ivar parse_func: for ``custom`` mode: ``parse_func(text) -> dict``.
    :ivar max_steps: LLM calls allowed before ``NoAnswerError`` (repairs not counted).
    :ivar max_tool_call_concurrency: tool calls run at once within one step.
    :ivar tool_format: text tool-call format for prompt mode (a registered parser name).
    :ivar template: a chat template dict (system, instruction, demonstrations, ...)
        used instead of ``prompt`` when given.
    """

    kernel: "Kernel"
    parse_mode: str = "title"
    title_format: Optional[str] = None
    parse_func: Optional[Callable[[str], dict]] = None
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
        self._prompt_tools: Optional[PromptTools] = None
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
        templates = self.kernel.parser("templates")
        sections = dict(self.template or {"instruction": self.prompt})
        style = sections.pop("style", "string")
        if style not in ("string", "chat"):
            raise ConfigError(f"action {self.name!r}: prompt_template style {style!r} is not 'string' or 'chat'")
        unknown = set(sections) - {"system", "instruction", "context", "constraints", "demonstrations", "titles"}
        if unknown:
            raise ConfigError(f"action {self.name!r}: unknown prompt_template section(s) {', '.join(sorted(unknown))}; "
                              "use system, instruction, context, constraints, demonstrations, titles, style")
        kind = templates.ChatTemplate if style == "chat" else templates.PromptTemplate
        return kind(**sections, inputs=self.input_spec, outputs=self.output_spec,
                    parser=self._parser, output_format=self._instructions)

    @property
    def chat_style(self) -> bool:
        return bool(self.template) and self.template.get("style") == "chat"

    def render_prompt(self, inputs: dict[str, Any]) -> str:
        """The user prompt for ``inputs``: the template's sections with the output format (the
        ``system`` section goes to the system message: ``render_turns``)."""
        return self.render_turns(inputs)[2]

    def render_turns(self, inputs: dict[str, Any]) -> tuple[str, list[Message], str]:
        """``(system section, demonstration turns, user prompt)`` for ``inputs``."""
        if self.chat_style:
            messages = self._prompt.render(inputs)
            system = messages[0].content if messages and messages[0].role == "system" else ""
            turns = messages[1:-1] if system else messages[:-1]
            return system, list(turns), messages[-1].content
        system, user = self._prompt.render_parts(inputs)
        return system, [], user

    def offered_tools(self) -> list[Any]:
        return [t for t in self._tools if t.is_available()]

    async def aexecute(self, llm: "LLM", inputs: dict[str, Any], *, ctx: "RunContext",
                       system_prompt: Optional[str] = None, history: Sequence[Message] = ()) -> ActionOutput:
        section, demos, prompt = self.render_turns(inputs)
        tools = self.offered_tools()
        native = bool(tools) and llm.profile.native_tools
        prompt_tools = self._prompt_tools_for(tools) if tools and not native else None
        system = "\n\n".join(p for p in (system_prompt or "", section) if p)
        messages = self._first_messages(prompt, system, [*demos, *history], prompt_tools)
        run = _Run(self, llm, ctx, messages, tools if native else None, prompt_tools,
                   self.response_format(llm, bool(tools)))
        scope = ctx.offered_tools
        ctx.offered_tools = frozenset(t.name for t in tools)  # the kernel blocks any other name
        try:
            return await run.loop(prompt)
        finally:
            ctx.offered_tools = scope

    def _first_messages(self, prompt: str, system_prompt: Optional[str], history: Sequence[Message],
                        prompt_tools: Optional[PromptTools]) -> list[Message]:
        messages: list[Message] = []
        system = system_prompt or ""
        if prompt_tools is not None:
            system = f"{system}\n\n{prompt_tools.section}".strip()
        if system:
            messages.append(Message(role="system", content=system))
        messages.extend(history)
        messages.append(Message(role="user", content=prompt))
        return messages

    def _prompt_tools_for(self, tools: list[Any]) -> PromptTools:
        if self._prompt_tools is None or self._prompt_tools.names != tuple(t.name for t in tools):
            self._prompt_tools = PromptTools(self.kernel.parser(self.tool_format), tools)
        return self._prompt_tools

    def parse(self, text: str) -> Any:
        """Parse a final reply into the output Struct (no repair)."""
        return self._parser.parse_typed(text, self.output_spec, **self._parse_options)


@attrs.define(repr=False, eq=False, slots=False)
class _Run:
    """The state of one ``CustomizeAction.aexecute`` call (never shared between calls)."""

    action: CustomizeAction
    llm: "LLM"
    ctx: "RunContext"
    messages: list[Message]
    native_tools: Optional[list[Any]]
    prompt_tools: Optional[PromptTools]
    response_format: Optional[dict[str, Any]] = None
    tool_results: list[ToolResult] = attrs.field(factory=list)
    usage: Usage = attrs.field(factory=Usage)

    async def loop(self, prompt: str) -> ActionOutput:
        action, kernel = self.action, self.action.kernel
        events = kernel.hooks.active("zagent_event")
        output_spec = action._output_hint  # built once per action
        for step in range(1, action.max_steps + 1):
            if events:
                await self.ctx.aemit("step_start", step=step, action=action.name)
            completion = await self.llm.asend(self.llm.request(
                self.messages, tools=self.native_tools, response_format=self.response_format,
                output_spec=output_spec), self.ctx)
            self.usage = self.usage + completion.usage
            reply = completion.message
            if self.native_tools and not reply.tool_calls and self.llm.profile.text_tool_fallback:
                reply = text_call_fallback(action.kernel.parser(action.tool_format), reply, self.native_tools,
                                           self.messages)
            reply = _unique_ids(reply)  # each result must find its own call
            calls, errors, text = self._tool_calls(reply)
            if calls or errors:
                self.messages.append(reply)
                await self._run_tools(calls, errors)
                if events:
                    await self.ctx.aemit("step_end", step=step, action=action.name, tools=[c.name for c in calls])
                continue
            self.messages.append(reply)
            if events:
                await self.ctx.aemit("step_end", step=step, action=action.name, answered=bool(text.strip()))
            if not text.strip():
                self.messages.append(Message(role="user", content=NUDGE))
                continue
            output = await self._parse(text)
            return ActionOutput(output=output, raw=text, messages=self.messages, tool_results=self.tool_results,
                                usage=self.usage, steps=step, prompt=prompt)
        raise NoAnswerError(
            f"action {action.name!r} gave no final answer within max_steps={action.max_steps}; raise max_steps, "
            "or check the trajectory (error.trajectory) for a tool that keeps failing",
            trajectory=self.messages, limit="max_steps")

    def _tool_calls(self, reply: Message) -> tuple[list[ToolCall], list[str], str]:
        if self.prompt_tools is None:
            return list(reply.tool_calls), [], reply.content or ""
        calls, errors, text = self.prompt_tools.extract(reply.content or "")
        return with_unique_ids(calls), errors, text

    async def _run_tools(self, calls: list[ToolCall], errors: list[str]) -> None:
        results = await self.action.kernel.arun_tools(
            calls, self.ctx, max_concurrency=self.action.max_tool_call_concurrency) if calls else []
        self.tool_results.extend(results)
        if self.prompt_tools is None:
            self.messages.extend(r.to_message() for r in results)
        else:
            self.messages.append(self.prompt_tools.results_message(results, errors))

    async def _parse(self, text: str) -> Any:
        action = self.action
        try:
            return action.parse(text)
        except ParseError:
            if not action.repair:
                raise
        values = await action._parser.aparse_with_repair(
            text, action.output_spec, self.llm, self.ctx, **action._parse_options)
        return zfields.convert(values, action.output_spec, raw=text)


def _unique_ids(reply: Message) -> Message:
    """The reply with a unique id on each native tool call (a server may send none, empty or repeated ones)."""
    if not reply.tool_calls:
        return reply
    calls = with_unique_ids(list(reply.tool_calls))
    if all(a is b for a, b in zip(calls, reply.tool_calls)):
        return reply
    import msgspec

    return msgspec.structs.replace(reply, tool_calls=calls)
