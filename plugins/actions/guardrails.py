"""A declared agent's own input and output guardrails: ``"guardrails": {"input": [...], "output": [...]}``.

``resolve_guardrails`` turns each entry (a callable ``fn(value, ctx)``, a registered name, a trusted import path)
into a callable, or raises a ``ConfigError`` naming it. They run before the kernel's hooks: docs/agents.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, cast

from zagent.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel, RunContext

__all__ = ["Guardrail", "resolve_guardrails"]

#: ``fn(value, ctx)``: ``None`` or a reason (a string or ``zagent.Deny``), or an awaitable of one
Guardrail = Callable[[Any, "RunContext[Any]"], object]

_WHERE = ("input", "output")


def resolve_guardrails(kernel: "Kernel", spec: Any, *, base_dir: Optional[str] = None) -> dict[str, list[Guardrail]]:
    """``spec`` (``{"input": [...], "output": [...]}``) as lists of callables; ``ConfigError`` naming a bad entry."""
    if not spec:
        return {}
    if not isinstance(spec, dict):
        raise ConfigError(f"guardrails must be an object {{\"input\": [...], \"output\": [...]}}, "
                          f"got {type(spec).__name__}")
    out: dict[str, list[Guardrail]] = {}
    for where, refs in spec.items():
        if where not in _WHERE:
            raise ConfigError(f"guardrails: unknown key {where!r}; use 'input' and 'output'")
        if not isinstance(refs, (list, tuple)):
            raise ConfigError(f"guardrails.{where} must be a list of functions or import paths")
        found = (_one(kernel, ref, f"guardrails.{where}[{i}]", base_dir) for i, ref in enumerate(refs))
        out[where] = [fn for fn in found if fn is not None]  # None: a dry resolve checked it, imported nothing
    return out


def _one(kernel: "Kernel", ref: Any, key: str, base_dir: Optional[str]) -> Optional[Guardrail]:
    if callable(ref):  # the spec's own function (spec values are untyped), or a registered or imported one below
        return cast(Guardrail, ref)
    registered = kernel.find("guardrails", ref) if isinstance(ref, str) else None
    if registered is not None:
        return cast(Guardrail, registered)
    if isinstance(ref, str) and ":" in ref:
        from zagent.speckit.trust import NotImported, resolve

        fn = resolve(ref, key=key, kernel=kernel, base_dir=base_dir)
        if isinstance(fn, NotImported):
            return None
        if not callable(fn):
            raise ConfigError(f"{key} {ref!r} is not a function this spec may import; trust the spec's file "
                              "(Trust.for_file) or register the guardrail")
        return cast(Guardrail, fn)
    raise ConfigError(f"{key} {ref!r} is neither a function, a registered guardrail nor an import path "
                      "'package.module:function'")
