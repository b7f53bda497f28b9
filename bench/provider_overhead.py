"""Per-call overhead of ``k.llm("openai:...").acomplete()`` versus a bare ``httpx.AsyncClient`` post.

Starts a loopback OpenAI-compatible server in a child process, then runs
paired rounds, alternating which side goes first. The server (``--server``):
``peers``, the peers' ``mock_server.py`` in ``../shared/bench/peers/`` beside
this checkout (or beside the main checkout, for a git worktree); ``own``, this
checkout's ``tests/servers/openai_server.py``, found relative to this file
(never through ``sys.path``); ``auto`` (the default), ``peers`` when present,
else ``own``, saying which and why. A server that cannot be found or does
not start is a clear error (with the child's stderr), never a silent fallback.

* sequential: ``--seq`` calls one after another, per-call median;
* streamed: ``--seq``/3 streamed calls one after another (SSE, usage included), per-call median;
* concurrent: ``--conc`` calls at once (``asyncio.gather``), wall time / calls,
  median of three bursts after one that opens the connections.

Both sides send the same request (one user message and one ``add`` tool) and
read the reply (text or tool calls). Both floors use the same pool limits as
zagent's defaults (httpx's own: 100 connections, 20 kept alive; the peers'
floor uses them too): ``bare`` sends everything at the pool, ``bare_gated``
puts a FIFO semaphore of the pool's size in front of it, as zagent's
``max_in_flight`` does. When httpx2 is installed, zagent is also measured with
``client_factory=httpx2.AsyncClient``. Prints medians and ratios (median of per-round ratios).

    python bench/provider_overhead.py [--rounds 5] [--seq 300] [--conc 500] [--server auto|peers|own]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
PEERS = Path("shared") / "bench" / "peers" / "mock_server.py"  # relative to the folder holding a checkout
OWN = Path("tests") / "servers" / "openai_server.py"  # relative to this checkout

MESSAGES = [{"role": "user", "content": "What is 2 + 3? Use the add tool."}]
ADD = {"name": "add", "description": "Add two integers.",
       "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                      "required": ["a", "b"]}}


def peers_mock(root: Path = ROOT) -> Optional[Path]:
    """The peers' mock server beside ``root``, or beside the main checkout when ``root`` is a git worktree."""
    candidates = [root.parent / PEERS]
    common = subprocess.run(["git", "-C", str(root), "rev-parse", "--path-format=absolute", "--git-common-dir"],
                            capture_output=True, text=True)
    if common.returncode == 0 and common.stdout.strip():
        candidates.append(Path(common.stdout.strip()).parent.parent / PEERS)
    return next((c for c in candidates if c.is_file()), None)


def server_command(choice: str = "auto", root: Path = ROOT) -> tuple[list[str], str]:
    """``(argv, label)`` of the server to start; ``SystemExit`` naming the paths looked at when there is none."""
    peers = peers_mock(root) if choice in ("auto", "peers") else None
    if peers is not None:
        return [sys.executable, str(peers), "--port", "0"], f"peers mock_server ({peers})"
    own = root / OWN
    if choice == "peers":
        raise SystemExit(f"--server peers: no {PEERS} beside {root} (nor beside its main checkout)")
    if not own.is_file():
        raise SystemExit(f"no loopback server: {own} does not exist (this file's checkout), "
                         f"and no peers' {PEERS} was found beside {root}")
    why = "" if choice == "own" else f", no peers' {PEERS} beside {root}"
    return ([sys.executable, "-c", _OWN_SERVER, str(Path(__file__).resolve().parent), str(own.parent)],
            f"tests/servers ({own}{why})")


def start_server(choice: str = "auto", root: Path = ROOT) -> tuple[subprocess.Popen, str, str]:
    """Start the server in a child process: ``(process, base URL, label)``; ``SystemExit`` with the child's
    stderr if it does not say ``LISTENING <port>``."""
    cmd, label = server_command(choice, root)
    errors = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errors, text=True, cwd=str(root))
    line = proc.stdout.readline()
    if not line.startswith("LISTENING"):
        proc.kill()
        proc.wait(5)
        errors.seek(0)
        raise SystemExit(f"the loopback server ({label}) did not start: it printed {line!r}\n{errors.read()}")
    return proc, f"http://127.0.0.1:{line.split()[1]}/v1", label


def own_servers(folder: Path):
    """A checkout's ``tests/servers`` (``folder``), loaded by file path as the package ``zagent_bench_servers``,
    so another ``tests`` package on ``sys.path`` (or the current directory) can never stand in for it."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("zagent_bench_servers", Path(folder) / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = package
    spec.loader.exec_module(package)
    return package


# The child that serves tests/servers' OpenAI server: argv = [folder of this file, folder of tests/servers].
_OWN_SERVER = """
import importlib, sys, time
sys.path.insert(0, sys.argv[1])
from provider_overhead import own_servers
own_servers(sys.argv[2])
OpenAIServer = importlib.import_module("zagent_bench_servers.openai_server").OpenAIServer
with OpenAIServer(key=None) as s:
    print('LISTENING', s.port, flush=True)
    while True:
        time.sleep(3600)
