"""Who made a batch result: ``job_identity`` (a digest of what each item runs: the agent spec or workflow graph as
loaded, without secrets, and the model chosen for it) and ``inputs_digest`` (a digest of one item's inputs). Every
result carries both (``made_by``, ``inputs_digest``); a results file resumes only from its own records
(docs/batch.md, "Resume")."""

from __future__ import annotations

import hashlib
import os
from typing import Any

import msgspec

__all__ = ["inputs_digest", "job_identity"]


def _named(value: Any) -> str:
    """Code and other objects by where they live (``module:qualname``), never by their address in this process."""
    kind = value if callable(value) else type(value)
    return f"{getattr(kind, '__module__', '')}:{getattr(kind, '__qualname__', type(kind).__qualname__)}"


_sorted = msgspec.json.Encoder(order="sorted", enc_hook=_named).encode
_plain = msgspec.json.Encoder(enc_hook=_named).encode


def _digest(value: Any) -> str:
    """sha256 (first 32 hex digits) of ``value`` as JSON with sorted keys (in their order when keys of mixed types
    cannot sort: such a value may only fail to match, never match another)."""
    try:
        data = _sorted(value)
    except (TypeError, ValueError, msgspec.EncodeError):
        data = _plain(value)
    return hashlib.sha256(data).hexdigest()[:32]


def _pinned(payload: dict[str, Any]) -> bool:
    """Does ``payload`` name the model its items run on (a spec's ``llm`` or ``llm_config.model``, a graph's
    ``--model``)?"""
    if payload.get("llm"):
        return True
    spec = payload.get("spec")
    if not isinstance(spec, dict):
        return False
    config = spec.get("llm_config")
    return bool(spec.get("llm") or (isinstance(config, dict) and config.get("model")))


def inputs_digest(inputs: Any) -> str:
    """The digest of one item's inputs (its ``id`` apart): an item edited since its result was written runs again."""
    return _digest(inputs)


def job_identity(kernel: Any, target: Any, job: Any) -> str:
    """The digest of what each item of ``job`` (made from ``target``) runs: its runner and payload without the
    trust (a spec or graph without secrets, the ``--model``) and the default model when it names none; an agent
    object's definition (``astool``'s digest of its declaration, tools, prompt and settings); else the job's name
    and code."""
    payload = getattr(job, "payload", None)
    if isinstance(payload, dict):
        parts: dict[str, Any] = {"kind": "payload", "name": job.name, "runner": job.runner,
                                 "payload": {k: v for k, v in payload.items() if k not in ("trust", "inputs")}}
        if not _pinned(payload):  # its agents take the app's or the user's default model (ZAGENT_MODEL)
            parts["default_model"] = str(kernel.config.get("model") or os.environ.get("ZAGENT_MODEL") or "")
    elif hasattr(target, "aexecute"):
        from zagent.plugins.actions.astool import _definition  # the digest approvals of agents-as-tools bind to

        parts = {"kind": "agent", "type": _named(target), "name": str(getattr(target, "name", "")),
                 "definition": _definition(target)}
    else:
        parts = {"kind": "job", "name": job.name, "runner": job.runner, "local": _named(job.local)}
    return _digest(parts)
