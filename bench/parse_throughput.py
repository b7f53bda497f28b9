"""Parse throughput per output mode and tool-call extraction, on realistic replies.

    python bench/parse_throughput.py [--rounds 7] [--seconds 0.3] [--plugin MODULE]

Each case parses one realistic reply (prose around the answer, four fields of
mixed types, a nested list) as many times as fits in ``--seconds``, ``--rounds``
times, and prints the median ops/s and µs/op. Also times ``instructions`` (cached)
and a cold ``compile_fields``-free re-parse of a fresh-but-equal field list, the way
an agent that rebuilds its dict spec every step would call it.
Then times adversarial replies once per round (median ms per parse): long
whitespace runs in a title line, thousands of unclosed XML tags, deep same-name
XML nesting. ``--plugin`` measures another parsers plugin module (e.g. an old
copy on ``PYTHONPATH``) for before/after numbers.
Not a test: prints tables and asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from zagent import Kernel, ParseError

FIELDS = [
    {"name": "thought", "type": "string", "description": "your reasoning"},
    {"name": "answer", "type": "string", "description": "the final answer"},
    {"name": "confidence", "type": "number", "required": False},
    {"name": "sources", "type": "array", "items": {"name": "url", "type": "string"}, "required": False},
]
VALUES = {
    "thought": "The question asks for the capital of France. " * 4 + "Paris has been the capital since 987.",
    "answer": "Paris is the capital of France; it is also its largest city.",
    "confidence": 0.93,
    "sources": ["https://en.wikipedia.org/wiki/Paris", "https://en.wikipedia.org/wiki/France"],
}
PROSE_BEFORE = "Sure! Let me work through this carefully before answering.\n\n"
PROSE_AFTER = "\n\nI hope this helps. Let me know if you need anything else."
TOOL_REPLY = (
    "I need to check two things first.\n"
    '<tool_call>\n{"name": "search", "arguments": {"query": "capital of France", "limit": 5}}\n</tool_call>\n'
    '<tool_call>\n{"name": "fetch", "arguments": {"url": "https://en.wikipedia.org/wiki/Paris"}}\n</tool_call>'
)


def replies(k: Kernel) -> dict[str, tuple[Callable[[], Any], int]]:
    cases: dict[str, tuple[Callable[[], Any], int]] = {}
    for mode in ("title", "json", "xml"):
        p = k.parser(mode)
        text = PROSE_BEFORE + p.render(VALUES, FIELDS) + PROSE_AFTER
        cases[f"parse {mode}"] = ((lambda p=p, text=text: p.parse(text, FIELDS)), len(text))
    jp = k.parser("json")
    fenced = PROSE_BEFORE + "```json\n" + jp.render(VALUES, FIELDS).replace("]", ",]") + "\n```" + PROSE_AFTER
    cases["parse json (fenced, trailing comma)"] = ((lambda: jp.parse(fenced, FIELDS)), len(fenced))
    sp = k.parser("str")
    one = [FIELDS[1]]
    cases["parse str"] = ((lambda: sp.parse(VALUES["answer"], one)), len(VALUES["answer"]))
    cp = k.parser("custom")
    import json

    ctext = json.dumps(VALUES)
    cases["parse custom (json.loads)"] = ((lambda: cp.parse(ctext, FIELDS, parse_func=json.loads)),
                                         len(ctext))
    cases["parse json, fresh dict spec"] = ((lambda: jp.parse(ctext, [dict(f) for f in FIELDS])), len(ctext))
    cases["instructions json (cached)"] = ((lambda: jp.instructions(FIELDS)), 0)
    fmt = k.parser("tool_call")
    cases["extract 2 tool calls"] = ((lambda: fmt.extract(TOOL_REPLY)), len(TOOL_REPLY))
    return cases


def adversarial(k: Kernel) -> dict[str, Callable[[], Any]]:
    """Replies that used to take super-linear time; each callable parses one (a ParseError is fine)."""
    title, xml = k.parser("title"), k.parser("xml")
    one = [{"name": "answer"}]
    cases = {
        "title '## '+8k spaces+'x'": (title, "## " + " " * 8000 + "x"),
        "title '## '+20k spaces+'x'": (title, "## " + " " * 20_000 + "x"),
        "title '## answer'+100 spaces+'x'": (title, "## answer" + " " * 100 + "x"),
        "title '## answer'+200k spaces+'x'": (title, "## answer" + " " * 200_000 + "x"),
        "xml 20k unclosed <answer>": (xml, "<answer>" * 20_000),
        "xml 5k nested <answer>": (xml, "<answer>" * 5000 + "x" + "</answer>" * 5000),
    }

    def parse(p: Any, text: str) -> None:
        try:
            p.parse(text, one)
        except ParseError:
            pass

    return {name: (lambda p=p, text=text: parse(p, text)) for name, (p, text) in cases.items()}


def once(fn: Callable[[], Any]) -> float:
    """Seconds for one call."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(fn: Callable[[], Any], seconds: float) -> float:
    """Operations per second over about ``seconds``."""
    n, start = 0, time.perf_counter()
    while True:
        for _ in range(50):
            fn()
        n += 50
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return n / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=0.3)
    ap.add_argument("--plugin", default="zagent.plugins.parsers", help="parsers plugin module to measure")
    ap.add_argument("--skip", default="", help="skip adversarial cases whose name contains this (e.g. 200k)")
    args = ap.parse_args()
    k = Kernel(plugins=[args.plugin], entry_points=False, strict=True)
    cases = replies(k)
    print(f"{'case':40} {'chars':>6} {'ops/s':>10} {'µs/op':>8}")
    for name, (fn, size) in cases.items():
        fn()  # warm caches
        rates = [measure(fn, args.seconds) for _ in range(args.rounds)]
        rate = statistics.median(rates)
        print(f"{name:40} {size:>6} {rate:>10,.0f} {1e6 / rate:>8.1f}")
    print(f"\n{'adversarial case':40} {'ms/parse':>10}")
    for name, fn in adversarial(k).items():
        if args.skip and args.skip in name:
            print(f"{name:40} {'skipped':>10}")
            continue
        t = statistics.median(once(fn) for _ in range(max(1, min(args.rounds, 3))))
        print(f"{name:40} {t * 1e3:>10,.1f}")
    k.close()


if __name__ == "__main__":
    main()
