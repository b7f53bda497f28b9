"""Regexes that a spec supplies (``rails.redact``...), bounded: no pattern can make matching take exponential time.

``compile_spec_regex(pattern, key)`` is the one way such a pattern is compiled. It
refuses, with a ``ConfigError`` naming the key and the pattern, what makes a
backtracking engine blow up: backreferences, and a quantifier or an alternation
inside a group that repeats more than ``MAX_NESTED_REPEAT`` times (``(a+)+``,
``(a|ab)*``, ``(\\w+\\s?)*``); a possessive quantifier or an atomic group
(``(?>...)``) is fine, it never backtracks. When google-re2 is installed
(``pip install zagent[re2]``) a pattern RE2 can run is compiled by RE2, which
matches in linear time (the guarantee: no polynomial blowup either); patterns
with look-arounds stay on ``re``, after the same check. Compiled forms are cached.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from .errors import ConfigError

#: a group may repeat at most this many times when its body can match in more than one way
MAX_NESTED_REPEAT = 10
_INFINITE = float("inf")


def compile_spec_regex(pattern: str, key: str = "pattern") -> Any:
    """``pattern`` compiled (RE2 when installed and able, else ``re``), after the check; ``key`` names the
    spec setting in the error (``rails.redact``)."""
    if not isinstance(pattern, str):
        raise ConfigError(f"{key}: a pattern must be a string, got {type(pattern).__name__}")
    return _compile(pattern, key)


@lru_cache(maxsize=256)
def _compile(pattern: str, key: str) -> Any:
    try:
        tree = _parser().parse(pattern)
    except (re.error, OverflowError, RecursionError) as exc:
        raise ConfigError(f"{key}: {pattern!r} is not a valid regular expression ({exc}); fix the pattern") from None
    problem = _unbounded(tree, 1)
    if problem:
        raise ConfigError(
            f"{key}: {pattern!r} is refused: {problem} can make matching take exponential time on a hostile text. "
            "Rewrite it without nesting (e.g. '(a+)+' -> 'a+', '(a|ab)*' -> '[ab]*'), use a possessive quantifier "
            "or an atomic group ('(?>...)'), or bound the outer repeat to at most "
            f"{MAX_NESTED_REPEAT}; docs/security.md, 'Spec regexes are bounded'")
    linear = _re2()
    if linear is not None:
        try:
            options = linear.Options()
            options.log_errors = False
            return linear.compile(pattern, options=options)
        except Exception:  # syntax RE2 lacks (look-arounds): the checked pattern runs on re
            pass
    return re.compile(pattern)


def check_spec_regexes(rails: Any) -> None:
    """Compile (so check) a spec's ``rails["redact"]`` patterns when the spec loads: a refused one is a
    ``ConfigError`` then, not a withheld result at run time."""
    patterns = rails.get("redact") if isinstance(rails, dict) else None
    if patterns is None:
        return
    if not isinstance(patterns, (str, list, tuple)):
        raise ConfigError(f"rails.redact must be a list of regular expressions, got {type(patterns).__name__}")
    for pattern in [patterns] if isinstance(patterns, str) else patterns:
        compile_spec_regex(pattern, "rails.redact")


def uses_linear_engine(compiled: Any) -> bool:
    """Whether ``compiled`` (from ``compile_spec_regex``) runs on RE2."""
    return not isinstance(compiled, re.Pattern)


def _unbounded(items: Any, outer: float) -> str:
    """What in parsed ``items`` is ambiguous inside a repeat of more than MAX_NESTED_REPEAT times ('' if nothing)."""
    c = _constants()
    for op, av in items:
        if op in (c.GROUPREF, c.GROUPREF_EXISTS):
            return "a backreference"
        if op in (c.MAX_REPEAT, c.MIN_REPEAT):
            low, high, body = av
            variable = high != low
            if variable and outer > MAX_NESTED_REPEAT:
                return "a quantifier inside a repeated group"
            times = _INFINITE if high == c.MAXREPEAT else high
            found = _unbounded(body, outer * times if times > 1 else outer)
            if found:
                return found
        elif op == c.BRANCH:
            if outer > MAX_NESTED_REPEAT:
                return "an alternation inside a repeated group"
            for alternative in av[1]:
                found = _unbounded(alternative, outer)
                if found:
                    return found
        elif op == c.SUBPATTERN:
            found = _unbounded(av[-1], outer)
            if found:
                return found
        elif op in (c.ASSERT, c.ASSERT_NOT):
            found = _unbounded(av[1], outer)
            if found:
                return found
        # ATOMIC_GROUP and POSSESSIVE_REPEAT never backtrack into their body: nothing to check
    return ""


def _parser() -> Any:
    try:
        from re import _parser as parser  # type: ignore[attr-defined]  # Python 3.11+
    except ImportError:  # pragma: no cover - 3.10
        import sre_parse as parser
    return parser


def _constants() -> Any:
    try:
        from re import _constants as constants  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - 3.10
        import sre_constants as constants
    return constants


@lru_cache(maxsize=1)
def _re2() -> Any:
    try:
        import re2  # google-re2, the optional extra
    except ImportError:
        return None
    return re2
