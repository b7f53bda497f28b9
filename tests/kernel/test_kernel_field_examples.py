"""``Field.examples``: shown in the JSON schema and the prompt description, used by the offline test model."""

import zagent
from zagent.agentkit import fields as zfields

FIELDS = [{"name": "city", "description": "a city", "examples": ["Oslo", "Lima"]}]


def test_examples_are_in_the_json_schema():
    """A field's examples appear as JSON-schema ``examples``."""
    assert zfields.json_schema(FIELDS)["properties"]["city"]["examples"] == ["Oslo", "Lima"]


def test_first_example_is_in_the_prompt_description():
    """The prompt's field description shows the first example."""
    assert '"example": "Oslo"' in zfields.describe(FIELDS)


def test_offline_test_model_answers_with_the_first_example():
    """The offline test model fills a field with its first example rather than a made-up value."""
    k = zagent.Kernel(entry_points=False, plugins=["zagent.plugins.offline", "zagent.plugins.parsers",
                                                    "zagent.plugins.actions"])
    agent = k.agent({"name": "where", "prompt": "Name a city.", "outputs": FIELDS, "parse_mode": "json",
                     "llm": "test:offline"})
    assert agent().city == "Oslo"
