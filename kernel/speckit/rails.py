"""The types of the rails settings an agent spec or ``config["rails"]`` may hold: ``check_rails`` raises a
``ConfigError`` naming the key, what it must be and what it got; keys it does not know pass (docs/rails.md).
The rails plugin checks ``Kernel(config={"rails": ...})`` with it (``zagent_check_config``), the agent plugins a
spec's ``rails``; ``check_user_data_switches``: settings of an untrusted spec that would open the user's data."""

from __future__ import annotations

from typing import Any, Callable, Optional

from ..errors import ConfigError

#: the skills plugin's matching thresholds when the app sets none (``config['skills']``); an untrusted spec's
#: ``agent_config.skills`` may raise them, never lower them (more of the user's skills in a stranger's prompt)
SKILL_THRESHOLDS = {"threshold": 0.35, "embedding_threshold": 0.5}


def whole_number(value: Any, low: int = 0, high: Optional[int] = None) -> bool:
    """``value`` is an ``int`` (not a ``bool``) from ``low`` to ``high`` (no upper bound when ``None``)."""
    return (isinstance(value, int) and not isinstance(value, bool) and value >= low
            and (high is None or value <= high))


def _names(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v))


def _limits(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and whole_number(n) for k, n in v.items())


def _approval(v: Any) -> bool:
    if v is None or isinstance(v, bool):
        return True
    return (isinstance(v, dict) and set(v) <= {"sensitive", "tools"}
            and isinstance(v.get("sensitive", True), bool) and _names(v.get("tools", [])))


_RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "allow_tools": (_names, "a list of tool names or patterns"),
    "deny_tools": (_names, "a list of tool names or patterns"),
    "redact": (_names, "a list of regular expressions"),
    "tool_budget": (_limits, "a mapping of tool pattern to a whole number of calls (>= 0)"),
    "tool_rpm": (_limits, "a mapping of tool pattern to a whole number of calls per minute (>= 0)"),
    "tool_rpm_wait": (lambda v: isinstance(v, bool), "true or false"),
    "usage_limits": (_limits, "a mapping of limit (requests, tool_calls, input_tokens, output_tokens, "
                              "total_tokens) to a whole number (>= 0)"),
    "redact_llm": (lambda v: isinstance(v, bool), "true or false"),
    "redact_llm_input": (lambda v: isinstance(v, bool), "true or false"),
    "redact_with": (lambda v: isinstance(v, str), "a string"),
    "max_argument_bytes": (lambda v: v is None or whole_number(v, 1), "a whole number of bytes (>= 1) or null"),
    "max_tool_calls_per_reply": (lambda v: whole_number(v, 1), "a whole number (>= 1)"),
    "approval": (_approval, "true, false, or a mapping with 'sensitive' (true/false) and 'tools' (a list)"),
    "approver": (lambda v: isinstance(v, str) or callable(v), "an import path 'module:function' or a callable"),
}


def check_rails(rails: Any, where: str = "rails") -> None:
    """``ConfigError`` naming the first setting of ``rails`` whose value has the wrong type."""
    if rails is None:
        return
    if not isinstance(rails, dict):
        raise ConfigError(f"{where} must be a mapping of rails settings, got {type(rails).__name__}")
    for key, value in rails.items():
        rule = _RULES.get(key)
        if rule is not None and not rule[0](value):
            from .._trust.settings import config_masker

            shown = config_masker(value)(repr(value))  # an approver object's ``bot_token`` field: masked, then cut
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise ConfigError(f"{where}.{key} must be {rule[1]}, got {type(value).__name__} {shown}; "
                              "fix the agent spec (docs/rails.md lists the settings)")


#: ``agent_config`` keys that open the user's own data (the skills folder): the app's or the CLI user's decision
USER_DATA_SWITCHES = {"skills": "the user's skills folder (its skills go into this agent's prompts)"}


def check_user_data_switches(agent_config: Any, config: Any, name: str) -> None:
    """``ConfigError`` when an untrusted spec (``current_trust()`` not ``everything``) turns on a
    ``USER_DATA_SWITCHES`` key that the kernel's config does not set itself, or skill curation (a write into the
    skills folder) that the kernel's ``skills.curate_after_run`` does not allow."""
    from .trust import current_trust

    if not isinstance(agent_config, dict) or current_trust().everything:
        return
    for key, what in USER_DATA_SWITCHES.items():
        if agent_config.get(key) not in (None, False) and not (config or {}).get(key):
            raise ConfigError(f"agent {name!r}: agent_config.{key} turns on {what}, which an untrusted spec may not "
                              f"do; the app enables it with Kernel(config={{{key!r}: {{...}}}}), or trust the spec "
                              f"(trust=True, or --trust on the command line)")
    skills = agent_config.get("skills")
    if isinstance(skills, dict) and skills.get("curate") and not ((config or {}).get("skills") or {}).get(
            "curate_after_run"):
        raise ConfigError(f"agent {name!r}: agent_config.skills.curate writes skills learnt from this agent's runs "
                          "into the user's skills folder, which an untrusted spec may not turn on; the app enables "
                          "it with Kernel(config={'skills': {'curate_after_run': True, ...}}), or trust the spec")
    if isinstance(skills, dict):
        app = (config or {}).get("skills")
        for key, default in SKILL_THRESHOLDS.items():
            floor = app.get(key, default) if isinstance(app, dict) else default
            value = skills.get(key)
            if value is not None and not (isinstance(value, (int, float)) and not isinstance(value, bool)
                                          and float(floor) <= value <= 1):
                raise ConfigError(f"agent {name!r}: agent_config.skills.{key} is {value!r}; an untrusted spec may "
                                  f"only raise it, to a number from the app's {floor} to 1 (a lower one puts more of "
                                  "the user's skills into this agent's prompt); the app lowers it with "
                                  f"Kernel(config={{'skills': {{{key!r}: ...}}}}), or trust the spec")
