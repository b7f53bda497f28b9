"""``WorkFlowGraph``: a workflow as data (msgspec Structs: ``WorkFlowNode``, ``WorkFlowEdge``, ``ConditionalEdge``,
``StateField``), saved atomically and loaded as JSON. Routers and custom reducers are import paths
(``"pkg.mod:func"``), imported only under the trust rules; in Python they may be callables, saved as their import
path."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal, Optional, Union

import msgspec
from zagent.errors import ConfigError
from zagent.agentkit.files import write_atomic
from zagent.speckit.specs import convert_spec
from zagent.types import Field

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

AgentRef = Union[str, dict[str, Any]]


def _goal_input() -> list[Field]:
    return [Field(name="goal", description="what the workflow must achieve")]


class WorkFlowNode(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """One step: what it does, what it reads and writes (by name), and its ``agents``, run in order (each reads the
    node's inputs and its own, an earlier agent's output of that name first; a chat agent also reads every earlier
    agent's output); ``retries`` overrides the executor's. A ``kind="interrupt"``
    node has no agents: it asks its ``question`` (``{name}``: input ``name``'s value) through ``zagent.interrupt``
    and its one output gets the answer."""

    name: str
    description: str = ""
    reason: str = ""
    inputs: list[Field] = []
    outputs: list[Field] = []
    agents: list[Any] = []
    retries: Optional[int] = None
    kind: Literal["agents", "interrupt"] = "agents"
    question: str = ""

    @property
    def input_names(self) -> list[str]:
        return [f.name for f in self.inputs]

    @property
    def output_names(self) -> list[str]:
        return [f.name for f in self.outputs]

    @property
    def required_inputs(self) -> list[str]:
        return [f.name for f in self.inputs if f.required and f.default is None]

    def __repr__(self) -> str:  # an own api_key in llm_config (or an inline agent's) is never shown
        from zagent.speckit.specs import spec_repr

        return spec_repr(self)


class WorkFlowEdge(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """``source`` runs before ``target`` (and usually hands it some outputs by name)."""

    source: str
    target: str


class ConditionalEdge(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """After ``source`` runs, ``router(values)`` (an import path or a callable; every value known, the source's
    fresh outputs on top) names the next node(s) among ``targets``, or ``None`` (go nowhere). A target leading back
    to ``source`` is a loop, taken at most ``max_loops`` times, then ``on_max_loops`` (the node fails when ``None``)."""

    source: str
    router: Any
    targets: list[str]
    max_loops: int = 0
    on_max_loops: Optional[str] = None


class StateField(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """A shared value several nodes may write; each write is merged with ``reducer``.

    ``reducer``: ``"replace"`` (last write wins), ``"append"`` (a list growing by
    each write; lists are extended), ``"merge"`` (dict update), or a custom
    ``reducer(old, new) -> value`` (import path or callable). ``default`` is the
    starting value.
    """

    name: str
    reducer: Any = "replace"
    default: Any = None


#: ``id(graph) -> (weak reference, real path)`` of graphs ``WorkFlowGraph.load`` read (see ``loaded_from``)
_SOURCES: dict[int, tuple[Any, str]] = {}


def loaded_from(graph: "WorkFlowGraph") -> Optional[str]:
    """The real path of the file ``WorkFlowGraph.load`` read ``graph`` from (``None``: built otherwise). Its inline
    agents are built under ``zagent.speckit.spec_file(path)``: the file's identity (e.g. their memory namespace), not
    their content's. Kept outside the Struct: a spec cannot claim another file's identity."""
    found = _SOURCES.get(id(graph))
    return found[1] if found is not None and found[0]() is graph else None


class WorkFlowGraph(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True, weakref=True):
    """A workflow (see the module docstring). ``validate()`` checks it; ``save``/``load`` use JSON."""

    goal: str
    name: str = "workflow"
    inputs: list[Field] = msgspec.field(default_factory=_goal_input)
    nodes: list[WorkFlowNode] = []
    edges: list[WorkFlowEdge] = []
    conditional_edges: list[ConditionalEdge] = []
    state: list[StateField] = []

    # -- look-ups -------------------------------------------------------------------

    def node(self, name: str) -> WorkFlowNode:
        for n in self.nodes:
            if n.name == name:
                return n
        raise ConfigError(f"workflow has no node {name!r}; its nodes: {', '.join(self.node_names) or 'none'}")

    @property
    def node_names(self) -> list[str]:
        return [n.name for n in self.nodes]

    @property
    def input_names(self) -> list[str]:
        return [f.name for f in self.inputs]

    def initial_nodes(self) -> list[str]:
        """Nodes whose required inputs are all workflow inputs."""
        given = set(self.input_names)
        return [n.name for n in self.nodes if set(n.required_inputs) <= given]

    def successors(self, name: str) -> list[str]:
        out = [e.target for e in self.edges if e.source == name]
        for c in self.conditional_edges:
            if c.source == name:
                out.extend(t for t in c.targets if t not in out)
        return out

    # -- checking -------------------------------------------------------------------

    def problems(self) -> list[Any]:
        """Every structural problem as ``Problem(code, message)`` (empty when valid)."""
        from .validate import find_problems

        return find_problems(self)

    def validate(self) -> "WorkFlowGraph":
        """Raise ``WorkFlowValidationError`` naming every problem; return ``self`` when valid."""
        from .errors import WorkFlowValidationError

        found = self.problems()
        if found:
            raise WorkFlowValidationError(found, f"workflow {self.name!r}")
        return self

    # -- files ----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Plain data (callable routers/reducers written as their import path)."""
        data: dict[str, Any] = msgspec.to_builtins(self, enc_hook=callable_path)  # a Struct: an object
        return data

    def to_json(self) -> str:
        """The graph as a file holds it: ``public_data`` (an inline agent's ``api_key`` and secret headers left out,
        URL passwords masked), as a saved agent is."""
        from zagent.agentkit.secrets import public_data

        return msgspec.json.format(msgspec.json.encode(public_data(self.to_dict()))).decode() + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "WorkFlowGraph":
        return convert_spec(data, cls, "workflow")

    def save(self, path: Union[str, os.PathLike[str]]) -> None:
        """Write JSON atomically (a temporary file renamed over ``path``)."""
        write_atomic(path, self.to_json())

    @classmethod
    def load(cls, path: Union[str, os.PathLike[str]]) -> "WorkFlowGraph":
        import weakref

        from zagent.speckit import load_spec_file

        graph = cls.from_dict(load_spec_file(path))
        key = id(graph)
        _SOURCES[key] = (weakref.ref(graph, lambda _ref: _SOURCES.pop(key, None)), os.path.realpath(os.fspath(path)))
        return graph

    def batch_job(self, kernel: "Kernel", llm: Optional[str] = None) -> Any:
        """What ``Kernel.batch(graph, inputs)`` runs: the whole graph once per item (``units.batch_job``)."""
        from .units import batch_job

        return batch_job(self, kernel, llm)

    def __repr__(self) -> str:
        return f"<WorkFlowGraph {self.name!r} nodes={len(self.nodes)} edges={len(self.edges)}>"


def callable_path(obj: Any) -> str:
    """The ``module:qualname`` import path of a function (``enc_hook`` for saving graphs)."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", "")
    if callable(obj) and module and qualname and "<" not in qualname:
        return f"{module}:{qualname}"
    raise ConfigError(f"cannot save {obj!r} in a workflow file: give routers and reducers as import paths "
                      "'package.module:function' (a lambda or nested function has none)")


def resolve_callable(ref: Any, what: str, kernel: Optional["Kernel"] = None) -> Any:
    """A callable from a callable or an import path ``pkg.mod:attr``; ``ConfigError`` otherwise.

    A path is imported only under the trust rules of ``zagent.speckit.trust`` (a workflow file is data):
    ``kernel.config["trusted_imports"]``, or the trust the caller set (the CLI: the file's folder)."""
    if callable(ref):
        return ref
    if not isinstance(ref, str) or ":" not in ref:
        raise ConfigError(f"{what} {ref!r} is neither a callable nor an import path 'package.module:function'")
    from zagent.speckit.trust import resolve

    obj = resolve(ref, key=what, kernel=kernel)
    if not callable(obj):
        raise ConfigError(f"{what} {ref!r} is not callable")
    return obj
