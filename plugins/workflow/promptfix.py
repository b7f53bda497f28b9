"""EvoAgentX's ``validate_prompt`` repairs of a generated agent's prompt: output headings renamed to the
declared output each carries (``match_output_sections``), the Instructions' inputs written
``<input>{name}</input>`` (``wrap_inputs``); ``closest_names`` pairs names by similarity."""

from __future__ import annotations

import difflib
import re
from typing import Optional

_PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})")
#: a Markdown heading line; its title is cut by ``_title`` (``[ \t]*(?P<title>[^\n#]+?)[ \t]*:?[ \t]*$`` split a
#: run of spaces inside a generated title three ways: cubic, minutes for one line of 5,000 spaces)
_HEADING = re.compile(r"^(?P<hashes>#{1,6})(?P<title>[^\n#]+)$", re.M)
_NOT_ID = re.compile(r"\W+")
#: the characters of two names compared (difflib takes time quadratic in their length: a model's 50 names of 256
#: characters against a node's 50 took minutes, on the event loop); a generated prompt has at most ``MAX_HEADINGS``
#: headings (each is compared with every output: 600 of them took 9 s)
_COMPARED = 32
MAX_HEADINGS = 60


def _title(m: "re.Match[str]") -> str:
    """A heading's title: without the spaces around it and one colon at its end."""
    title = m.group("title").strip(" \t")
    return title[:-1].rstrip(" \t") if title.endswith(":") else title


def match_output_sections(prompt: str, outputs: list[str], generated: list[str]) -> str:
    """Rename output-section headings (``## Code``, ``## analysed_reqs``) to the declared output each one
    carries (EvoAgentX's validate_prompt): the one of the same loose spelling, else the one the generated
    outputs map it to, else the most similar output not yet carried (words compared one by one, so
    abbreviations and reordered words count), else -- one heading and one output left in the Output Format
    section -- that one. Headings outside an Output Format section are renamed only when close."""
    heads = list(_HEADING.finditer(prompt))
    start, end = _section(heads, len(prompt), _FORMAT)
    in_format = [start is not None and start <= m.start() < end and m is not heads_at(heads, start) for m in heads]
    by_key = {_loose(o): o for o in outputs}
    mapping = {_loose(k): v for k, v in closest_names(generated, outputs).items()}
    titles: dict[int, str] = {}
    for i, m in enumerate(heads):
        key = _loose(_title(m).strip().strip("*`").strip())
        if key in by_key:
            titles[i] = by_key[key]
    left = [i for i, m in enumerate(heads) if i not in titles and _loose(_title(m)) not in _SECTIONS]
    free = [o for o in outputs if o not in titles.values()]
    for i in list(left):
        target = mapping.get(_loose(_title(heads[i]).strip().strip("*`").strip()))
        if target in free:
            titles[i] = target
            free.remove(target)
            left.remove(i)
    pairs = sorted(((_similar(_loose(_title(heads[i])), _loose(o)), i, o) for i in left for o in free),
                   reverse=True)
    for score, i, o in pairs:
        if i in titles or o not in free or score < (0.5 if in_format[i] else 0.75):
            continue
        titles[i] = o
        free.remove(o)
    rest = [i for i in left if i not in titles and in_format[i]]
    if len(rest) == 1 and len(free) == 1:
        titles[rest[0]] = free[0]
    out, last = [], 0
    for i, m in enumerate(heads):
        if i in titles:
            out.append(prompt[last:m.start()] + f"{m.group('hashes')} {titles[i]}")
            last = m.end()
    return "".join(out) + prompt[last:]


