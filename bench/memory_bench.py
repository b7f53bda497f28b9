"""Memory benchmark: batched insert throughput and recall latency of the sqlite backend.

    python bench/memory_bench.py                  # 10k, 100k and 1M stored messages
    python bench/memory_bench.py --sizes 10k,100k --batch 1000 --queries 200
    python bench/memory_bench.py --namespaces 1   # every message in one namespace (scoped recall = all of it)

The store grows to each size in turn (batched ``add``: one transaction per
batch) and is measured there: insert rate over the batches that grew it, and
the median/p90 latency of ``search`` for 3 words taken from a random stored
message, across all namespaces and within one (wall, and CPU time of the
scoped searches: on a loaded machine wall p90 mostly measures the load). Last, the rate of unbatched
single-message ``add`` calls (one commit each). Text is synthetic, with a
Zipf-distributed vocabulary so that some words are very common, as in real chat.
Not a test: it prints a table and asserts nothing.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import tempfile
import time

from zagent import Kernel, Message

VOCAB = 30_000
NAMESPACES = [f"agent{a}/session{s}" for a in range(20) for s in range(50)]


def vocabulary(rng: random.Random) -> tuple[list[str], list[float]]:
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "do", "fi", "gu", "he", "ja"]
    words = sorted({"".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(VOCAB * 2)})[:VOCAB]
    rng.shuffle(words)
    weights = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(words))))
    return words, weights


def sentences(rng: random.Random, words: list[str], cum: list[float], n: int) -> list[str]:
    return [" ".join(rng.choices(words, cum_weights=cum, k=rng.randint(8, 30))) for _ in range(n)]


def grow(mem, rng, words, cum, start: int, stop: int, batch: int, namespaces: list[str]) -> tuple[float, list[str]]:
    """Add messages until ``stop``; return (messages/s counting only ``add`` time, a sample of texts)."""
    spent, sample = 0.0, []
    for done in range(start, stop, batch):
        n = min(batch, stop - done)
        texts = sentences(rng, words, cum, n)
        ns = rng.choice(namespaces)
        msgs = [Message(role="user" if i % 2 else "assistant", content=t) for i, t in enumerate(texts)]
        t0 = time.perf_counter()
        mem.add(ns, msgs)
        spent += time.perf_counter() - t0
        sample.extend(rng.sample(texts, min(5, n)))
    return (stop - start) / spent if spent else float("nan"), sample


def recall(mem, rng, sample: list[str], queries: int, scoped: bool,
           namespaces: list[str]) -> tuple[float, float, float]:
    """(median ms, p90 ms, mean hits) of ``search`` for 3 words of a stored message."""
    times, cpu, hits = [], [], 0
    for _ in range(queries):
        text = " ".join(rng.sample(rng.choice(sample).split(), 3))
        ns = rng.choice(namespaces) if scoped else None
        t0, c0 = time.perf_counter(), time.process_time()
        found = mem.search(ns, text, limit=10)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        hits += len(found)
    times.sort()
    cpu.sort()
    recall.cpu = (statistics.median(cpu), cpu[int(len(cpu) * 0.9)])  # type: ignore[attr-defined]
    return statistics.median(times), times[int(len(times) * 0.9)], hits / queries


def single_adds(mem, n: int = 200) -> float:
    """Messages/s when each message is its own transaction (one commit, one fsync each)."""
    t0 = time.perf_counter()
    for i in range(n):
        mem.add("bench/single", Message.user(f"single message {i}"))
    return n / (time.perf_counter() - t0)


def parse_size(text: str) -> int:
    text = text.strip().lower()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * scale)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10k,100k,1m", help="comma-separated store sizes (10k, 100k, 1m ...)")
    ap.add_argument("--batch", type=int, default=1000, help="messages per add() transaction")
    ap.add_argument("--queries", type=int, default=200, help="searches per measurement")
    ap.add_argument("--path", default=None, help="database file (default: a temporary file, deleted after)")
    ap.add_argument("--synchronous", default="full", choices=["full", "normal"])
    ap.add_argument("--before", action="store_true",
                    help="before/after: recall as before the FTS5-first shortcut for big namespaces and the "
                         "postings budget (max_postings=None)")
    ap.add_argument("--namespaces", type=int, default=len(NAMESPACES),
                    help=f"how many namespaces the messages are spread over (default {len(NAMESPACES)}; 1: one)")
    args = ap.parse_args()
    namespaces = NAMESPACES[:args.namespaces] if args.namespaces > 1 else ["agent0/session0"]
    sizes = sorted(parse_size(s) for s in args.sizes.split(","))
    rng = random.Random(7)
    words, cum = vocabulary(rng)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.path or os.path.join(tmp, "bench.db")
        k = Kernel(plugins=["zagent.plugins.memory"], entry_points=False)
        mem = k.memory("sqlite", path=path, synchronous=args.synchronous)
        if args.before:
            from zagent.plugins.memory.fts import CommonWords

            class NoShortcut(CommonWords):
                def share(self, conn, namespace):
                    return 0.0

            mem.common = NoShortcut(mem.common.common_ratio, mem.common.common_min, None)
        print(f"sqlite memory bench: batch={args.batch} synchronous={args.synchronous} queries={args.queries} "
              f"namespaces={len(namespaces)}")
        print(f"{'stored':>10} {'insert msg/s':>13} {'recall all ms (p50/p90)':>24} "
              f"{'recall 1 ns ms (p50/p90)':>25} {'1 ns CPU ms (p50/p90)':>22} {'hits':>5} {'file MB':>8}")
        stored, sample = mem.count(), []
        for size in sizes:
            rate, more = grow(mem, rng, words, cum, stored, size, args.batch, namespaces)
            stored, sample = max(stored, size), sample + more
            if not sample:  # a reused file already that big: sample what it holds
                sample = [m.content for ns in namespaces[:50] for m in mem.last(ns, 20)]
            a50, a90, hits = recall(mem, rng, sample, args.queries, False, namespaces)
            n50, n90, _ = recall(mem, rng, sample, args.queries, True, namespaces)
            mb = sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p)) / 1e6
            c50, c90 = recall.cpu  # type: ignore[attr-defined]
            print(f"{size:>10,} {rate:>13,.0f} {a50:>12.2f} / {a90:<9.2f} {n50:>13.2f} / {n90:<9.2f} "
                  f"{c50:>10.2f} / {c90:<9.2f} {hits:>5.1f} {mb:>8.0f}", flush=True)
        print(f"unbatched add() (one transaction per message): {single_adds(mem):,.0f} msg/s")
        mem.close()


if __name__ == "__main__":
    main()
