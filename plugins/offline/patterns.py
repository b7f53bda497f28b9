"""A short string matching a regex ``pattern`` (JSON schema's keyword), for the offline test model: ``matching``.

The string satisfies ``re.search`` and ``minLength``/``maxLength``; anchors, ``\\b`` and lookarounds produce
nothing. When nothing fits, ``PatternError`` says so (the caller names the parameter) rather than a value the tool
would reject.
"""

from __future__ import annotations

import re
import sys
from typing import Any, Iterator, Optional, TypeGuard

if sys.version_info >= (3, 11):
    from re import _constants as _c, _parser as _parse  # type: ignore[attr-defined]
else:  # pragma: no cover - Python < 3.11
    import sre_constants as _c
    import sre_parse as _parse

#: characters tried, in order, for ``.``, negated classes and categories
_CANDIDATES = "a0A_-. xz9Z~!@#:/+,="
_CATEGORY = {
    _c.CATEGORY_DIGIT: "0", _c.CATEGORY_NOT_DIGIT: "a", _c.CATEGORY_WORD: "a",
    _c.CATEGORY_NOT_WORD: "-", _c.CATEGORY_SPACE: " ", _c.CATEGORY_NOT_SPACE: "a",
}
_CATEGORY_RE = {
    _c.CATEGORY_DIGIT: r"\d", _c.CATEGORY_NOT_DIGIT: r"\D", _c.CATEGORY_WORD: r"\w",
    _c.CATEGORY_NOT_WORD: r"\W", _c.CATEGORY_SPACE: r"\s", _c.CATEGORY_NOT_SPACE: r"\S",
}
_MAX_STRETCH = 64
#: the most backtracking steps a candidate's search may be estimated to take (``specregex.ambiguity``)
_MAX_SEARCH_STEPS = 10**8  # a search that fails after them takes about a second


class PatternError(ValueError):
    """No string this generator can build matches the pattern (within the length bounds)."""


def matching(pattern: str, min_length: int = 0, max_length: Optional[int] = None) -> str:
    """A short string ``s`` with ``re.search(pattern, s)`` and ``min_length <= len(s) <= max_length``; a pattern
    that could backtrack exponentially is refused first, and a candidate too long for the pattern to search
    quickly is never searched (a tool's schema may be a hostile server's)."""
    import math

    from zagent.agentkit.specregex import ambiguity, compile_spec_regex
    from zagent.errors import ConfigError

    if not isinstance(pattern, str):
        raise PatternError(f"it is not a regular expression but a {type(pattern).__name__}")
    try:
        compiled = compile_spec_regex(pattern, "pattern", backreferences=True)
        tree = _parse.parse(pattern)
    except ConfigError as exc:  # refused as a spec regex is (docs/security.md, 5b), before anything is searched
        raise PatternError(str(exc).removeprefix("pattern: ")) from None
    except (re.error, TypeError, OverflowError, RecursionError) as exc:
        raise PatternError(f"it is not a valid regular expression ({exc})") from None
    high = max_length if max_length is not None else 1 << 30
    repeats, bits = ambiguity(pattern)
    costly: list[int] = []

    def fits(text: Optional[str]) -> TypeGuard[str]:
        if text is None or not min_length <= len(text) <= high:
            return False
        n = len(text)
        if (n + 1) * math.comb(n + int(repeats), int(repeats)) * 2 ** bits > _MAX_SEARCH_STEPS:
            costly.append(n)  # a failing search of it could take minutes: not tried
            return False
        return compiled.search(text) is not None

    for candidate in _candidates(tree, min_length):
        if fits(candidate):
            return candidate
    bounds = f" with length {min_length}..{'' if max_length is None else max_length}" \
        if min_length or max_length is not None else ""
    if costly:
        raise PatternError(f"the offline test model cannot build a string matching it{bounds}: checking a value of "
                           f"{min(costly)} characters against a pattern with {repeats:g} unbounded repeats could "
                           "take minutes")
    raise PatternError(f"the offline test model cannot build a string matching it{bounds}")


def _candidates(tree: Any, min_length: int) -> Iterator[Optional[str]]:
    """The shortest string, then longer repeats, then the shortest padded (for ``minLength``)."""
    shortest = _build(tree, 0, {})
    yield shortest
    for stretch in range(1, min(max(min_length, 1), _MAX_STRETCH) + 1):
        yield _build(tree, stretch, {})
    if shortest is not None and len(shortest) < min_length:
        pad = min_length - len(shortest)
        for filler in ("a", "0", " "):
            yield shortest + filler * pad
            yield filler * pad + shortest


def _build(items: Any, stretch: int, groups: dict[int, str]) -> Optional[str]:
    out: list[str] = []
    for op, av in items:
        piece = _one(op, av, stretch, groups)
        if piece is None:
            return None
        out.append(piece)
    return "".join(out)


def _one(op: Any, av: Any, stretch: int, groups: dict[int, str]) -> Optional[str]:
    if op is _c.LITERAL:
        return chr(av)
    if op is _c.NOT_LITERAL:
        return next((ch for ch in _CANDIDATES if ord(ch) != av), None)
    if op is _c.ANY:
        return "a"
    if op is _c.IN:
        return _in(av)
    if op is _c.SUBPATTERN:
        group, sub = av[0], av[-1]
        text = _build(sub, stretch, groups)
        if text is not None and group is not None:
            groups[group] = text
        return text
    if op is _c.BRANCH:
        for branch in av[1]:
            text = _build(branch, stretch, groups)
            if text is not None:
                return text
        return None
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)):
        low, high, sub = av
        count = low if not stretch else max(low, min(stretch, high if high != _c.MAXREPEAT else stretch))
        parts = [_build(sub, stretch, groups) for _ in range(count)]
        built = [p for p in parts if p is not None]
        return None if len(built) < len(parts) else "".join(built)
    if op is _c.GROUPREF:
        return groups.get(av, "")
    if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
        return ""  # anchors and lookarounds: nothing to emit; the final re.search decides
    if op is getattr(_c, "ATOMIC_GROUP", None):
        return _build(av, stretch, groups)
    return None  # conditional groups and the like: not supported


def _in(items: list[Any]) -> Optional[str]:
    if items and items[0][0] is _c.NEGATE:
        rest = items[1:]
        return next((ch for ch in _CANDIDATES if not _member(ch, rest)), None)
    for op, av in items:
        if op is _c.LITERAL:
            return chr(av)
        if op is _c.RANGE:
            return chr(av[0])
        if op is _c.CATEGORY and av in _CATEGORY:
            return _CATEGORY[av]
    return None


def _member(ch: str, items: list[Any]) -> bool:
    code = ord(ch)
    for op, av in items:
        if op is _c.LITERAL and av == code or op is _c.RANGE and av[0] <= code <= av[1]:
            return True
        if op is _c.CATEGORY and av in _CATEGORY:
            if re.fullmatch(_CATEGORY_RE[av], ch):
                return True
    return False