"""


class Bare:
    """The floor: a hand-written post with httpx and stdlib json."""

    def __init__(self, base_url: str, limits=None, gate: int = 0):
        import httpx

        kw = {"limits": limits} if limits is not None else {}
        self.client = httpx.AsyncClient(base_url=base_url, headers={"Authorization": "Bearer x"},
                                        timeout=httpx.Timeout(120.0), **kw)
        self.payload = {"model": "mock-model", "messages": MESSAGES, "tools": [{"type": "function", "function": ADD}]}
        self.gate = asyncio.Semaphore(gate) if gate else None

    async def call(self):
        if self.gate is None:
            return await self._call()
        async with self.gate:
            return await self._call()

    async def _call(self):
        r = await self.client.post("/chat/completions", json=self.payload)
        r.raise_for_status()
        msg = r.json()["choices"][0]["message"]
        return msg.get("content") or msg.get("tool_calls")

    async def stream(self):
        payload = {**self.payload, "stream": True, "stream_options": {"include_usage": True}}
        parts = []
        async with self.client.stream("POST", "/chat/completions", json=payload) as r:
            r.raise_for_status()
            async for line in r.aiter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    for choice in json.loads(line[6:])["choices"]:
                        delta = choice.get("delta") or {}
                        parts.append(delta.get("content") or delta.get("tool_calls") or "")
        return parts

    async def aclose(self):
        await self.client.aclose()


class Zagent:
    """The same call through ``Kernel.llm('openai:...')``."""

    def __init__(self, base_url: str, **options):
        from zagent import Kernel, ToolSpec

        self.kernel = Kernel(plugins=["zagent.plugins.openai"], entry_points=False)
        self.llm = self.kernel.llm("openai:mock-model", base_url=base_url, api_key="x", **options)
        self.tools = [ToolSpec(**ADD)]

    async def call(self):
        c = await self.llm.acomplete(MESSAGES[0]["content"], tools=self.tools)
        return c.text or c.tool_calls

    async def stream(self):
        return [chunk async for chunk in self.llm.astream(MESSAGES[0]["content"], tools=self.tools)]

    async def aclose(self):
        await self.llm.aclose()


async def seq(side, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        await side.call()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


async def conc(side, n: int) -> float:
    t = time.perf_counter()
    results = await asyncio.gather(*[side.call() for _ in range(n)])
    assert all(results)
    return (time.perf_counter() - t) / n


async def seq_stream(side, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        await side.stream()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


async def measure(make, n_seq: int, n_conc: int) -> tuple[float, float, float]:
    side = make()
    try:
        for _ in range(20):
            await side.call()
        gc.collect()
        s = await seq(side, n_seq)
        st = await seq_stream(side, max(1, n_seq // 3))
        await conc(side, n_conc)  # open the pool's connections
        bursts = []
        for _ in range(3):
            gc.collect()
            bursts.append(await conc(side, n_conc))
        return s, statistics.median(bursts), st
    finally:
        await side.aclose()


async def main_async(args, base_url: str) -> None:
    import httpx

    limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)  # zagent's defaults (HttpConfig)
    sides = {"bare": lambda: Bare(base_url, limits), "bare_gated": lambda: Bare(base_url, limits, gate=100),
             "zagent": lambda: Zagent(base_url, **{"http_module": "httpx", **args.zagent_opt})}
    try:
        if args.no_httpx2:
            raise ImportError
        import httpx2

        sides["zagent_httpx2"] = lambda: Zagent(base_url, client_factory=httpx2.AsyncClient)
    except ImportError:
        pass
    results = {name: [] for name in sides}
    for r in range(args.rounds):
        order = list(sides) if r % 2 == 0 else list(reversed(sides))
        for name in order:
            results[name].append(await measure(sides[name], args.seq, args.conc))
        print(f"round {r + 1}: " + "  ".join(
            f"{n} seq {results[n][-1][0] * 1e6:.0f}us conc {results[n][-1][1] * 1e6:.0f}us "
            f"stream {results[n][-1][2] * 1e6:.0f}us" for n in sides),
            flush=True)
    print()
    for i, kind in enumerate(("sequential", f"{args.conc} concurrent", "seq. streamed")):
        med = {n: statistics.median(v[i] for v in results[n]) for n in sides}
        for ours in [n for n in sides if n.startswith("zagent")]:
            for floor in ("bare", "bare_gated"):
                ratio = statistics.median(z[i] / b[i] for z, b in zip(results[ours], results[floor]))
                print(f"{kind:>16}: {ours:<13} {med[ours] * 1e6:7.0f} us/call  {floor:<10} "
                      f"{med[floor] * 1e6:7.0f} us/call  ratio {ratio:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seq", type=int, default=300)
    ap.add_argument("--conc", type=int, default=500)
    ap.add_argument("--zagent-opt", action="append", default=[], metavar="KEY=INT",
                    help="an option for k.llm(...) on the zagent side, e.g. max_connections=100")
    ap.add_argument("--no-httpx2", action="store_true", help="skip the httpx2 side even if installed")
    ap.add_argument("--server", choices=("auto", "peers", "own"), default="auto",
                    help="the peers' mock server, this checkout's tests/servers one, or the first found (default)")
    args = ap.parse_args()
    args.zagent_opt = {k: int(v) for k, v in (o.split("=", 1) for o in args.zagent_opt)}
    sys.path.insert(0, str(ROOT))
    proc, base_url, label = start_server(args.server)
    try:
        print(f"server {base_url} ({label}), pid {os.getpid()}, rounds {args.rounds}", flush=True)
        asyncio.run(main_async(args, base_url))
    finally:
        proc.terminate()
        proc.wait(5)


if __name__ == "__main__":
    main()
