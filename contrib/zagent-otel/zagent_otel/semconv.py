"""How a zagent span becomes an OpenTelemetry span: name, kind and attributes (GenAI conventions); pure functions
of event data, no OpenTelemetry import.

Span names: ``invoke_agent {agent}``, ``chat {model}`` (kind CLIENT), ``execute_tool {tool}``,
``invoke_workflow {name}``, ``step``/``node``/``turn``/``skill``. The top span holds the run id as
``gen_ai.conversation.id``.
"""

from __future__ import annotations

import re
from typing import Any, Optional
from urllib.parse import urlsplit

CLIENT, INTERNAL = "client", "internal"
_RAISED = re.compile(r"raised ([A-Za-z_][\w.]{0,59}):")
#: llm_start data that varies per call, as request attributes (set on each span, not cached)
REQUEST_KEYS = {"temperature": "gen_ai.request.temperature", "top_p": "gen_ai.request.top_p",
                "max_tokens": "gen_ai.request.max_tokens"}


def start(kind: str, data: dict[str, Any], agent: Optional[str], run_id: Optional[str],
          top: bool = True) -> tuple[str, str, dict[str, Any]]:
    """``(span name, span kind, attributes)`` known when the span starts.

    The run id (``gen_ai.conversation.id``) goes on the top span of a trace only: the
    spans inside it share its trace. Fewer attributes, less to validate per span.
    """
    attrs: dict[str, Any] = {}
    if run_id and top:
        attrs["gen_ai.conversation.id"] = run_id
    if kind == "llm":
        provider, model = split_model(str(data.get("model") or ""), data.get("provider"))
        attrs.update({"gen_ai.operation.name": "chat", "gen_ai.provider.name": provider,
                      "gen_ai.request.model": model})
        if agent:
            attrs["gen_ai.agent.name"] = agent
        attrs.update(server(data.get("server")))
        return f"chat {model}", CLIENT, attrs
    if kind == "tool":
        name = str(data.get("tool") or "?")
        attrs.update({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.type": "function"})
        if data.get("description"):
            attrs["gen_ai.tool.description"] = str(data["description"])[:1000]
        if data.get("call_id"):
            attrs["gen_ai.tool.call.id"] = str(data["call_id"])
        return f"execute_tool {name}", INTERNAL, attrs
    if kind == "run":
        name = str(agent or data.get("action") or "agent")
        attrs.update({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name})
        if data.get("action") and data["action"] != name:  # the action run, when the agent is named otherwise
            attrs["zagent.action"] = str(data["action"])
        return f"invoke_agent {name}", INTERNAL, attrs
    if kind in ("workflow", "groupchat"):
        name = str(data.get("workflow") or agent or kind)
        attrs.update({"gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": name})
        return f"invoke_workflow {name}", INTERNAL, attrs
    if kind == "step":
        attrs["zagent.step"] = int(data.get("step") or 0)
        return f"step {data.get('step', '?')}", INTERNAL, attrs
    if kind == "node":
        attrs.update({"zagent.workflow.node": str(data.get("node")), "zagent.workflow.attempt": int(data.get("attempt") or 1)})
        return f"node {data.get('node')}", INTERNAL, attrs
    if kind == "turn":
        speaker = str(data.get("speaker") or "?")
        attrs.update({"zagent.groupchat.round": int(data.get("round") or 0), "zagent.groupchat.speaker": speaker,
                      "gen_ai.agent.name": speaker})
        return f"turn {speaker}", INTERNAL, attrs
    if kind == "skill":
        return "skill match", INTERNAL, attrs
    return kind, INTERNAL, attrs


def end(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """Attributes known when the span ends (usage, finish reason, tool state, skill chosen)."""
    attrs: dict[str, Any] = {}
    usage = data.get("usage") or {}
    if kind == "llm":
        attrs["gen_ai.usage.input_tokens"] = int(data.get("input_tokens") or usage.get("input_tokens") or 0)
        attrs["gen_ai.usage.output_tokens"] = int(data.get("output_tokens") or usage.get("output_tokens") or 0)
        if data.get("finish_reason"):
            attrs["gen_ai.response.finish_reasons"] = [str(data["finish_reason"])]
        if data.get("response_model"):
            attrs["gen_ai.response.model"] = str(data["response_model"])
        if data.get("response_id"):
            attrs["gen_ai.response.id"] = str(data["response_id"])
    elif usage.get("llm_calls") and kind != "step":  # a step's tokens are its chat span's: not repeated
        attrs["gen_ai.usage.input_tokens"] = int(usage.get("input_tokens") or 0)
        attrs["gen_ai.usage.output_tokens"] = int(usage.get("output_tokens") or 0)
    if kind == "tool" and data.get("state"):
        attrs["zagent.tool.state"] = str(data["state"])
    if kind == "skill" and data.get("skill"):
        attrs["zagent.skill.name"] = str(data["skill"])
    for key in ("status", "stopped_by"):
        if data.get(key) is not None:
            attrs[f"zagent.{key}"] = str(data[key])
    return attrs


def error_type(data: dict[str, Any]) -> str:
    """A low-cardinality ``error.type``: the tool state, the exception's type, or ``_OTHER``."""
    if data.get("outcome") == "cancelled":
        return "cancelled"
    state = data.get("state")
    if state in ("timeout", "blocked"):
        return str(state)
    text = str(data.get("error") or "")
    raised = _RAISED.search(text)  # a tool's "tool 'x' raised RuntimeError: ...": the exception's class
    if raised:
        return raised.group(1)
    head = text.split(":", 1)[0]
    return head if head and head.replace(".", "").replace("_", "").isalnum() and len(head) < 60 else "_OTHER"


def request_attributes(data: dict[str, Any]) -> dict[str, Any]:
    """The per-call ``gen_ai.request.*`` settings of an ``llm_start`` (temperature, top_p, max_tokens)."""
    return {attr: data[key] for key, attr in REQUEST_KEYS.items() if isinstance(data.get(key), (int, float))}


def server(url: Any) -> dict[str, Any]:
    """``server.address`` and ``server.port`` of a model server's URL (the scheme's port when none is given)."""
    if not isinstance(url, str) or not url:
        return {}
    try:
        parts = urlsplit(url)
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    except ValueError:
        return {}
    if not parts.hostname:
        return {}
    return {"server.address": parts.hostname, **({"server.port": port} if port else {})}


def split_model(name: str, provider: Any = None) -> tuple[str, str]:
    """``("openai", "gpt-4o")`` from ``"openai:gpt-4o"`` (the provider named by the event wins)."""
    head, sep, rest = name.partition(":")
    if sep:
        return str(provider or head), rest
    return str(provider or "unknown"), name
