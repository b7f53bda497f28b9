"""Tool retrieval by meaning: hit@1 and hit@3 of the shipped scorer against the keyword-only baseline.

    python bench/tool_retrieval.py                  # bench/data/tool_retrieval.json: 63 tools, 126 queries
    python bench/tool_retrieval.py --misses         # also list the queries each scorer gets wrong
    python bench/tool_retrieval.py --data bench/data/tool_retrieval_holdout.json   # 63 other requests

Each tool has a terse description (as tools are written) and two requests a
user might type, most sharing no word with the description ("will it rain"
for ``forecast``: "Tell the weather for a city."). *keyword* is BM25 over
the tool texts alone (zagent before the concept table); *shipped* is
``select_tools`` as it is now (BM25 over words and their concepts,
``zagent.plugins.react.lexicon``). A hit@k is a query whose tool is among
the k best ranked (a tool scoring 0 is never a hit). Not a test: it prints a table and asserts nothing
(tests/react/test_react_retrieval_meaning.py checks a fixed subset).
"""

from __future__ import annotations

import argparse
import json
import pathlib

from zagent import Tool
from zagent.plugins.react import retrieval

DATA = pathlib.Path(__file__).with_name("data") / "tool_retrieval.json"


def load(path: pathlib.Path = DATA) -> tuple[list[Tool], list[tuple[str, str]]]:
    """The tools, and (query, expected tool name) pairs."""
    rows = json.loads(path.read_text())["tools"]
    tools = [Tool(name=name, description=desc, handler=lambda **_: None, parameters={"type": "object"})
             for name, desc, _queries in rows]
    return tools, [(q, name) for name, _desc, queries in rows for q in queries]


def ranks(tools: list[Tool], query: str, keyword_only: bool) -> list[str]:
    """Tool names best first."""
    expand, query_terms = retrieval.expand, retrieval.query_terms
    if keyword_only:  # zagent before the concept table: plain bm25 over the words
        retrieval.expand = lambda words: list(words)
        retrieval.query_terms = lambda words: dict.fromkeys(words, 1.0)
    retrieval._indexes.clear()
    try:
        index = retrieval._Index(tools)
        scores = retrieval._with_name_bonus(tools, query, index.scores(query))
    finally:
        retrieval.expand, retrieval.query_terms = expand, query_terms
        retrieval._indexes.clear()
    order = sorted((i for i in range(len(tools)) if scores[i] > 0), key=lambda i: (-scores[i], i))
    return [tools[i].name for i in order] or ["(none)"]  # no tool scoring anything is a miss, not the first tool


def measure(tools: list[Tool], cases: list[tuple[str, str]], keyword_only: bool) -> tuple[float, float, list[str]]:
    hit1 = hit3 = 0
    misses = []
    for query, expected in cases:
        best = ranks(tools, query, keyword_only)
        hit1 += best[0] == expected
        hit3 += expected in best[:3]
        if best[0] != expected:
            misses.append(f"{query!r}: {best[0]} (want {expected})")
    return hit1 / len(cases), hit3 / len(cases), misses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=pathlib.Path, default=DATA)
    parser.add_argument("--misses", action="store_true")
    args = parser.parse_args()
    tools, cases = load(args.data)
    print(f"{len(tools)} tools, {len(cases)} queries")
    print(f"{'scorer':<10} {'hit@1':>7} {'hit@3':>7}")
    for label, keyword_only in (("keyword", True), ("shipped", False)):
        h1, h3, misses = measure(tools, cases, keyword_only)
        print(f"{label:<10} {h1:>7.1%} {h3:>7.1%}")
        if args.misses:
            print("  misses: " + "\n          ".join(misses))


if __name__ == "__main__":
    main()
