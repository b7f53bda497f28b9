"""The words a skill is matched by and the words of a request: ``words(text)`` (the react plugin's tool-retrieval
tokenizer, numbers dropped), ``skill_terms(skill)`` (from its name, description, when to use, examples and tool
names, not its instructions) and ``skill_text(skill)``, what an embedder sees.
"""

from __future__ import annotations

from .skill import Skill


def words(text: str) -> list[str]:
    """Match words of free text, in order, repeats kept."""
    from zagent.plugins.react.retrieval import tokenize

    return [w for w in tokenize(text or "") if not w.isdigit()]


def skill_terms(skill: Skill) -> list[str]:
    """The distinct match terms of ``skill``."""
    text = " ".join([skill.name.replace("-", " "), skill.description, skill.when_to_use,
                     *skill.examples, *(t.replace(".", " ") for t in skill.tool_sequence)])
    return list(dict.fromkeys(words(text)))


def skill_text(skill: Skill) -> str:
    """What an embedder sees of a skill."""
    return "\n".join(filter(None, [skill.name, skill.description, skill.when_to_use, *skill.examples]))
