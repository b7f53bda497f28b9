"""How often `zagent run examples/qa_agent.json` gives a real answer from a real small model.

    python bench/realmodel_success.py --url http://127.0.0.1:PORT/v1 --model qwen2.5-coder-0.5b \
        [--runs 10] [--mode title] [--python /path/to/other/venv/bin/python]

Runs the README quick start (the agent file as shipped, only ``parse_mode``
changed by ``--mode``, the server's default sampling, as a new user would)
over ``--runs`` questions, each in a fresh ``zagent`` process, and prints one
line per run and the totals: ``answer`` (exit 0 and a real value), ``placeholder``
(exit 0 but the value echoes the format's placeholder: a wrong answer shown as
right), ``error`` (exit 1 with an error message). ``--python`` runs another
install of zagent (e.g. a checkout of an older commit) for before/after figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = [
    "What is the capital of France?", "Why is the sky blue?", "What does a CPU do?",
    "What is photosynthesis?", "Who wrote Hamlet?", "What is the boiling point of water at sea level?",
    "What is a prime number?", "Why do we have seasons?", "What is HTTP?", "What is the largest planet?",
    "What is an API?", "How does a vaccine work?",
]
# the format's placeholder, verbatim or with its parts filled in ("Paris, required: the capital")
PLACEHOLDER = re.compile(r"(string|integer|number|boolean|array|object)\b[^\n]*,\s*(required|optional)\b"
                         r"|^\s*<?[^,\n<>]{1,60},\s*(required|optional)\b", re.I)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--mode", default="title", choices=["title", "xml", "json", "str"])
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--max-tokens", type=int, default=0, help="add llm_config max_tokens (0: as shipped)")
    args = ap.parse_args()
    spec = json.loads((ROOT / "examples" / "qa_agent.json").read_text())
    spec["parse_mode"] = args.mode
    if args.max_tokens:
        spec["llm_config"] = {"max_tokens": args.max_tokens}
    agent = Path(tempfile.mkdtemp()) / "qa_agent.json"
    agent.write_text(json.dumps(spec))
    env = {**os.environ, "ZAGENT_MODEL": f"openai:{args.model}", "OPENAI_BASE_URL": args.url,
           "OPENAI_API_KEY": "sk-local", "ZAGENT_TIMEOUT": "300"}
    counts = {"answer": 0, "placeholder": 0, "error": 0}
    seconds = []
    for i in range(args.runs):
        q = QUESTIONS[i % len(QUESTIONS)]
        started = time.monotonic()
        done = subprocess.run([args.python, "-m", "zagent.plugins.cli", "run", str(agent), "--input",
                               f"question={q}", "--json", "--quiet"], capture_output=True, text=True, env=env,
                              timeout=900)
        seconds.append(time.monotonic() - started)
        if done.returncode == 0:
            try:
                answer = json.loads(done.stdout).get("answer", "")
            except ValueError:
                answer = done.stdout
            kind = "placeholder" if PLACEHOLDER.search(str(answer)) or not str(answer).strip() else "answer"
            shown = str(answer)
        else:
            kind, shown = "error", done.stderr.strip().splitlines()[-1:] or ["?"]
            shown = " | ".join(done.stderr.strip().splitlines()[:2])
        counts[kind] += 1
        print(f"{i + 1:2d} {kind:11s} {seconds[-1]:6.1f} s  {q[:30]!r}: {' '.join(shown.split())[:110]!r}", flush=True)
    seconds.sort()
    print(f"mode={args.mode} runs={args.runs} answer={counts['answer']} placeholder={counts['placeholder']} "
          f"error={counts['error']} median={seconds[len(seconds) // 2]:.1f} s python={args.python}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
