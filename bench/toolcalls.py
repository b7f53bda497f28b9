"""BFCL first-turn tool calling against a real OpenAI-compatible server: zagent's defaults, formats, baselines.

Data and scoring come from the Berkeley Function Calling Leaderboard package, installed without its
(heavy: torch, vllm clients...) dependencies::

    pip install --no-deps bfcl-eval==2026.3.23

Only the JSON data files and BFCL's own AST checker module are loaded (the checker's one heavy import,
the model-config table, is replaced by a stub saying no model renames dotted names). Development
categories only: ``live_multiple``, ``live_parallel``, ``live_parallel_multiple``, ``live_irrelevance``,
``live_relevance`` by default; the held-out categories (``HELD_OUT``: ``simple_python``, ``multiple``,
``parallel``, ``parallel_multiple``, ``irrelevance``, ``live_simple``) run only with ``--held-out``, for
the acceptance measurement (never tune on them); any other category is refused.

Each case is the first turn of a BFCL entry; a variant is scored on the calls it would run:

- ``native``: the server's own ``tools=`` (what an app gets from the API), calls from ``tool_calls`` only;
- ``handwritten``: BFCL's default prompt (functions as JSON, reply ``[f(a=1)]``), read by BFCL's rule;
- ``default``: zagent with no profile set: the first step of a ReAct agent's run, the calls it makes;
- ``chat``: the same agent's ``chat(question)`` (a mode decision first, then that step);
- ``react:<format>`` / ``react:native``: that step with the profile set to prompt mode in that text
  format, or to native mode (with the text fallback).

Prompt tokens per case are the server's counts, summed over the case's requests. No timing asserts.

    python bench/toolcalls.py --url http://127.0.0.1:8080/v1 --model qwen2.5-coder-0.5b --limit 12

``--offset N`` picks another slice of the same size (every case N entries further on), so a change can be
tuned on one slice of the development set and checked on another. ``--replay RUN.json --variants default``
reads an earlier run's recorded replies with the current code (no server): a change to how replies are read
(parsing, grounding) measured on the very same replies; a change to the prompt needs a real run.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import statistics
import sys
import time
import types
from importlib import resources
from pathlib import Path
from typing import Any

import httpx

DEV = ("live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance")
#: the held-out categories (issue 29's acceptance): run only with ``--held-out``, never to tune on
HELD_OUT = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance", "live_simple")
FORMATS = ("tool_call", "hermes", "mistral", "llama3", "fenced", "pycall")
VARIANTS = ("native", "handwritten", "default", "chat", "react:native", *(f"react:{f}" for f in FORMATS))
_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": "string", "list": "array",
          "bool": "boolean", "int": "integer", "str": "string"}

#: BFCL's default system prompt for prompting models (constants/default_prompts.py, "classic" style)
HANDWRITTEN = (
    "You are an expert in composing functions. You are given a question and a set of possible functions. Based on "
    "the question, you will need to make one or more function/tool calls to achieve the purpose.\n"
    "If none of the functions can be used, point it out. If the given question lacks the parameters required by "
    "the function, also point it out.\nYou should only return the function calls in your response.\n\n"
    "If you decide to invoke any of the function(s), you MUST put it in the format of [func_name1(params_name1="
    "params_value1, params_name2=params_value2...), func_name2(params)]\nYou SHOULD NOT include any other text in "
    "the response.\n\nAt each turn, you should try your best to complete the tasks requested by the user within the "
    "current turn. Continue to output functions to call until you have fulfilled the user's request to the best of "
    "your ability. Once you have no more functions to call, the system will consider the current turn complete and "
    "proceed to the next turn or task.\n\nHere is a list of functions in json format that you can invoke.\n{functions}\n")


# -- BFCL data and checker -----------------------------------------------------------------


def _bfcl_root() -> Any:
    try:
        return resources.files("bfcl_eval")
    except ModuleNotFoundError:
        sys.exit("bench/toolcalls.py needs BFCL's data: pip install --no-deps bfcl-eval==2026.3.23")


def load_checker() -> Any:
    """BFCL's ``ast_checker`` function, with its heavy model-config import stubbed out."""
    stub = types.ModuleType("bfcl_eval.constants.model_config")
    stub.MODEL_CONFIG_MAPPING = collections.defaultdict(lambda: types.SimpleNamespace(underscore_to_dot=False))
    sys.modules.setdefault("bfcl_eval.constants.model_config", stub)
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    return ast_checker


