"""The *size* class of spec values (docs/security.md, 13): ``check_sizes`` refuses a count of ``SPEC_SIZES`` or
``SPEC_NUMBERS`` out of its range (``None`` stays allowed) and a list longer than ``SPEC_LENGTHS``;
``check_llm_options`` an untrusted spec's model option out of ``LLM_NUMBERS`` (a ``null`` timeout too), its
``prices`` or a profile raising the app's limits; each a ``ConfigError`` naming the key and range.
"""

from __future__ import annotations

from typing import Any, Optional

from ..errors import ConfigError
from .rails import whole_number

__all__ = ["APP_ONLY_OPTIONS", "LLM_NUMBERS", "SPEC_LENGTHS", "SPEC_NUMBERS", "SPEC_SIZES", "check_llm_options",
           "check_sizes", "number_problem", "size_problem", "whole_number"]

#: spec key -> (lowest, highest) whole number it may be
SPEC_SIZES: dict[str, tuple[int, int]] = {
    "max_iterations": (1, 1000),
    "max_steps": (1, 1000),
    "max_tool_call_concurrency": (1, 64),
    "tool_limit": (1, 1000),
    "max_context_messages": (1, 1_000_000),
    "max_context_tokens": (1, 10_000_000),
    "memory_size": (0, 100_000),
    "memory_chars": (0, 100_000_000),
    "max_messages": (1, 100_000),  # long_term_memory "inprocess": messages kept a namespace, in the process
    "max_rounds": (1, 1000),
    "max_consecutive": (1, 1000),
    "retries": (0, 100),
    "history_limit": (0, 10_000),
    "judge_every": (1, 1000),
    "max_loops": (0, 1000),
    "max_tokens": (1, 10**9),  # a group chat's token budget (termination)
    "max_bytes": (4096, 2**40),  # long_term_memory
    "common_min": (0, 10**9),
    "max_postings": (1, 10**8),
}
#: ``SPEC_SIZES`` keys whose ``None`` means "no bound" (short-term memory keeping every message): refused in a spec
SPEC_NOT_NULL = ("memory_size",)
#: spec key -> (lowest, highest) number (not only whole) it may be; ``None`` stays allowed
SPEC_NUMBERS: dict[str, tuple[float, float]] = {
    "max_seconds": (0.001, 86400),  # a group chat's time budget (termination)
    "busy_timeout": (0, 600),  # long_term_memory: seconds to wait for another writer, per attempt
    "common_ratio": (0, 1),
}

