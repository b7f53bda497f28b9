"""Hook specifications: the whole extension surface of zagent.

A plugin is any module, class or instance with functions named after these
hooks (``zagent_*``). The ``@zagent.hookimpl`` marker is optional; it is only
needed for ``tryfirst``/``trylast``. An implementation may accept any *subset*
of a hook's parameters, by name, and must never give a parameter a default
(pluggy would not pass it).

How the kernel calls hooks (pluggy has no async, so zagent settles it):

* **Registration hooks** (``zagent_register_*``) are plain functions, called
  once per ``Kernel`` when it starts (or when ``Kernel.add_plugin`` adds a
  plugin later). Each receives a ``register`` callable bound to the calling
  plugin, so clashes name both plugins. Names are unique per kind; a second
  registration of a name is an error unless it passes ``override=True``.
* **Rails** (``zagent_before_*`` / ``zagent_after_*``) run one after another
  in pluggy order (``tryfirst`` first, then last-registered first, then
  ``trylast``). Each sees the result of the ones before it, so rewrites
  compose. An implementation may return a value or an awaitable; the kernel
  awaits it. A rail that raises denies the call (fail closed) and the reason
  names the rail.
* **Events** (``zagent_event``): every implementation runs; awaitables are
  awaited; return values are ignored; an exception in an observer is logged
  and never breaks a run.

Plugins may own extension points too: a plugin with an attribute
``zagent_hookspecs`` (a module, a class or an import path holding
``@hookspec`` functions) has those specs added before any plugin's hooks are
checked, so implementations of them load in any order. A spec marked
``@zagent.registry.registry_hookspec(kind, noun=...)`` also declares a
registry kind, ``kernel.registries[kind]``, filled with the kernel's clash
checks (the groupchat plugin's ``zagent_register_speaker_selectors`` is one).

Argument types live in ``zagent.types`` (data) and ``zagent.context``
(``RunContext``); rails answer with ``zagent.Deny`` / ``zagent.Rewrite``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import pluggy

if TYPE_CHECKING:  # pragma: no cover - types only
    from .context import RunContext
    from .kernel import Kernel
    from .types import Completion, Event, LLMRequest, ToolCall, ToolResult

PROJECT = "zagent"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# ---------------------------------------------------------------------------
# Registration hooks: called once per Kernel at start-up.
# ---------------------------------------------------------------------------


@hookspec
def zagent_register_providers(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register LLM provider factories by name.

    ``register(name, factory, *, override=False)``. ``factory(model, **options)``
    returns a ``zagent.LLM``; ``kernel.llm("name:model", **options)`` calls it.
    Import heavy dependencies inside the factory, never at module level.

    :param register: adds one provider; raises ``PluginError`` on a bad name.
    :param kernel: the starting kernel (read ``kernel.config`` here if needed).

    Example::

        @zagent.hookimpl
        def zagent_register_providers(register):
            register("foo", lambda model, **opts: FooLLM(model=model, **opts))
    """