def load_cases(category: str, limit: int, held_out: bool = False, offset: int = 0) -> list[dict[str, Any]]:
    """``limit`` cases of ``category`` spread evenly over it (fixed ids for a given limit), with answers.
    ``offset`` shifts every pick by that many entries (wrapping round), so another slice of the same size
    can be checked on (``offset=0`` is the original slice; with ``0 < offset < len // limit`` no case of
    the original slice is picked again). A held-out category needs ``held_out=True`` (the acceptance run;
    results are not to be tuned on)."""
    if category not in DEV and not (held_out and category in HELD_OUT):
        sys.exit(f"{category!r} is not a development category ({', '.join(DEV)}); the held-out ones "
                 f"({', '.join(HELD_OUT)}) run only with --held-out, for acceptance")
    root = _bfcl_root() / "data"
    entries = [json.loads(line) for line in (root / f"BFCL_v4_{category}.json").read_text().splitlines() if line]
    answers: dict[str, Any] = {}
    answer_file = root / "possible_answer" / f"BFCL_v4_{category}.json"
    if answer_file.is_file():
        for line in answer_file.read_text().splitlines():
            if line:
                item = json.loads(line)
                answers[item["id"]] = item["ground_truth"]
    step = max(1, len(entries) // limit) if limit else 1
    if not limit:
        picked = entries
    else:
        idx = sorted({(i * step + offset) % len(entries) for i in range(min(limit, len(entries)))})
        picked = [entries[i] for i in idx]
    for e in picked:
        e["ground_truth"] = answers.get(e["id"])
    return picked


def load_ids(category: str, ids: list[str]) -> list[dict[str, Any]]:
    """The cases of ``category`` with these ids, in that order (a fixed slice, e.g. for CI)."""
    by_id = {e["id"]: e for e in load_cases(category, 0)}
    return [by_id[i] for i in ids]


def to_schema(value: Any) -> Any:
    """BFCL's parameter schema as JSON Schema (``dict`` -> ``object``, ``float`` -> ``number``...)."""
    if isinstance(value, dict):
        out = {k: to_schema(v) for k, v in value.items()}
        if isinstance(out.get("type"), str):
            out["type"] = _TYPES.get(out["type"], out["type"])
        return out
    if isinstance(value, list):
        return [to_schema(v) for v in value]
    return value


def score(checker: Any, category: str, case: dict[str, Any], calls: list[tuple[str, Any]]) -> bool:
    """BFCL's verdict on ``calls`` (``(name, arguments)`` pairs) for ``case``."""
    if "irrelevance" in category:
        return not calls
    if category.endswith("relevance"):
        return bool(calls)
    output = [{name: args if isinstance(args, dict) else {}} for name, args in calls]
    if not output:
        return False
    try:
        result = checker(case["function"], output, case["ground_truth"], _Lang.PYTHON, category, "zagent")
    except Exception:  # the checker on a malformed output: wrong
        return False
    return bool(result.get("valid"))


class _Lang:
    PYTHON: Any = None


# -- variants -------------------------------------------------------------------------------


class Bench:
    def __init__(self, url: str, model: str, max_tokens: int, replay: dict[str, str] | None = None):
        self.url = url.rstrip("/")
        self.model = model
        self.max_tokens = max_tokens
        self.http = httpx.AsyncClient(timeout=600)
        #: ``--replay``: the recorded default-variant reply per case id, read again instead of asking the server
        self.replay = replay

    async def post(self, body: dict[str, Any]) -> dict[str, Any]:
        body = {"model": self.model, "temperature": 0, "max_tokens": self.max_tokens, **body}
        r = await self.http.post(f"{self.url}/chat/completions", json=body, headers={"Authorization": "Bearer x"})
        r.raise_for_status()
        return r.json()

    async def native(self, case: dict[str, Any]) -> tuple[list, int, str]:
        tools, back = [], {}
        for f in case["function"]:
            safe = f["name"].replace(".", "_")
            back[safe] = f["name"]
            tools.append({"type": "function", "function": {**f, "name": safe, "parameters": to_schema(f["parameters"])}})
        reply = await self.post({"messages": case["question"][0], "tools": tools, "tool_choice": "auto"})
        msg = reply["choices"][0]["message"]
        calls = []
        for c in msg.get("tool_calls") or []:
            try:
                args = json.loads(c["function"]["arguments"] or "{}")
            except ValueError:
                args = None
            calls.append((back.get(c["function"]["name"], c["function"]["name"]), args))
        return calls, reply["usage"]["prompt_tokens"], msg.get("content") or ""

    async def handwritten(self, case: dict[str, Any]) -> tuple[list, int, str]:
        from zagent.plugins.parsers import pycall

        system = HANDWRITTEN.format(functions=json.dumps(case["function"]))
        messages = list(case["question"][0])
        if messages and messages[0]["role"] == "system":
            messages = [{"role": "system", "content": system + "\n\n" + messages[0]["content"]}, *messages[1:]]
        else:
            messages = [{"role": "system", "content": system}, *messages]
        reply = await self.post({"messages": messages})
        text = reply["choices"][0]["message"].get("content") or ""
        body = text.strip("`\n ")  # BFCL's default_decode_ast_prompting: strip, wrap in [...], ast-parse
        body = ("" if body.startswith("[") else "[") + body + ("" if body.endswith("]") else "]")
        found = pycall._parse(body)
        calls = [(c.name, c.arguments) for c in found[0]] if found and not found[1] else []
        return calls, reply["usage"]["prompt_tokens"], text

    async def zagent(self, case: dict[str, Any], variant: str) -> tuple[list, int, str]:
        from zagent import Kernel, Tool
        from zagent.errors import NoAnswerError

        k = Kernel(plugins=["zagent.plugins.openai", "zagent.plugins.offline", "zagent.plugins.parsers",
                            "zagent.plugins.actions", "zagent.plugins.react"], entry_points=False)
        profile: dict[str, Any] = {}
        if variant == "react:native":
            profile = {"native_tools": True}
        elif variant.startswith("react:"):
            profile = {"native_tools": False, "tool_format": variant.split(":", 1)[1]}
        llm_config: dict[str, Any] = {"base_url": self.url, "api_key": "sk-local", "temperature": 0, "timeout": 900}
        if profile:
            llm_config["profile"] = profile
        names = []
        for f in case["function"]:
            k.add_tool(Tool(name=f["name"], description=f.get("description", ""), handler=lambda **kw: "done",
                            parameters=to_schema(f["parameters"])))
            names.append(f["name"])
        messages = case["question"][0]
        system = next((m["content"] for m in messages if m["role"] == "system"), None)
        past = [m for m in messages[:-1] if m["role"] != "system"]
        spec: dict[str, Any] = {"type": "react", "name": "bench", "tools": names, "max_iterations": 1,
                                "llm": f"openai:{self.model}", "llm_config": llm_config}
        if self.replay is not None:  # the recorded reply, read by this code (the server's probe chose pycall)
            spec["llm"] = "scripted:bench"
            spec["llm_config"] = {"replies": [self.replay.get(case["id"], "")],
                                  "profile": {"native_tools": False, "tool_format": "pycall"}}
        if system:
            spec["system_prompt"] = system
        agent = k.agent(spec)
        try:
            try:
                if variant == "chat":  # Agent.chat: the mode decision first, then the ReAct loop
                    reply = await agent.achat(messages[-1]["content"], history=past)
                    steps, text = reply.steps, reply.content
                else:
                    result = await agent.loop().arun(messages[-1]["content"], history=past)
                    steps, text = result.steps, result.content
            except NoAnswerError as exc:
                steps, text = list(exc.trajectory or []), ""
            usage = await _usage(k)
        finally:
            await k.aclose()
        # the calls it ran: a call the loop refused (a made-up value, past the reply's cap) never runs, and
        # ReAct's own ask_clarification (answered by the loop, in a reply with other calls) is not a function
        calls = [(s.tool, s.parameters) for s in steps
                 if getattr(s, "action", "") == "use_tool" and s.tool and s.tool != "ask_clarification"
                 and not getattr(s, "is_blocked", False)]
        return calls, usage, text


async def _usage(k: Any) -> int:
    """The prompt tokens of zagent's requests since the last case (counted by ``_patch_usage``)."""
    n, _TOKENS["n"] = _TOKENS["n"], 0
    return n


# -- running -------------------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> dict[str, Any]:
    checker = load_checker()
    from bfcl_eval.constants.enums import Language

    _Lang.PYTHON = Language.PYTHON
    replay = None
    if args.replay:
        if set(args.variants) != {"default"}:
            sys.exit("--replay reads the default variant's recorded replies: use it with --variants default")
        replay = {r["id"]: r["requests"][-1]["reply"] for r in json.loads(Path(args.replay).read_text())["records"]
                  if r["variant"] == "default" and r.get("requests")}
    bench = Bench(args.url, args.model, args.max_tokens, replay)
    _patch_usage()
    results: dict[str, dict[str, list]] = {v: {} for v in args.variants}
    records = []
    for category in args.categories:
        cases = load_cases(category, args.limit, args.held_out, args.offset)
        if replay is not None:
            cases = [c for c in cases if c["id"] in replay]
        for case in cases:
            for variant in args.variants:
                started = time.monotonic()
                if variant == "native":
                    calls, tokens, text = await bench.native(case)
                elif variant == "handwritten":
                    calls, tokens, text = await bench.handwritten(case)
                else:
                    calls, tokens, text = await bench.zagent(case, variant)
                ok = score(checker, category, case, calls)
                results[variant].setdefault(category, []).append((ok, tokens))
                records.append({"id": case["id"], "variant": variant, "ok": ok, "calls": calls, "text": text[:4000],
                                "prompt_tokens": tokens, "seconds": round(time.monotonic() - started, 2),
                                "requests": list(_TRACE)})
                _TRACE.clear()
                if args.verbose:
                    print(f"{case['id']:<32} {variant:<18} {'ok ' if ok else 'bad'} {tokens:>5} "
                          f"{time.monotonic() - started:5.1f}s {calls!s:.90}", flush=True)
                if args.json:
                    Path(args.json).write_text(json.dumps({"records": records}, indent=1, default=str))
    await bench.http.aclose()
    return {"results": results, "records": records}


_TOKENS = {"n": 0}
_TRACE: list[dict[str, Any]] = []


def _patch_usage() -> None:
    """Count the prompt tokens zagent's requests use (the OpenAI provider's reply usage, per call, as the server
    sent it: ``_wire_complete``, before the kit maps names back and splits think spans)."""
    from zagent.plugins.openai.provider import OpenAILLM

    original = OpenAILLM._wire_complete

    async def counted(self: Any, request: Any) -> Any:
        completion = await original(self, request)
        _TOKENS["n"] += completion.usage.input_tokens
        _TRACE.append({"tools": len(request.tools), "max_tokens": request.options.get("max_tokens"),
                       "reply": (completion.message.content or "")[:4000],
                       "native_calls": [c.name for c in completion.message.tool_calls]})
        return completion

    OpenAILLM._wire_complete = counted  # type: ignore[method-assign]


def table(results: dict[str, dict[str, list]], categories: list[str]) -> str:
    head = "| variant | " + " | ".join(categories) + " | total | prompt tokens/case (median) |"
    lines = [head, "|" + "---|" * (len(categories) + 3)]
    for variant, by_cat in results.items():
        cells, good, n, tokens = [], 0, 0, []
        for c in categories:
            rows = by_cat.get(c, [])
            k = sum(1 for ok, _ in rows if ok)
            cells.append(f"{k}/{len(rows)}")
            good, n = good + k, n + len(rows)
            tokens.extend(t for _, t in rows)
        pct = f"{100 * good / n:.0f}%" if n else "-"
        med = f"{statistics.median(tokens):.0f}" if tokens else "-"
        lines.append(f"| {variant} | " + " | ".join(cells) + f" | {good}/{n} ({pct}) | {med} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default="http://127.0.0.1:8080/v1")
    p.add_argument("--model", default="qwen2.5-coder-0.5b")
    p.add_argument("--limit", type=int, default=12, help="cases per category, spread evenly (0: all)")
    p.add_argument("--offset", type=int, default=0, help="shift the spread cases by this many entries "
                   "(another slice of the same size: tune on one, check on another)")
    p.add_argument("--categories", default=None, help=f"default: {','.join(DEV)} (with --held-out: "
                   f"{','.join(HELD_OUT)})")
    p.add_argument("--held-out", action="store_true", help="allow the held-out categories (acceptance only)")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--max-tokens", type=int, default=256, help="the baselines' generation bound")
    p.add_argument("--json", help="write every reply and verdict to this file")
    p.add_argument("--replay", help="a --json file of an earlier run: read its recorded default-variant replies "
                   "with this code instead of asking the server (same --limit/--offset/--categories; no server)")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    args.categories = [c for c in (args.categories or ",".join(HELD_OUT if args.held_out else DEV)).split(",") if c]
    args.variants = [v for v in args.variants.split(",") if v]
    out = asyncio.run(run(args))
    print(table(out["results"], args.categories))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