#: llm_config key -> (lowest, highest, whole number?, None allowed?): a spec's model options (the user's money,
#: time and connections); the sampling fields keep each provider's documented range
LLM_NUMBERS: dict[str, tuple[float, float, bool, bool]] = {
    "timeout": (0.001, 3600, False, False),
    "connect_timeout": (0.001, 3600, False, False),
    "read_timeout": (0.001, 3600, False, False),
    "write_timeout": (0.001, 3600, False, False),
    "pool_timeout": (0.001, 3600, False, False),
    "deadline": (0.001, 3600, False, False),
    "keepalive_expiry": (0, 3600, False, True),
    "max_retries": (0, 10, True, False),
    "retry_backoff": (0, 60, False, False),
    "retry_max_backoff": (0, 600, False, False),
    "retry_max_wait": (0, 600, False, False),
    "rpm": (0.001, 1_000_000, False, True),
    "max_connections": (1, 1000, True, False),
    "max_keepalive_connections": (0, 1000, True, False),
    "max_in_flight": (0, 1000, True, True),
    "max_response_bytes": (1, 256 * 2**20, True, False),
    "temperature": (0, 2, False, True),
    "top_p": (0, 1, False, True),
    "min_p": (0, 1, False, True),
    "top_k": (0, 1000, True, True),
    "frequency_penalty": (-2, 2, False, True),
    "presence_penalty": (-2, 2, False, True),
    "repeat_penalty": (0, 10, False, True),
    "max_tokens": (1, 1_000_000, True, True),
    "max_completion_tokens": (1, 1_000_000, True, True),
    "max_output_tokens": (1, 1_000_000, True, True),
    "num_predict": (1, 1_000_000, True, True),
    "num_ctx": (1, 10_000_000, True, True),
    "budget_tokens": (1, 1_000_000, True, True),
    "n": (1, 1, True, True),  # zagent reads the first choice only: more are billed for nothing
    "top_logprobs": (0, 20, True, True),
    "seed": (-(2**63), 2**63 - 1, True, True),
}
#: requests one call of a spec's fallback chain may make in all (its models times their tries; 16 x 3 by default)
MAX_CHAIN_REQUESTS = 48
DEFAULT_RETRIES = 2  # providerkit's ``HttpConfig.max_retries``
#: llm_config keys only the app sets (Python code, a trusted spec): the reported and budgeted cost is the app's
APP_ONLY_OPTIONS = ("prices",)
#: ``llm_config.profile`` fields only the app sets: the cap on tool calls run per reply (a spec lowers it with
#: ``rails.max_tool_calls_per_reply``, which never raises it)
APP_ONLY_PROFILE = ("max_tool_calls_per_reply",)
#: ``llm_config.profile`` numbers and their bounds, as ``LLM_NUMBERS``
PROFILE_NUMBERS: dict[str, tuple[float, float, bool, bool]] = {
    "max_tokens": LLM_NUMBERS["max_tokens"], "max_context_tokens": (1, 10_000_000, True, True)}

#: spec key -> the most entries its list may hold: each entry is an agent built, a tool sent with every request or
#: a node run (a model call the user pays for); a 64 MiB spec could list hundreds of thousands
SPEC_LENGTHS: dict[str, int] = {"agents": 1000, "tools": 1000, "handoffs": 100, "nodes": 1000, "edges": 10_000,
                                "keywords": 1000}  # a chat's stop phrases: each searched in every message
#: the longest ``name`` a spec may give anything (an agent, a field, a node, a tool it names): names are
#: printed, logged, put in prompts and in file names, so a 100k-character one is refused at load
MAX_NAME = 256
_NESTED = ("termination", "selection", "long_term_memory")  # a spec's mappings whose counts are checked too
_OPTION_GROUPS = ("extra_body", "options", "thinking", "models", "generation_config")  # options inside options


def size_problem(key: str, value: Any) -> Optional[str]:
    """Why ``value`` is not a valid ``key`` (one of ``SPEC_SIZES``), or ``None``."""
    low, high = SPEC_SIZES[key]
    if (value is None and key not in SPEC_NOT_NULL) or whole_number(value, low, high):
        return None
    return f"{key} must be a whole number from {low} to {high}, got {value!r}" + (
        " (null would keep every message for the agent's life)" if value is None else "")


def number_problem(key: str, value: Any, low: float, high: float, whole: bool, none_ok: bool) -> Optional[str]:
    """Why ``value`` is not a valid ``key`` in ``[low, high]`` (a whole number when ``whole``), or ``None``."""
    if value is None and none_ok:
        return None
    kind = "a whole number" if whole else "a number"
    ok_type = isinstance(value, int) if whole else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok_type or not low <= value <= high:  # NaN fails the range too
        return f"{key} must be {kind} from {_num(low)} to {_num(high)}, got {value!r}"
    return None


