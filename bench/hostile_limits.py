"""How the HTTP limits hold against hostile servers: time to the typed error and peak memory.

For each case a fresh child process builds ``openai:m`` against a loopback
hostile server (``tests/servers/hostile.py``) and calls it once:

* ``endless_body``: a 200 whose chunked body never ends (default 32 MiB limit);
* ``trickle``: one byte every 50 ms, forever (deadline 5 s, read timeout 120 s);
* ``endless_stream``: an event stream that never finishes (deadline 5 s);
* ``endless_stream_fast``: the same with no pause between events (32 MiB limit, no deadline);
* ``gzip_bomb``: ``Content-Encoding: gzip, gzip``, about 2 KB inflating to 1 GiB (32 MiB limit, counted on
  the decoded bytes: memory stays near the limit);
* ``sse_no_newline``: one 30 MiB event-stream line with no newline, in 16 KiB chunks (CPU linear in it);
* ``nested_json``: the lenient JSON search of a 9.8 MB json-mode reply nested 1.4 M objects deep (no
  server: the CPU the parse takes, bounded by its search budget; actions run it off the event loop).

Prints the error type, seconds to the error, the CPU seconds the child used for it (user + system), and
the child's peak RSS (``ru_maxrss``) before and after the call.

    python bench/hostile_limits.py [--case NAME ...]

The server comes from this checkout's ``tests/servers``, loaded by file path (never through ``sys.path``,
so another ``tests`` package cannot stand in for it).
"""

from __future__ import annotations

import argparse
import importlib
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OWN = ROOT / "tests" / "servers"

CASES = {
    "endless_body": ("endless_body()", {}),
    "trickle": ("trickle(every=0.05)", {"deadline": 5}),
    "endless_stream": ("endless_sse(every=0.01)", {"deadline": 5}),
    "endless_stream_fast": ("endless_sse(every=0, text='z' * 1000)", {"deadline": None}),
    "gzip_bomb": ("encoded(bomb(2**30, layers=2), 'gzip, gzip')", {}),
    "sse_no_newline": ("long_line(30 * 2**20)", {"deadline": None}),
    "nested_json": (None, {}),
}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def parse_child() -> None:
    """``nested_json``: the lenient search over a reply nested 1.4 M levels (the parsers plugin, no server)."""
    from zagent.plugins.parsers import jsontext

    n = 1_400_000
    text = '{"a": ' * n + "1" + "}" * n
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start, cpu = time.perf_counter(), _cpu()
    found = jsontext.first_object(text, {"answer"})
    seconds, cpu = time.perf_counter() - start, _cpu() - cpu
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"case": "nested_json", "error": "no JSON found" if found is None else "found",
                      "seconds": seconds, "cpu": cpu, "rss_before_mb": before / 1024, "rss_peak_mb": after / 1024}))


def own_hostile():
    """This checkout's ``tests/servers/hostile.py``, loaded by file path (``provider_overhead.own_servers``)."""
    if not (OWN / "hostile.py").is_file():
        raise SystemExit(f"no hostile server: {OWN / 'hostile.py'} does not exist (this file's checkout)")
    sys.path.insert(0, str(ROOT / "bench"))
    from provider_overhead import own_servers

    own_servers(OWN)
    return importlib.import_module("zagent_bench_servers.hostile")


def child(case: str) -> None:
    if case == "nested_json":
        return parse_child()
    hostile = own_hostile()
    HostileServer = hostile.HostileServer
    from zagent import Kernel, ZagentError

    behaviour, options = CASES[case]
    with HostileServer(eval(behaviour, {**vars(hostile)})) as server, \
            Kernel(plugins=["zagent.plugins.openai"], entry_points=False) as k:
        llm = k.llm("openai:m", base_url=server.url, api_key="x", **options)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start, cpu = time.perf_counter(), _cpu()
        try:
            if "stream" in case or case == "sse_no_newline":
                for _ in llm.stream("hi"):
                    pass
            else:
                llm.complete("hi")
            error = "no error"
        except ZagentError as exc:
            error = type(exc).__name__
        seconds, cpu = time.perf_counter() - start, _cpu() - cpu
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"case": case, "error": error, "seconds": seconds, "cpu": cpu, "rss_before_mb": before / 1024,
                      "rss_peak_mb": after / 1024}))


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        return child(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", action="append", choices=sorted(CASES),
                    help="run only this case (repeatable; default: every case)")
    cases = ap.parse_args().case or list(CASES)
    print(f"{'case':<22} {'error':<18} {'seconds':>8} {'CPU s':>7} {'RSS before':>11} {'RSS peak':>9}")
    for case in cases:
        out = subprocess.run([sys.executable, __file__, "--child", case], capture_output=True, text=True,
                             timeout=300)
        if out.returncode:
            print(f"{case:<22} failed: {out.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{case:<22} {r['error']:<18} {r['seconds']:8.2f} {r['cpu']:7.2f} {r['rss_before_mb']:9.1f}MB "
              f"{r['rss_peak_mb']:7.1f}MB")


if __name__ == "__main__":
    main()
