"""Whose long-term memory an agent built from a spec uses (``spec_memory_key``): an untrusted spec's namespace is
``name@digest`` (its file or content and model endpoint); trusted agents keep their name (docs/security.md, 9)."""

from __future__ import annotations

import hashlib
from typing import Any, Optional

import msgspec


def spec_memory_key(spec: Any) -> Optional[str]:
    """The namespace root of an agent built from ``spec`` (an ``AgentSpec``), or ``None`` (its name) when
    the spec is trusted or keeps no long-term memory."""
    from zagent.speckit import current_spec_file, current_trust

    if not spec.use_long_term_memory or current_trust().everything:
        return None
    source = current_spec_file()
    config = spec.llm_config or {}
    identity = ["file", source] if source else ["spec", msgspec.to_builtins(spec)]
    destination: list[Any] = [str(config.get("base_url") or ""), bool(config.get("api_key")),
                              spec.llm or config.get("model")]
    if config.get("models") is not None:  # a fallback chain's entries bring their own endpoints
        destination.append(_endpoints(config["models"]))
    raw = msgspec.json.encode([identity, destination], order="sorted", enc_hook=repr)
    # a ``/`` would split the namespace's agent half at it (``Wallet/x@...`` filed under agent ``Wallet``)
    return f"{spec.name.replace('/', '%2F')}@{hashlib.sha256(raw).hexdigest()[:16]}"


def _endpoints(value: Any) -> Any:
    """``value`` (a fallback chain's ``models``) with each ``api_key`` only as whether it is there."""
    if isinstance(value, dict):
        return {str(k): bool(v) if k == "api_key" else _endpoints(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_endpoints(v) for v in value]
    return value