@hookspec
def zagent_register_parsers(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register output parsers and text tool-call formats by mode name.

    ``register(mode, parser, *, override=False)``. An *output parser* has
    ``instructions(fields, **options) -> str`` (the output-format section of a
    prompt), ``parse(text, fields, **options) -> dict`` and ``parse_typed(...)``
    (a msgspec Struct; both raise ``zagent.ParseError``), ``render(values,
    fields, **options) -> str`` (a reply in the format) and the repair path
    ``repair_prompt(raw, fields, error)`` / ``aparse_with_repair(text, fields,
    llm, ctx=None)``, all driven by the same ``list[zagent.Field]``.
    A *tool-call format* (for models without native function calling) has
    ``render_tools(tools) -> str``, ``parse_tool_calls(text) -> list[ToolCall]``,
    ``extract(text) -> (calls, errors, remaining_text)`` and ``feedback(errors)``.
    ``kernel.parser(mode)`` returns what was registered; ``kernel.parser("templates")``
    is the prompt-template namespace. Conformance suites:
    ``zagent.testing.parsers.ParserConformance`` / ``ToolCallFormatConformance``.

    :param register: adds one parser.
    :param kernel: the starting kernel.

    Example::

        def zagent_register_parsers(register):
            register("yaml", YamlParser())
    """


@hookspec
def zagent_register_tools(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register tools any agent of the kernel can use.

    ``register(tool_or_function, *, name=None, toolset=None, override=False,
    **tool_options)``: a ``zagent.Tool`` or a plain (sync or async) function,
    turned into a ``Tool`` whose JSON schema comes from its type hints and
    docstring. ``tool_options`` are ``Tool`` fields (``timeout``, ``available``,
    ``sensitive``...). A tool whose ``available()`` check fails is kept but not
    offered to models.

    :param register: adds one tool.
    :param kernel: the starting kernel.

    Example::

        def zagent_register_tools(register):
            def add(a: int, b: int) -> int:
                "Add two integers."
                return a + b
            register(add, toolset="math")
    """


@hookspec
def zagent_register_memory(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register memory backends by name.

    ``register(name, factory, *, override=False)``; ``kernel.memory(name, **options)``
    calls ``factory(**options)`` (the kernel closes what it handed out in
    ``Kernel.aclose``). A backend implements, per namespace (``"agent"`` or
    ``"agent/session"``): ``add(namespace, messages)``, ``last(namespace, n)``,
    ``search(namespace, text, limit=10, *, semantic=False, agent=, session=,
    role=, since=, until=)``, ``clear(namespace)``, ``namespaces()``,
    ``count(namespace=None)``, ``close()`` and the async twins ``aadd``,
    ``alast``, ``asearch``, ``aclear``, ``anamespaces``, ``acount``, ``aclose``.
    Built-ins: ``inprocess``, ``sqlite``, and ``checkpoints`` (a checkpoint store:
    ``save(run_id, step, state, kind=, metadata=)``, ``latest(run_id)``, ...;
    optionally ``asave_patch``, which the ReAct loop then uses to save each step's change).
    Conformance suites: ``zagent.testing.memory.MemoryBackendTests`` and
    ``zagent.testing.checkpoints.CheckpointStoreTests``.

    :param register: adds one backend.
    :param kernel: the starting kernel.

    Example::

        def zagent_register_memory(register):
            register("redis", lambda **options: RedisMemory(**options))
    """


@hookspec
def zagent_register_embedders(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register embedding providers for retrieval by meaning (optional).

    ``register(name, factory, *, override=False)``; ``factory(**options)`` returns
    an object with ``async aembed(texts: list[str]) -> list[list[float]]``.
    Without any, memory recall and tool retrieval fall back to full-text scoring.

    :param register: adds one embedder.
    :param kernel: the starting kernel.

    Example::

        def zagent_register_embedders(register):
            register("minilm", lambda **options: MiniLMEmbedder(**options))
    """


@hookspec
def zagent_register_agent_types(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register agent classes by type name, so ``kernel.agent(dict)`` builds any agent.

    ``register(type_name, factory, *, override=False)``; ``factory(spec, kernel)``
    receives the plain dict (``spec["type"] == type_name``) and returns an agent.

    :param register: adds one agent type.
    :param kernel: the starting kernel.

    Example::

        def zagent_register_agent_types(register):
            register("echo", lambda spec, kernel: EchoAgent(spec, kernel))
    """


@hookspec
def zagent_register_executors(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register executors by name: where units of work (a batch item, a workflow node run) run.

    ``register(name, factory, *, override=False)``; ``kernel.executor(name, **options)``
    calls ``factory(**options)``. An executor has ``async submit(unit) -> result``,
    ``name``, ``in_process`` (units run on the caller's kernel and loop),
    ``concurrency`` (units worth running at once, or ``None``) and ``async aclose()``.
    A ``zagent.executors.Unit`` carries ``local`` (a coroutine function for this
    process) and, when it can travel, ``runner`` (an import path) and ``payload()``
    (plain data): a remote executor ships those to a worker, which awaits
    ``zagent.executors.run_unit(its_kernel, runner, payload)``. Raise
    ``zagent.executors.UnitLost`` when a worker died (the driver retries the unit)
    and ``UnitFailed`` for a remote exception. Drivers keep all state (results,
    checkpoints): an executor never writes them. ``local`` (built in: awaits
    ``unit.local()``) is the default; ``kernel.config["executor"]`` or
    ``ZAGENT_EXECUTOR`` name another. Import heavy dependencies inside the factory.

    :param register: adds one executor factory.
    :param kernel: the starting kernel.

    Example::

        def zagent_register_executors(register):
            register("threads", lambda **options: ThreadExecutor(**options))
    """


@hookspec
def zagent_register_commands(cli: Any, kernel: "Kernel") -> None:
    """Add sub-commands to the ``zagent`` command line.

    ``cli.command(name, handler, help="...")`` returns an ``argparse`` parser to
    add arguments to; ``handler(args, kernel) -> int | None`` runs the command.
    Nested groups: ``cli.group(name, help=...)`` returns an object with the same
    ``command``/``group`` methods.

    :param cli: the command registry of this invocation.
    :param kernel: the kernel the CLI started.

    Called each time the ``zagent`` command starts (not by ``Kernel()``). A
    name already taken is refused with a warning naming both plugins; a hook
    that raises is reported and the rest of the CLI still works.

    Example::

        def zagent_register_commands(cli):
            p = cli.group("memory", help="inspect memories").command("list", list_memories)
            p.add_argument("--limit", type=int, default=20)
    """


# ---------------------------------------------------------------------------
# Rails: run in order, each seeing what the previous ones decided.
# ---------------------------------------------------------------------------


@hookspec
def zagent_before_tool_call(call: "ToolCall", ctx: "RunContext") -> Any:
    """Inspect a tool call before it runs; allow, deny or rewrite it.

    Runs for *every* tool call that goes through ``Kernel.arun_tool``, after the
    arguments were validated. Return ``None`` to allow, ``zagent.Deny(reason)``
    to block (the model is told ``reason``; later rails are not asked, so a
    human-approval rail never prompts for a call already denied), or
    ``zagent.Rewrite(arguments)`` to replace the arguments (validated again;
    later rails see the new call). May return an awaitable.

    :param call: the call, with decoded ``arguments``.
    :param ctx: the run's context: agent, run id, per-run ``stash`` for budgets.

    Example::

        def zagent_before_tool_call(call, ctx):
            if call.name == "shell":
                return zagent.Deny("shell commands are not allowed here")
    """


@hookspec
def zagent_after_tool_call(call: "ToolCall", result: "ToolResult", ctx: "RunContext") -> Any:
    """Inspect, redact or replace a tool's result before the model sees it.

    Runs after every tool call, whatever its state. Return ``None`` to keep the
    result or a new ``ToolResult`` to replace it (later rails see the new one).
    May return an awaitable.

    :param call: the call that ran (after any rewrite).
    :param result: its result.
    :param ctx: the run's context.

    A rail that raises, or returns anything but ``None``/``ToolResult``,
    withholds the result (state ``blocked``).

    Example::

        def zagent_after_tool_call(result):
            if "PRIVATE KEY" in result.content:
                return zagent.ToolResult(call_id=result.call_id, name=result.name,
                                         state="blocked", content="Error: result withheld")
    """


@hookspec
def zagent_before_llm_call(request: "LLMRequest", ctx: "RunContext") -> Any:
    """Inspect a model request before it is sent; allow, deny or replace it.

    Return ``None``, ``zagent.Deny(reason)`` (raises ``ToolBlocked`` in the
    caller) or a new ``LLMRequest``. May return an awaitable.

    :param request: messages, tool specs, options of this call.
    :param ctx: the run's context (``ctx.usage`` holds the run's tokens so far).

    Example::

        def zagent_before_llm_call(ctx):
            if ctx.usage.total_tokens > 100_000:
                return zagent.Deny("token budget spent")
    """


@hookspec
def zagent_after_llm_call(request: "LLMRequest", response: "Completion", ctx: "RunContext") -> Any:
    """Inspect a model reply: output rails, cost and token accounting.

    Return ``None`` or a replacement ``Completion``. For streamed calls it runs
    once, on the assembled reply. May return an awaitable.

    :param request: what was sent.
    :param response: the reply.
    :param ctx: the run's context.

    Example::

        def zagent_after_llm_call(response, ctx):
            ctx.stash["output_tokens"] = ctx.stash.get("output_tokens", 0) + response.usage.output_tokens
    """


# ---------------------------------------------------------------------------
# Observation and lifecycle.
# ---------------------------------------------------------------------------


@hookspec
def zagent_event(event: "Event") -> Any:
    """Observe what happens: ``run_start``/``run_end``, ``step_start``/``step_end``,
    ``tool_start``/``tool_end``, ``llm_start``/``llm_end`` and plugin-defined types.

    Start and end events of one piece of work share ``event.span_id``; ``event.parent_id``
    is the span they run in; end events carry ``duration``, ``outcome`` and ``usage``
    (``zagent.spans``, docs/hooks.md).

    Every implementation runs; return values are ignored; an awaitable is
    awaited; an exception is logged and swallowed (observers never break runs).
    Events carry summaries, never secrets or whole payloads.

    :param event: a ``zagent.Event``.

    Example::

        async def zagent_event(event):
            if event.type == "tool_end":
                print(event.data["tool"], event.data["state"])
    """


@hookspec
def zagent_run_end(result: Any, ctx: "RunContext") -> Any:
    """An agent's run ended with a result (it was not aborted and did not raise).

    Called by the ReAct loop with its ``ReActResult`` (``status``, ``content``,
    ``state``: the whole run, as the trajectory records it) and by declared
    agents with their ``AgentResult``. Every implementation runs, in order;
    awaitables are awaited (start a task for slow work, e.g. the skills
    plugin's automatic curation); an exception is logged and never changes
    the run's result. Not called when no plugin implements it.

    :param result: what the run returns to its caller.
    :param ctx: the run's context (run id, agent, ``agent_config``, usage).

    Example::

        def zagent_run_end(result, ctx):
            if getattr(result, "status", "") == "completed":
                finished.append(ctx.run_id)
    """


@hookspec
def zagent_kernel_start(kernel: "Kernel") -> None:
    """The kernel has started: every plugin's registration hooks ran (or this plugin was just added).

    Called once per kernel and plugin, like the registration hooks, right after
    them. The place to decide from ``kernel.config`` whether to observe at all:
    a plugin that only sometimes listens (a run log, tracing) adds its observer
    here with ``kernel.add_plugin(...)``, so kernels that do not want it pay
    nothing. An implementation that raises is reported in ``kernel.problems``
    (raised in strict mode), like a failed registration.

    :param kernel: the kernel that started.

    Example::

        def zagent_kernel_start(kernel):
            if kernel.config.get("audit"):
                kernel.add_plugin(AuditObserver(), name="audit.observer")
    """


@hookspec
def zagent_kernel_close(kernel: "Kernel") -> Any:
    """The kernel is closing: release connections, stop servers, flush files.

    Every implementation runs (errors are logged); awaitables are awaited.

    :param kernel: the kernel being closed.

    Example::

        def zagent_kernel_close(kernel):
            _pools.pop(id(kernel)).close()
    """
