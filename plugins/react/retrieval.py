"""Tool retrieval (docs/retrieval.md#tool-retrieval-by-meaning): ``select_tools(tools, query, limit=8, pinned=())``
keeps the tools most relevant to the request by BM25 and ``lexicon`` concepts; ``aselect_tools(...,
embedder=...)`` ranks by embeddings, falling back to BM25 if the embedder fails. Every pinned tool is kept; a
tool named in the query ranks first; the choice is deterministic, in the tools' own order.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter, OrderedDict
from typing import TYPE_CHECKING, Any, Iterable, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Tool

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+|[^\W\d_A-Za-z]+")
_STOP = frozenset(
    "a an and are as at be by can do does for from get gets how i in is it me my of on or please "
    "that the this to use using was what when which will with you your "
    "am any about also been could give going have has just let like make need one our out put should "
    "some something somewhere them then there these they those us want would".split()
)
K1, B = 1.2, 0.75
CONCEPT_WEIGHT = 0.6  # a shared concept counts less than a shared word
WEAK_WEIGHT = 0.3  # generic verbs and fillers of requests ("check", "show", "now") say little about the tool
_WEAK = frozenset("check show tell find give make list open put turn set start take see look new latest "
                  "current top best good right now today tonight".split())
NAME_BONUS = 100.0
_INDEX_CACHE_SIZE = 32
_EMBEDDER_CACHE_SIZE = 8


def tokenize(text: str) -> list[str]:
    """Lower-case words (camelCase and snake_case split), stop words dropped, plurals folded; a run of
    CJK characters gives its character pairs."""
    out = []
    for word in _WORD.findall(text):
        word = word.lower()
        if word in _STOP:
            continue
        if len(word) > 2 and word[0] >= "\u2e80":  # CJK has no spaces: its character pairs are the words
            out += [word[i:i + 2] for i in range(len(word) - 1)]
            continue
        if len(word) > 4 and word.endswith("ies"):
            word = word[:-3] + "y"
        elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.append(word)
    return out


def expand(words: list[str]) -> list[str]:
    """``words`` plus ``@concept`` for each concept of the built-in table a word points at (``lexicon``),
    so "rain" meets "weather" without an embedding model."""
    from .lexicon import concepts

    out = list(words)
    for word in words:
        out += ["@" + c for c in concepts(word)]
    return out


def query_terms(words: list[str]) -> dict[str, float]:
    """A query's terms and weights: each word 1 (a generic verb or filler ``WEAK_WEIGHT``), each concept
    ``CONCEPT_WEIGHT`` times its word's weight, shared among the concepts of the word pointing at it (a
    word of three concepts says less about each)."""
    from .lexicon import concepts

    terms: dict[str, float] = {}
    for word in words:
        weight = WEAK_WEIGHT if word in _WEAK else 1.0
        terms[word] = max(terms.get(word, 0.0), weight)
        found = concepts(word)
        for c in found:
            terms["@" + c] = max(terms.get("@" + c, 0.0), weight * CONCEPT_WEIGHT / len(found))
    return terms


def tool_text(tool: "Tool") -> str:
    """The text a tool is found by: name twice, description, parameter names and descriptions."""
    parts = [tool.name, tool.name, tool.description or ""]
    synonyms = (getattr(tool, "metadata", None) or {}).get("synonyms")
    if isinstance(synonyms, (list, tuple)):  # the seed's per-tool synonym list
        parts += [str(s) for s in synonyms]
    for pname, schema in (tool.parameters or {}).get("properties", {}).items():
        parts.append(pname)
        if isinstance(schema, dict) and schema.get("description"):
            parts.append(str(schema["description"]))
    return " ".join(parts)


class _Index:
    """BM25 statistics of one tool set."""

    __slots__ = ("tools", "docs", "lengths", "df", "avgdl")

    def __init__(self, tools: Sequence["Tool"]):
        self.tools = tuple(tools)  # held, so the ids in the cache key stay unique
        self.docs = [Counter(expand(tokenize(tool_text(t)))) for t in tools]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.df: Counter[str] = Counter()
        for d in self.docs:
            self.df.update(d.keys())
        self.avgdl = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0

    def scores(self, query: str) -> list[float]:
        terms = query_terms(tokenize(query))
        n = len(self.docs)
        out = []
        for doc, length in zip(self.docs, self.lengths):
            score = 0.0
            for term, weight in terms.items():
                tf = doc.get(term)
                if tf:
                    idf = math.log(1 + (n - self.df[term] + 0.5) / (self.df[term] + 0.5))
                    score += weight * idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / (self.avgdl or 1)))
            out.append(score)
        return out


_indexes: "OrderedDict[tuple[Any, ...], _Index]" = OrderedDict()
_lock = threading.Lock()  # the caches are shared by every kernel and thread of the process


def _index(tools: Sequence["Tool"]) -> _Index:
    key = tuple((id(t), t.name, t.description, str((t.metadata or {}).get("synonyms", ""))) for t in tools)
    with _lock:
        index = _indexes.get(key)
        if index is not None:
            _indexes.move_to_end(key)
            return index
    index = _Index(tools)
    with _lock:
        _indexes[key] = index
        if len(_indexes) > _INDEX_CACHE_SIZE:
            _indexes.popitem(last=False)
    return index


_NAMEISH = re.compile(r"[A-Za-z_][\w.\-]*")


def _with_name_bonus(tools: Sequence["Tool"], query: str, scores: list[float]) -> list[float]:
    """Tools named verbatim in the query (as a whole word) go first."""
    named = {w.rstrip(".-").lower() for w in _NAMEISH.findall(query)}
    return [s + NAME_BONUS if t.name.lower() in named else s for t, s in zip(tools, scores)]


def _choose(tools: Sequence["Tool"], scores: list[float], limit: int, pinned: Iterable[str]) -> list["Tool"]:
    pinned_names = set(pinned)
    keep = {i for i, t in enumerate(tools) if t.name in pinned_names}
    ranked = sorted((i for i in range(len(tools)) if i not in keep), key=lambda i: (-scores[i], i))
    keep.update(ranked[:max(0, limit - len(keep))])
    return [tools[i] for i in sorted(keep)]


def select_tools(
    tools: Sequence["Tool"], query: str, *, limit: int = 8, pinned: Iterable[str] = (), embedder: Any = None,
) -> list["Tool"]:
    """The ``limit`` tools most relevant to ``query`` (plus every pinned one), in their original order.

    With an ``embedder`` this runs ``aselect_tools`` to completion (works in
    plain scripts, inside a running event loop and in worker threads).
    """
    tools = list(tools)
    if len(tools) <= limit:
        return tools
    if embedder is not None:
        from zagent import run_sync

        return run_sync(aselect_tools(tools, query, limit=limit, pinned=pinned, embedder=embedder))
    scores = _with_name_bonus(tools, query, _index(tools).scores(query))
    return _choose(tools, scores, limit, pinned)


async def aselect_tools(
    tools: Sequence["Tool"], query: str, *, limit: int = 8, pinned: Iterable[str] = (), embedder: Any = None,
) -> list["Tool"]:
    """Async ``select_tools``; ranks by embedding similarity when an ``embedder`` is given."""
    tools = list(tools)
    if len(tools) <= limit:
        return tools
    if embedder is None:
        return select_tools(tools, query, limit=limit, pinned=pinned)
    try:
        scores = await _embedding_scores(embedder, tools, query)
    except Exception:  # retrieval is an optimisation: a failing embedder must not stop the run
        import logging

        logging.getLogger("zagent").warning("tool retrieval: embedder %r failed; using full-text scoring",
                                            embedder, exc_info=True)
        return select_tools(tools, query, limit=limit, pinned=pinned)
    return _choose(tools, _with_name_bonus(tools, query, scores), limit, pinned)


_embedding_caches: "OrderedDict[Any, dict[tuple[str, str], Sequence[float]]]" = OrderedDict()
_MAX_VECTORS_PER_EMBEDDER = 4096
#: numbers cached per embedding model (4,096 vectors of 16,384 numbers would be 2**26)
MAX_CACHED_NUMBERS = 2**24


def embedder_key(embedder: Any) -> Any:
    """Which embedding model an embedder is: its ``cache_key`` attribute if it has one, else its
    class and ``model`` attribute. Instances with the same key share cached tool vectors, so a
    loop asking ``kernel.embedder()`` for a new instance each step still embeds each tool once."""
    key = getattr(embedder, "cache_key", None)
    if key is not None:
        return key
    cls = type(embedder)
    return (cls.__module__, cls.__qualname__, str(getattr(embedder, "model", "")))


def _embedding_cache(embedder: Any) -> dict[tuple[str, str], Sequence[float]]:
    """Tool vectors of this embedding model, keyed by tool (name, description)."""
    key = embedder_key(embedder)
    with _lock:
        cache = _embedding_caches.get(key)
        if cache is None or len(cache) > _MAX_VECTORS_PER_EMBEDDER or \
                len(cache) * len(next(iter(cache.values()), ())) > MAX_CACHED_NUMBERS:
            cache = _embedding_caches[key] = {}
            if len(_embedding_caches) > _EMBEDDER_CACHE_SIZE:
                _embedding_caches.popitem(last=False)
        else:
            _embedding_caches.move_to_end(key)
        return cache


async def _embedding_scores(embedder: Any, tools: list["Tool"], query: str) -> list[float]:
    cache = _embedding_cache(embedder)
    keys = [(t.name, t.description or "") for t in tools]
    missing = [i for i, k in enumerate(keys) if k not in cache]
    from zagent.agentkit.embeddings import checked_vectors

    known = next((cache[k] for k in keys if k in cache), None)  # one length, bounded, finite: a lying server
    vectors = checked_vectors(await embedder.aembed([query] + [tool_text(tools[i]) for i in missing]),
                              len(missing) + 1, embedder, None if known is None else len(known))
    for i, vector in zip(missing, vectors[1:]):
        cache[keys[i]] = vector  # the checked float32 array: 4 bytes a number (a list of floats took 32)
    q = vectors[0]
    return [_cosine(q, cache[k]) for k in keys]


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


__all__ = ["aselect_tools", "embedder_key", "select_tools", "tokenize", "tool_text"]
