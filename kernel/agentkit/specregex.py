"""Regexes a spec supplies (``rails.redact``...), bounded (docs/security.md, 5b):
``compile_spec_regex(pattern, key)`` refuses, as a ``ConfigError`` naming both, what can take exponential time
(backreferences, ambiguous repeats nested past ``MAX_NESTED_REPEAT``), then compiles with RE2 (linear time) when
installed and able, else ``re``; cached.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable

from ..errors import ConfigError

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
    fold = bool(tree.state.flags & re.IGNORECASE) or re.search(r"\(\?[a-zA-Z-]*i", pattern) is not None
    problem = _unbounded(tree, 1, fold)
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


def _unbounded(items: Any, outer: float, fold: bool = False) -> str:
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
            if times > MAX_NESTED_REPEAT and _delimited(body, fold):
                continue  # each round ends (or starts) with a character its inner repeats cannot match
            found = _unbounded(body, outer * times if times > 1 else outer, fold)
            if found:
                return found
        elif op == c.BRANCH:
            if outer > MAX_NESTED_REPEAT:
                return "an alternation inside a repeated group"
            for alternative in av[1]:
                found = _unbounded(alternative, outer, fold)
                if found:
                    return found
        elif op == c.SUBPATTERN:
            found = _unbounded(av[-1], outer, fold)
            if found:
                return found
        elif op in (c.ASSERT, c.ASSERT_NOT):
            found = _unbounded(av[1], outer, fold)
            if found:
                return found
        # ATOMIC_GROUP and POSSESSIVE_REPEAT never backtrack into their body: nothing to check
    return ""


def _delimited(body: Any, fold: bool) -> bool:
    """Whether a repeated ``body`` is single characters and single-character repeats, and starts or ends with a
    character none of those repeats can match (``[a-z0-9-]+\\.`` in ``(?:[a-z0-9-]+\\.)+``): then the rounds
    split in one way only, nothing to backtrack over."""
    c = _constants()
    chars = (c.LITERAL, c.NOT_LITERAL, c.IN, c.ANY)
    items = list(body)
    while len(items) == 1 and items[0][0] == c.SUBPATTERN:
        items = list(items[0][1][-1])
    inner = []
    for op, av in items:
        if op in (c.MAX_REPEAT, c.MIN_REPEAT):
            if len(av[2]) != 1 or av[2][0][0] not in chars:
                return False
            inner.append(av[2][0])
        elif op not in chars:
            return False
    ends = [end for end in (items[:1] + items[-1:]) if end[0] in chars]
    return len(items) > 1 and any(not any(_overlap(end, i, fold) for i in inner) for end in ends)


def _overlap(a: Any, b: Any, fold: bool) -> bool:
    """Whether two single-character items can match one character (``fold``: in any case): checked on the first
    12,288 code points and on each end of the ranges and literals of either (and the characters next to them:
    ``[０-１]`` ending rounds of ``[０-９]+`` overlaps at ``０``, ``[^x-z]`` and ``[a-z]`` next to ``x``)."""
    c = _constants()
    if a[0] == c.LITERAL:  # the common delimiter: one character (and the characters it matches ignoring case)
        return _member(b, chr(a[1]), fold)
    points = {p for item in (a, b) for q in _bounds(item) for p in (q - 1, q, q + 1) if 0x3000 <= p < 0x110000}
    return any(_member(a, ch, fold) and _member(b, ch, fold) for ch in map(chr, [*range(0x3000), *sorted(points)]))


def _bounds(item: Any) -> list[int]:
    """The code points that begin or end what ``item`` matches or excludes (its literals, its ranges' ends)."""
    c = _constants()
    op, av = item
    if op in (c.LITERAL, c.NOT_LITERAL):
        return [av]
    if op == c.RANGE:
        return list(av)
    if op == c.IN:
        return [q for x in av for q in _bounds(x)]
    return []


def _member(item: Any, ch: str, fold: bool) -> bool:
    """Whether ``item`` matches ``ch`` (``fold``: or a character ``re.IGNORECASE`` takes for it: ``ſ`` for ``s``)."""
    return any(_matches(item, x) for x in (_folds(ch) if fold else (ch,)))


@lru_cache(maxsize=4096)
def _folds(ch: str) -> tuple[str, ...]:
    """``ch`` and the characters ``re.IGNORECASE`` matches it with: its other cases and the extra ones of
    ``re._casefix`` (``s``/``S``/``ſ``, ``k``/``K``/the Kelvin sign, ``µ``/``μ``...)."""
    low = ch.lower() if len(ch.lower()) == 1 else ch
    found = {ch, low, *_lowered_from().get(low, ())}
    found.update(chr(x) for x in _extra_cases().get(ord(low), ()))
    found.update(u for u in [x.upper() for x in found] if len(u) == 1)
    return tuple(sorted(found))


@lru_cache(maxsize=1)
def _lowered_from() -> dict[str, tuple[str, ...]]:
    """Characters whose lower case is another letter's (the Kelvin sign's is ``k``, the Ohm sign's ``ω``), by it."""
    found: dict[str, list[str]] = {}
    for ch in map(chr, range(0x10000)):  # the BMP: about 0.1 s, once, for a spec pattern ignoring case
        low = ch.lower()
        if low != ch and len(low) == 1 and low.upper() != ch:
            found.setdefault(low, []).append(ch)
    return {low: tuple(chars) for low, chars in found.items()}


@lru_cache(maxsize=1)
def _extra_cases() -> dict[int, tuple[int, ...]]:
    try:
        from re._casefix import _EXTRA_CASES  # type: ignore[import-not-found, unused-ignore]  # Python 3.11+
    except ImportError:  # pragma: no cover - 3.10: the pairs that matter most
        return {105: (305,), 115: (383,), 107: (8490,), 181: (956,), 229: (8491,), 946: (976,), 952: (977, 1012)}
    return dict(_EXTRA_CASES)


def _matches(item: Any, ch: str) -> bool:
    c = _constants()
    op, av = item
    if op == c.LITERAL:
        return bool(ord(ch) == av)
    if op == c.NOT_LITERAL:
        return bool(ord(ch) != av)
    if op == c.ANY:
        return ch != "\n"
    if op == c.RANGE:
        return bool(av[0] <= ord(ch) <= av[1])
    if op == c.CATEGORY:
        test: Callable[[str], bool] = _CATEGORIES.get(str(av).replace("UNI_", "").replace("LOC_", ""), _anything)
        return test(ch)
    if op == c.IN:
        negate = bool(av) and av[0][0] == c.NEGATE
        found = any(_matches(x, ch) for x in (av[1:] if negate else av))
        return found != negate
    return True  # anything else: assume it may match


def _anything(ch: str) -> bool:
    return True


_CATEGORIES: dict[str, Callable[[str], bool]] = {
    "CATEGORY_DIGIT": str.isdecimal, "CATEGORY_NOT_DIGIT": lambda ch: not ch.isdecimal(),
    "CATEGORY_SPACE": str.isspace, "CATEGORY_NOT_SPACE": lambda ch: not ch.isspace(),
    "CATEGORY_WORD": lambda ch: ch.isalnum() or ch == "_", "CATEGORY_NOT_WORD": lambda ch: not (ch.isalnum() or ch == "_"),
}


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
        import re2  # type: ignore[import-not-found, unused-ignore]  # google-re2, the optional extra
    except ImportError:
        return None
    return re2
