"""The words a skill is matched by and the words of a request: ``words(text)`` (the react plugin's tool-retrieval
tokenizer, numbers dropped), ``skill_terms(skill)`` (from its name, description, when to use, examples and tool
names, not its instructions; at most ``MAX_MATCH_TERMS``), ``focus`` (less for a skill of many words) and
``skill_text(skill)``, what an embedder sees.
"""

from __future__ import annotations

from .skill import Skill

#: the most words of a skill matched against a request (and kept in the folder's index)
MAX_MATCH_TERMS = 200
#: a skill of more words than this scores in proportion (``focus``)
FOCUSED_TERMS = 64


def words(text: str) -> list[str]:
    """Match words of free text, in order, repeats kept."""
    from zagent.plugins.react.retrieval import tokenize

    return [w for w in tokenize(text or "") if not w.isdigit()]


def skill_terms(skill: Skill) -> list[str]:
    """The distinct match terms of ``skill``: its first ``MAX_MATCH_TERMS`` (a description stuffed with every word
    is matched on those only)."""
    return all_terms(skill)[:MAX_MATCH_TERMS]


def all_terms(skill: Skill) -> list[str]:
    """Every distinct word of ``skill``'s name, description, when to use, examples and tool names."""
    text = " ".join([skill.name.replace("-", " "), skill.description, skill.when_to_use,
                     *skill.examples, *(t.replace(".", " ") for t in skill.tool_sequence)])
    return list(dict.fromkeys(words(text)))


def focus(skill: Skill) -> float:
    """What a keyword score of ``skill`` is multiplied by: 1 for a skill of at most ``FOCUSED_TERMS`` words, less in
    proportion for more, so one stuffed with the words of every topic does not fit every request."""
    return min(1.0, FOCUSED_TERMS / max(1, len(all_terms(skill))))


def skill_text(skill: Skill) -> str:
    """What an embedder sees of a skill."""
    return "\n".join(filter(None, [skill.name, skill.description, skill.when_to_use, *skill.examples]))