def wrap_inputs(prompt: str, inputs: list[str]) -> str:
    """Input placeholders of the Instructions section (of the whole prompt but its Output Format section,
    when it has no Instructions heading) written ``<input>{name}</input>``, as EvoAgentX's validate_prompt
    does; one already wrapped is left as it is."""
    heads = list(_HEADING.finditer(prompt))
    start, end = _section(heads, len(prompt), _INSTRUCTIONS)
    if start is None:
        f_start, f_end = _section(heads, len(prompt), _FORMAT)
        spans = [(0, len(prompt))] if f_start is None else [(0, f_start), (f_end, len(prompt))]
    else:
        spans = [(start, end)]
    wanted = set(inputs)

    def fix(m: "re.Match[str]") -> str:
        if m.group(1) not in wanted or (m.string[max(0, m.start() - 7):m.start()] == "<input>"
                                        and m.string[m.end():m.end() + 8] == "</input>"):
            return m.group(0)
        return f"<input>{m.group(0)}</input>"

    out, last = [], 0
    for a, b in spans:
        out.append(prompt[last:a] + _PLACEHOLDER.sub(fix, prompt[a:b]))
        last = b
    return "".join(out) + prompt[last:]


_FORMAT = {"output_format", "output_formats", "outputs", "output", "format"}
_INSTRUCTIONS = {"instructions", "instruction"}
_SECTIONS = _FORMAT | _INSTRUCTIONS | {"inputs", "input", "context", "constraints", "examples", "example", "notes",
                                       "task", "goal", "background", "steps", "rules"}


def heads_at(heads: list["re.Match[str]"], start: int) -> Optional["re.Match[str]"]:
    return next((m for m in heads if m.start() == start), None)


def _section(heads: list["re.Match[str]"], size: int, names: set[str]) -> tuple[Optional[int], int]:
    """``(start, end)`` of the first section whose heading is one of ``names``: from that heading to the next
    known section (or, but for the Output Format section, of the same or a higher level); ``(None, 0)``
    when there is none."""
    for i, m in enumerate(heads):
        if _loose(_title(m)) in names:
            level, fmt = len(m.group("hashes")), names is _FORMAT  # output headings may be of any level
            nxt = next((h.start() for h in heads[i + 1:] if _loose(_title(h)) in _SECTIONS
                        or (not fmt and len(h.group("hashes")) <= level)), size)
            return m.start(), nxt
    return None, 0


def _similar(a: str, b: str) -> float:
    """How alike two loose names are: the whole strings, or word by word (in either order) where a word
    may be an abbreviation of the other (``reqs`` of ``requirements``)."""
    a, b = a[:_COMPARED], b[:_COMPARED]
    whole = difflib.SequenceMatcher(None, a, b).ratio()
    wa, wb = a.split("_"), b.split("_")
    if len(wa) != len(wb):
        return whole
    if len(wa) == 1:  # one word each: an abbreviation, else the ratio already computed
        return 1.0 if _abbreviates(a, b) else whole
    best = max(sum(_word(x, y) for x, y in zip(wa, order)) / len(wa) for order in (wb, wb[::-1]))
    return max(whole, best)


def _word(x: str, y: str) -> float:
    if _abbreviates(x, y):
        return 1.0
    return difflib.SequenceMatcher(None, x, y).ratio()


def _abbreviates(x: str, y: str) -> bool:
    """The shorter word is an abbreviation of the longer (same first letter, its letters in order)."""
    short, long_ = sorted((x, y), key=len)
    it = iter(long_)
    return len(short) >= 2 and short[0] == long_[0] and all(c in it for c in short)


def closest_names(names: list[str], declared: list[str]) -> dict[str, str]:
    """Map each name to the most similar unclaimed declared name (best pairs first)."""
    pairs = sorted(((difflib.SequenceMatcher(None, _loose(n)[:_COMPARED], _loose(d)[:_COMPARED]).ratio(), n, d)
                    for n in names for d in declared), reverse=True)
    out: dict[str, str] = {}
    taken: set[str] = set()
    for score, n, d in pairs:
        if n not in out and d not in taken and score >= 0.4:
            out[n] = d
            taken.add(d)
    return out


def _loose(name: str) -> str:
    return _NOT_ID.sub("_", name.strip().lower()).strip("_")
