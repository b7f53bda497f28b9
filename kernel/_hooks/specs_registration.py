"""Hook specifications, registration hooks: ``zagent_register_*``, called once per Kernel at start-up.

Exported from ``zagent.hookspecs`` (read its docstring for how the kernel calls hooks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .markers import hookspec

if TYPE_CHECKING:  # pragma: no cover - types only
    from ..kernel import Kernel

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
    A ``zagent.agentkit.units.Unit`` carries ``local`` (a coroutine function for this
    process) and, when it can travel, ``runner`` (an import path) and ``payload()``
    (plain data): a remote executor ships those to a worker, which awaits
    ``zagent.agentkit.units.run_unit(its_kernel, runner, payload)``. Raise
    ``zagent.agentkit.units.UnitLost`` when a worker died (the driver retries the unit)
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
def zagent_register_batch_drivers(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register the batch driver that ``Kernel.batch`` / ``Kernel.abatch`` hand their work to.

    ``register(name, driver, *, override=False)``; ``kernel.abatch(target, inputs, **options)``
    returns ``await driver(kernel, target, inputs, **options)`` of the driver named ``"default"``.
    The built-in batch plugin (``zagent.plugins.batch``) registers it; a kernel without one
    answers ``Kernel.batch`` with a ``ConfigError`` naming that plugin. Keep the registration
    cheap: import the driver's module when it is first called.

    :param register: adds one batch driver.
    :param kernel: the starting kernel.

    Example::

        def zagent_register_batch_drivers(register):
            async def driver(kernel, target, inputs, **options):
                from mypkg.batch import run
                return await run(kernel, target, inputs, **options)
            register("default", driver, override=True)
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
