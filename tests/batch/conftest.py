"""Fixtures for batch tests: a kernel with the plugins an agent batch needs, input files, a shipping executor."""

import json

import pytest
from zagent import Kernel

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.memory",
           "zagent.plugins.manager", "zagent.plugins.workflow", "zagent.plugins.batch"]

QA = {"name": "Answerer", "prompt": "Answer: {question}",
      "inputs": [{"name": "question", "type": "string"}], "outputs": [{"name": "answer", "type": "string"}],
      "parse_mode": "title"}


@pytest.fixture
def kernel():
    """A fresh isolated kernel with the offline model, parsers, actions, manager and workflow."""
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    yield k
    k.close()


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
