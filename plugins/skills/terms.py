"""The words a skill is found by, and the words of a request.

Tokenizing is the react plugin's tool-retrieval tokenizer (lower case,
camelCase/snake_case split, stop words dropped, plurals folded); numbers are
dropped too, since they are particular to one request ("3 apples"), not to
the kind of task. A skill's match terms are its name, description, when to
use, examples and tool names; its instructions are left out, so long
instructions do not make a skill match everything.
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
