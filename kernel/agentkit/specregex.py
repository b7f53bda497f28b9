"""Regexes a spec supplies (``rails.redact``...), bounded (docs/security.md, 5b):
``compile_spec_regex(pattern, key)`` refuses, as a ``ConfigError`` naming both, what can take exponential time
(backreferences, ambiguous repeats nested past ``MAX_NESTED_REPEAT``, also inside atomic groups) or a high power of
the text's length (over ``MAX_UNBOUNDED_REPEATS``), then compiles with RE2 (linear time) when installed, else ``re``.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any, Callable

from ..errors import ConfigError

#: a group may repeat at most this many times when its body can match in more than one way
MAX_NESTED_REPEAT = 10
#: at most this many unbounded repeats in a pattern (a group repeated k times counts its own k times): a failing
#: match may try every way of splitting the text among them, a power of its length as high as their count
MAX_UNBOUNDED_REPEATS = 6
#: at most 2 to this power ways to choose among a pattern's bounded repeats and alternatives at one place of the
#: text (``a?`` 2 ways, ``x{1,10}`` 10, ``a|ab`` 2; alternatives starting with different characters 1)
MAX_CHOICE_BITS = 20
#: the longest pattern taken: checking and compiling cost grows with it, and compiled patterns are cached
MAX_PATTERN = 10_000
#: the most patterns a spec's ``rails.redact`` lists (each is searched over every text the agent's rails see)
MAX_SPEC_PATTERNS = 100
_INFINITE = float("inf")
#: the code points ``_overlap`` tries besides the items' own bounds: all below U+3000, then every 256th
_SAMPLED = [*range(0x3000), *range(0x3000, 0x110000, 256)]


def compile_spec_regex(pattern: str, key: str = "pattern", *, backreferences: bool = False) -> Any:
    """``pattern`` compiled (RE2 when installed and able, else ``re``), after the check; ``key`` names the
    spec setting in the error (``rails.redact``); ``backreferences``: take ``(\\d)\\1`` (the rest is checked
    as usual; a backreference alone costs a power of the length, not more)."""
    if not isinstance(pattern, str):
        raise ConfigError(f"{key}: a pattern must be a string, got {type(pattern).__name__}")
    if len(pattern) > MAX_PATTERN:  # checked before parsing: a 1 MB pattern took seconds and stayed cached
        raise ConfigError(f"{key}: a pattern of {len(pattern):,} characters is refused (at most {MAX_PATTERN:,} "
                          f"characters); match a shorter pattern, or split it into several; docs/security.md, "
                          "'Spec regexes are bounded'")
    return _compile(pattern, key, backreferences)


@lru_cache(maxsize=256)
def _compile(pattern: str, key: str, backreferences: bool = False) -> Any:
    try:
        tree = _parser().parse(pattern)
    except (re.error, OverflowError, RecursionError) as exc:
        raise ConfigError(f"{key}: {pattern!r} is not a valid regular expression ({exc}); fix the pattern") from None
    fold = bool(tree.state.flags & re.IGNORECASE) or re.search(r"\(\?[a-zA-Z-]*i", pattern) is not None
    dotall = bool(tree.state.flags & re.DOTALL) or re.search(r"\(\?[a-zA-Z-]*s", pattern) is not None
    problem = _unbounded(tree, 1, fold, dotall, backreferences)
    if problem:
        raise ConfigError(
            f"{key}: {pattern!r} is refused: {problem} can make matching take exponential time on a hostile text. "
            "Rewrite it without nesting (e.g. '(a+)+' -> 'a+', '(a|ab)*' -> '[ab]*'), use a possessive quantifier "
            "or an atomic group around a plain repeat ('(?>a+)'), or bound the outer repeat to at most "
            f"{MAX_NESTED_REPEAT}; docs/security.md, 'Spec regexes are bounded'")
    degree, bits = _ways(tree, 1, fold, dotall)
    if bits > MAX_CHOICE_BITS:
        raise ConfigError(
            f"{key}: {pattern!r} is refused: its optional parts, bounded repeats and alternatives can match one "
            f"place of a text in about 2**{bits:.0f} ways (more than 2**{MAX_CHOICE_BITS}), each tried when a match "
            "fails: that can take minutes on a short hostile text. Make fewer parts optional ('a?a?a?aaa' -> "
            "'a{3,6}'), narrow the ranges ('{1,10}' inside '{1,10}' -> one '{1,100}'); docs/security.md, "
            "'Spec regexes are bounded'")
    if degree > MAX_UNBOUNDED_REPEATS:
        raise ConfigError(
            f"{key}: {pattern!r} is refused: it has {degree:g} unbounded repeats (a group repeated k times counts "
            f"its own k times), more than {MAX_UNBOUNDED_REPEATS}: a failing match can take time growing as the "
            f"text's length to the power {degree:g} on a hostile text. Use fewer '*', '+' and '{{n,}}' (e.g. "
            "'.*a.*b.*c' -> one pattern per word, '(?:.*x){8}' -> '(?:[^x]*x){8}'), or bound them ('{0,40}'); "
            "docs/security.md, 'Spec regexes are bounded'")
    linear = _re2()
    if linear is not None:
        try:
            options = linear.Options()
            options.log_errors = False
            return linear.compile(pattern, options=options)
        except Exception:  # syntax RE2 lacks (look-arounds): the checked pattern runs on re
            pass
    return re.compile(pattern)


@lru_cache(maxsize=256)
def ambiguity(pattern: str) -> tuple[float, float]:
    """``(unbounded repeats, log2 of the ways among bounded ones and alternatives)`` of a pattern
    ``compile_spec_regex`` took: a failing search of a text of length n may try about
    ``n * comb(n + repeats, repeats) * 2 ** bits`` ways, so a caller can refuse a text too long for it."""
    tree = _parser().parse(pattern)
    fold = bool(tree.state.flags & re.IGNORECASE) or re.search(r"\(\?[a-zA-Z-]*i", pattern) is not None
    dotall = bool(tree.state.flags & re.DOTALL) or re.search(r"\(\?[a-zA-Z-]*s", pattern) is not None
    return _ways(tree, 1, fold, dotall)


def check_spec_regexes(rails: Any) -> None:
    """Compile (so check) a spec's ``rails["redact"]`` patterns when the spec loads: a refused one is a
    ``ConfigError`` then, not a withheld result at run time."""
    patterns = rails.get("redact") if isinstance(rails, dict) else None
    if patterns is None:
        return
    if not isinstance(patterns, (str, list, tuple)):
        raise ConfigError(f"rails.redact must be a list of regular expressions, got {type(patterns).__name__}")
    if not isinstance(patterns, str) and len(patterns) > MAX_SPEC_PATTERNS:  # each searches every text, every call
        raise ConfigError(f"rails.redact lists {len(patterns):,} patterns, more than {MAX_SPEC_PATTERNS}; join "
                          "alternatives into fewer patterns ('a|b|c'), or set them in the app's own rails")
    for pattern in [patterns] if isinstance(patterns, str) else patterns:
        compile_spec_regex(pattern, "rails.redact")


def uses_linear_engine(compiled: Any) -> bool:
    """Whether ``compiled`` (from ``compile_spec_regex``) runs on RE2."""
    return not isinstance(compiled, re.Pattern)


def _unbounded(items: Any, outer: float, fold: bool = False, dotall: bool = False, refs: bool = False) -> str:
    """What in parsed ``items`` is ambiguous inside a repeat of more than MAX_NESTED_REPEAT times ('' if nothing);
    ``dotall``: ``.`` may match a newline (``(?s)``), so a newline delimits nothing ``.`` repeats; ``refs``:
    backreferences are taken."""
    c = _constants()
    for op, av in items:
        if op == c.GROUPREF_EXISTS or (op == c.GROUPREF and not refs):
            return "a backreference"
        if op in (c.MAX_REPEAT, c.MIN_REPEAT):
            low, high, body = av
            variable = high != low
            if variable and outer > MAX_NESTED_REPEAT:
                return "a quantifier inside a repeated group"
            times = _INFINITE if high == c.MAXREPEAT else high
            if times > MAX_NESTED_REPEAT and _delimited(body, fold, dotall):
                continue  # each round ends (or starts) with a character its inner repeats cannot match
            found = _unbounded(body, outer * times if times > 1 else outer, fold, dotall, refs)
            if found:
                return found
        elif op == c.BRANCH:
            if outer > MAX_NESTED_REPEAT and not _disjoint(av[1], fold, dotall):  # '(ab|cd)*': one way to go on
                return "an alternation inside a repeated group"
            for alternative in av[1]:
                found = _unbounded(alternative, outer, fold, dotall, refs)
                if found:
                    return found
        elif op == c.SUBPATTERN:
            found = _unbounded(av[-1], outer, fold, dotall, refs)
            if found:
                return found
        elif op in (c.ASSERT, c.ASSERT_NOT):
            found = _unbounded(av[1], outer, fold, dotall, refs)
            if found:
                return found
        elif op in _no_backtrack_into():  # '(?>...)', '...*+': nothing outside backtracks into the body, but the
            found = _unbounded(av if op == c.ATOMIC_GROUP else av[2], 1, fold, dotall, refs)  # body backtracks inside
            if found:  # itself to find its first match ('(?>(a+)+b)'): checked as a pattern of its own
                return found
    return ""


def _ways(items: Any, times: float, fold: bool = False, dotall: bool = False) -> tuple[float, float]:
    """``(unbounded repeats, log2 of the choices among bounded ones and alternatives)`` in ``items``, each counted
    as often as bounded repeats around it repeat it (``(?:.*){10}``: 10 unbounded; ``a?`` 22 times: 22 bits)."""
    c = _constants()
    possessive = getattr(c, "POSSESSIVE_REPEAT", None)
    degree: float = 0
    bits: float = 0
    for op, av in items:
        inner: tuple[float, float] = (0, 0)
        if op in (c.MAX_REPEAT, c.MIN_REPEAT) or (possessive is not None and op == possessive):
            low, high, body = av
            many = high == c.MAXREPEAT or high > MAX_NESTED_REPEAT
            if high != low and op != possessive:  # '++' never gives back: one way
                if many:
                    degree += times
                else:
                    bits += times * math.log2(high - low + 1)
            inner = _ways(body, times if many else times * high, fold, dotall)
        elif op == c.BRANCH:
            found = [_ways(alternative, times, fold, dotall) for alternative in av[1]]
            inner = (max(f[0] for f in found), max(f[1] for f in found))
            if not _disjoint(av[1], fold, dotall):
                bits += times * math.log2(len(av[1]))
        elif op == c.SUBPATTERN:
            inner = _ways(av[-1], times, fold, dotall)
        elif op in (c.ASSERT, c.ASSERT_NOT):
            inner = _ways(av[1], times, fold, dotall)
        elif op == getattr(c, "ATOMIC_GROUP", None):
            inner = _ways(av, times, fold, dotall)
        degree, bits = degree + inner[0], bits + inner[1]
    return degree, bits


def _disjoint(alternatives: Any, fold: bool, dotall: bool) -> bool:
    """Whether each alternative starts with a character no other one can start with (``ab|cd``, ``\\d{2}|x``):
    then at most one of them can go on at any point, nothing to backtrack over."""
    firsts = [_first(list(alternative)) for alternative in alternatives]
    if any(first is None for first in firsts):
        return False
    return not any(_overlap(a, b, fold, dotall) for i, a in enumerate(firsts) for b in firsts[i + 1:])


def _first(items: list[Any]) -> Any:
    """The single-character item every match of ``items`` starts with (``None``: none, or not known)."""
    c = _constants()
    chars = (c.LITERAL, c.NOT_LITERAL, c.IN, c.ANY)
    while items:
        op, av = items[0]
        if op in chars:
            return items[0]
        if op == c.SUBPATTERN:
            items = [*av[-1], *items[1:]]
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[0] >= 1 and len(av[2]) == 1 and av[2][0][0] in chars:
            return av[2][0]
        else:
            return None
    return None


@lru_cache(maxsize=1)
def _no_backtrack_into() -> tuple[Any, ...]:
    """The opcodes of atomic groups and possessive repeats (none before Python 3.11)."""
    c = _constants()
    return tuple(op for op in (getattr(c, "ATOMIC_GROUP", None), getattr(c, "POSSESSIVE_REPEAT", None)) if op)


def _delimited(body: Any, fold: bool, dotall: bool = False) -> bool:
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
    return len(items) > 1 and any(not any(_overlap(end, i, fold, dotall) for i in inner) for end in ends)


def _overlap(a: Any, b: Any, fold: bool, dotall: bool = False) -> bool:
    """Whether two single-character items can match one character (``fold``: in any case; ``dotall``: ``.``
    matches anything): checked on the first 12,288 code points, every 256th one after them, and on each end of the
    ranges and literals of either (and the characters next to them: ``[０-１]`` ending rounds of ``[０-９]+``
    overlaps at ``０``, ``[^x-z]`` and ``[a-z]`` next to ``x``, ``[^\\W\\x00-\\u2fff]`` and ``\\w`` on CJK)."""
    c = _constants()
    if dotall and c.ANY in (a[0], b[0]):
        return True
    if b[0] == c.LITERAL:  # the relation is symmetric: one character to try
        a, b = b, a
    if a[0] == c.LITERAL:  # the common delimiter: one character (and the characters it matches ignoring case)
        return _member(b, chr(a[1]), fold)
    points = {p for item in (a, b) for q in _bounds(item) for p in (q - 1, q, q + 1) if 0x3000 <= p < 0x110000}
    return any(_member(a, ch, fold) and _member(b, ch, fold) for ch in map(chr, _SAMPLED + sorted(points)))


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
    except ImportError:  # pragma: no cover - 3.10: the pairs that matter most, both ways (as 3.11's table is)
        pairs = {105: (305,), 115: (383,), 107: (8490,), 181: (956,), 229: (8491,), 946: (976,), 952: (977, 1012)}
        both: dict[int, set[int]] = {}
        for a, bs in pairs.items():
            for b in bs:
                both.setdefault(a, set()).add(b)
                both.setdefault(b, set()).add(a)
        return {a: tuple(sorted(bs)) for a, bs in both.items()}
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
