"""Fixtures for the skills tests: a kernel with a skills folder in tmp_path, a fake clock, shop tools,
and scripted "models" whose behaviour depends on what the request contains."""

import json
import re

import pytest
from zagent import Kernel

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.memory", "zagent.plugins.skills"]
DAY = 86400.0
PRICES = {"apple": 0.5, "pear": 0.75, "banana": 0.25, "cherry": 0.1}
SKILL_INSTRUCTIONS = ("Look up the price of every item in one step (one lookup_price call per item, all at once), "
                      "then call add once with all the subtotals, then answer with the total.")


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, now=1_800_000_000.0):
        self.now = now

    def __call__(self):
        return self.now

    def advance(self, days):
        self.now += days * DAY


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def folder(tmp_path):
    return tmp_path / "skills"


def make_kernel(folder, clock, **skills_config):
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True,
               config={"skills": {"folder": str(folder), "clock": clock, **skills_config}})

    def lookup_price(item: str) -> float:
        """Price of one unit of an item."""
        return PRICES[item.rstrip("s")]

    def add(numbers: list[float]) -> float:
        """Add numbers."""
        return round(sum(numbers), 2)

    k.add_tool(lookup_price)
    k.add_tool(add)
    return k


@pytest.fixture
def kernel(folder, clock):
    """A fresh kernel; skills live in tmp_path/skills, time comes from the fake clock."""
    k = make_kernel(folder, clock)
    yield k
    k.close()


# -- scripted behaviour ------------------------------------------------------------------------


def items_of(text):
    """[(count, item)] of a request like 'What do 3 apples and 4 pears cost?'."""
    return [(int(n), w.rstrip("s")) for n, w in re.findall(r"(\d+) ([a-z]+)", text)]


def has_skill(request):
    return any(m.role == "system" and 'Skill "' in (m.content or "") and "lookup_price" in (m.content or "")
               for m in request.messages)


def shopper(request):
    """A model that totals prices: one lookup per step without a skill, all lookups at once with it."""
    user = [m.content for m in request.messages if m.role == "user"][-1]
    items = items_of(user)
    results = [m for m in request.messages if m.role == "tool"]
    lookups = [r for r in results if r.name == "lookup_price"]
    if len(lookups) < len(items):
        todo = items[len(lookups):] if has_skill(request) else items[len(lookups):len(lookups) + 1]
        return {"tool_calls": [{"name": "lookup_price", "arguments": {"item": item}} for _n, item in todo]}
    if not any(r.name == "add" for r in results):
        prices = [float(r.content) for r in lookups]
        return {"tool_calls": [{"name": "add", "arguments": {
            "numbers": [n * p for (n, _i), p in zip(items, prices)]}}]}
    return f"The total is {results[-1].content}."


def curator_model(good=True, name="price-totals", instructions=SKILL_INSTRUCTIONS):
    """A reviewing model: judges runs (goal reached = ``good``) and writes the skill."""
    def reply(request):
        prompt = request.messages[-1].content
        if "review a recorded run" in prompt:
            return json.dumps({"goal_reached": good, "steps": 3, "errors": [], "reusable": True,
                               "summary": "totalled the prices"})
        if "Write a reusable skill" in prompt:
            return json.dumps({"name": name, "description": "Total price of several items",
                               "when_to_use": "The user asks what several items cost together",
                               "instructions": instructions, "tool_sequence": ["lookup_price", "add"]})
        raise AssertionError(f"unexpected prompt: {prompt[:80]}")
    return reply


def trajectory(run_id="run-1", request="What do 3 apples and 4 pears cost?", status="completed", final="3.5"):
    """A recorded trajectory line in the react plugin's format."""
    return {"id": run_id, "agent": "shop", "status": status, "final": final, "questions": [],
            "conversations": [{"from": "system", "value": "You are helpful."}, {"from": "human", "value": request},
                              {"from": "function_call", "value": '{"name": "lookup_price", "arguments": {"item": "apple"}}'},
                              {"from": "observation", "value": "0.5"}, {"from": "gpt", "value": final or ""}],
            "steps": [{"step": 1, "action": "use_tool", "tool": "lookup_price"},
                      {"step": 2, "action": "use_tool", "tool": "lookup_price"},
                      {"step": 3, "action": "use_tool", "tool": "add"},
                      {"step": 4, "action": "direct_response"}]}


def price_skill(**overrides):
    data = {"name": "price-totals", "description": "Total price of several items",
            "when_to_use": "The user asks what several items cost together",
            "instructions": SKILL_INSTRUCTIONS, "tool_sequence": ["lookup_price", "add"],
            "examples": ["What do 3 apples and 4 pears cost?"]}
    data.update(overrides)
    return data