def _num(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{x:g}"


def check_llm_options(model: str, options: Any, what: str = "the spec's llm_config") -> None:
    """Refuse an untrusted spec's model options out of ``LLM_NUMBERS`` or naming ``APP_ONLY_OPTIONS``: its
    top-level options and those of ``_OPTION_GROUPS`` (``extra_body``, Ollama's ``options``, ``thinking``, a
    fallback chain's ``models``); never inside a schema or a message. A chain makes at most ``MAX_CHAIN_REQUESTS``."""
    stack: list[tuple[Any, str]] = [(options, "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, list):  # a fallback chain: each entry's own options
            stack.extend((v, f"{where.rstrip('.')}[{i}].") for i, v in enumerate(item) if isinstance(v, dict))
            continue
        for key, value in item.items() if isinstance(item, dict) else ():
            name = f"{where}{key}"
            if key in APP_ONLY_OPTIONS:
                raise ConfigError(f"{what} of {model!r} sets {name!r}: the prices behind the cost zagent reports "
                                  "and budgets (usage_limits) are the app's, so a spec file may not set them. Set "
                                  "them in Python (k.llm(..., prices=...)) or trust the spec (k.agent(spec, "
                                  "trust=True); zagent ... --trust)")
            if key == "profile" and isinstance(value, dict):
                _check_profile(what, model, name, value)
                continue
            if key == "timeout" and isinstance(value, dict):  # {"connect": 5, "read": 60}
                for part, seconds in value.items():
                    problem = number_problem(f"{name}.{part}", seconds, *LLM_NUMBERS["timeout"])
                    if problem is not None:
                        raise _llm_error(what, model, problem)
                    _within_users_timeout(what, model, f"{name}.{part}", seconds)
                continue
            bounds = LLM_NUMBERS.get(key) if isinstance(key, str) else None
            if bounds is not None:
                problem = number_problem(name, value, *bounds)
                if problem is not None:
                    raise _llm_error(what, model, problem)
                if key in _TIMEOUTS:
                    _within_users_timeout(what, model, name, value)
            elif key in _OPTION_GROUPS and isinstance(value, (dict, list)):
                stack.append((value, f"{name}."))
    if model.startswith("fallback:") and isinstance(options, dict):  # each number in range: now their product
        _check_chain(model, options, what)


def _check_chain(model: str, options: dict[str, Any], what: str) -> None:
    """A fallback chain's requests per call (each model's tries, its own ``max_retries`` or the chain's, plus one)
    within ``MAX_CHAIN_REQUESTS``: 16 models of 10 retries each were 176 requests, each waiting its retries."""
    entries = options.get("models")
    if not isinstance(entries, list):
        entries = [m for m in model[len("fallback:"):].split(",") if m.strip()]
    shared = options.get("max_retries", DEFAULT_RETRIES)
    total = 0
    for entry in entries:
        retries = entry.get("max_retries", shared) if isinstance(entry, dict) else shared
        total += (retries if isinstance(retries, int) and not isinstance(retries, bool) else DEFAULT_RETRIES) + 1
    if total > MAX_CHAIN_REQUESTS:
        raise _llm_error(what, model[:200], f"its {len(entries)} models with their retries make up to {total} "
                                            f"requests a call, at most {MAX_CHAIN_REQUESTS}; name fewer models or "
                                            "lower max_retries")


def _check_profile(what: str, model: str, name: str, profile: dict[str, Any]) -> None:
    """An untrusted spec's ``profile``: no ``APP_ONLY_PROFILE`` field, its numbers within ``PROFILE_NUMBERS``."""
    for key, value in profile.items():
        if key in APP_ONLY_PROFILE:
            raise ConfigError(f"{what} of {model!r} sets {name}.{key}: the cap on tool calls one reply may run is "
                              "the app's (its profiles), so a spec file may not set it; lower it with the spec's "
                              f"rails.{key} (which never raises it), or trust the spec (k.agent(spec, trust=True); "
                              "zagent ... --trust)")
        bounds = PROFILE_NUMBERS.get(key) if isinstance(key, str) else None
        problem = number_problem(f"{name}.{key}", value, *bounds) if bounds is not None else None
        if problem is not None:
            raise _llm_error(what, model, problem)


#: a spec's seconds to wait that the user's ``ZAGENT_TIMEOUT`` (``zagent ... --timeout``) bounds
_TIMEOUTS = ("timeout", "connect_timeout", "read_timeout", "write_timeout", "pool_timeout")


def _within_users_timeout(what: str, model: str, name: str, seconds: Any) -> None:
    """Refuse a spec's timeout longer than the user's ``ZAGENT_TIMEOUT`` (``--timeout``): a spec may shorten the
    wait, never lengthen it (it otherwise replaced the user's choice, as a default, with its own 3,600 s)."""
    import os

    try:
        users = float(os.environ.get("ZAGENT_TIMEOUT", "").strip() or "nan")
    except ValueError:
        return  # not a number: the provider says so when it reads it
    if users > 0 and isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds > users:
        raise ConfigError(f"{what} of {model!r} sets {name} {seconds:g} s, longer than the {users:g} s you set "
                          "(--timeout or ZAGENT_TIMEOUT); a spec may shorten the wait, not lengthen it. Drop the "
                          "spec's timeout, raise --timeout, or trust the spec (zagent ... --trust)")


def _llm_error(what: str, model: str, problem: str) -> ConfigError:
    return ConfigError(f"{what} of {model!r}: {problem}; a spec's model options are bounded (your time, money "
                       "and connections); set another value in Python (k.llm(..., option=...)), with --timeout or "
                       "ZAGENT_TIMEOUT for timeouts, or trust the spec (k.agent(spec, trust=True); zagent ... --trust)")


def check_sizes(spec: Any, what: str) -> None:
    """Refuse a converted spec whose counts are out of range (see the module docstring)."""
    import msgspec

    stack: list[tuple[Any, str]] = [(spec, "")]
    totals = dict.fromkeys(SPEC_LENGTHS, 0)  # agents across the spec: 1,000 nodes of 1,000 agents were 10**6
    while stack:
        item, where = stack.pop()
        if isinstance(item, msgspec.Struct):
            pairs = [(f, getattr(item, f, None)) for f in item.__struct_fields__]
        elif isinstance(item, dict):
            pairs = [(k, v) for k, v in item.items() if isinstance(k, str)]
        else:
            continue
        for key, value in pairs:
            if key == "name" and isinstance(value, str) and len(value) > MAX_NAME:
                raise ConfigError(f"{what}: {where}name is {len(value):,} characters long, more than {MAX_NAME}; "
                                  "give it a shorter name (names are printed, logged and sent in prompts)")
            if key in SPEC_LENGTHS and isinstance(value, list):
                totals[key] = totals[key] + len(value) if key == "agents" else len(value)  # agents: built, in all
                if totals[key] > SPEC_LENGTHS[key]:
                    name = spec.get("name") if isinstance(spec, dict) else getattr(spec, "name", None)
                    listed = f"{where}{key} lists {len(value):,} entries" if totals[key] == len(value) else \
                        f"its {key} lists hold {totals[key]:,} entries in all"
                    raise ConfigError(f"{what} {name!r}: {listed}, more than {SPEC_LENGTHS[key]:,}; a spec's counts "
                                      "are bounded (each is built, sent or run at your cost): split it into smaller "
                                      "specs, or build it in Python code")
            if key in SPEC_SIZES or key in SPEC_NUMBERS:
                problem = size_problem(key, value) if key in SPEC_SIZES else \
                    number_problem(key, value, *SPEC_NUMBERS[key], False, True)
                if problem is not None:
                    name = spec.get("name") if isinstance(spec, dict) else getattr(spec, "name", None)
                    raise ConfigError(f"{what} {name!r}: {where}{problem}; a spec's counts are bounded (they are "
                                      "resources you pay for); set a larger value in Python code if you need it")
            if isinstance(value, msgspec.Struct) or (key in _NESTED and isinstance(value, dict)):
                stack.append((value, f"{where}{key}."))
            elif isinstance(value, list):  # inline agents too: chats in chats multiplied their 1,000 agents
                stack.extend((v, f"{where}{key}[{i}].") for i, v in enumerate(value) if isinstance(v, msgspec.Struct)
                             or (key == "agents" and isinstance(v, dict)))
