"""The shape a model's sub-task must have before it becomes a workflow node (``shape_problems``): names of at most
``MAX_NAME`` characters, not ``__``-led, with no control, bidi or invisible character, quote, backslash or brace (printed,
logged and put in the next model's prompts); texts (descriptions, a value's examples) of at most ``MAX_TEXT``; at most
``MAX_VALUES`` inputs and as many outputs; values nested at most ``MAX_VALUE_DEPTH`` levels, ``MAX_FIELDS`` fields."""

from __future__ import annotations

from typing import Any

from zagent.speckit.sizes import MAX_NAME

#: the most inputs, and the most outputs, one sub-task may have (each is a prompt section its agents fill)
MAX_VALUES = 50
#: how deep a value's ``fields``/``items`` may nest, and how many fields a sub-task's values hold in all
MAX_VALUE_DEPTH = 4
MAX_FIELDS = 200
#: the most characters of a sub-task's description or reason, a value's description or its examples and default
#: as JSON: the plan is shown again in every later prompt (each review, the agent generator's call for every node)
MAX_TEXT = 2000
#: the most characters of a generated agent's prompt (sent on every call of it, in every run)
MAX_PROMPT = 20_000
_BAD = frozenset('"\\{}')


def name_problem(name: Any, what: str) -> str | None:
    """Why ``name`` cannot name ``what`` (a sub-task or a value), or ``None``."""
    if not isinstance(name, str) or not name.strip():
        return f"{what} has an empty name; give it a snake_case name"
    if len(name) > MAX_NAME:
        return f"{what} has a name of {len(name):,} characters, more than {MAX_NAME}; give it a short snake_case name"
    if name.startswith("__"):  # Python's own attribute names: a value is a struct field, a placeholder
        return f"{what} {name!r} has a name starting with '__', which Python keeps for itself; use a snake_case name"
    if not name.isprintable() or _BAD.intersection(name):
        return (f"{what} {name.encode('unicode_escape').decode('ascii')!r} has a name with a control, invisible or "
                "bidi character, a quote, a backslash or a brace; use letters, digits and '_' (snake_case)")
    return None


def text_problem(text: Any, what: str) -> str | None:
    """Why ``text`` is too long for ``what`` (``MAX_TEXT``), or ``None``."""
    if isinstance(text, str) and len(text) > MAX_TEXT:
        return (f"{what} has {len(text):,} characters, more than {MAX_TEXT:,}; say it in a few sentences (every "
                "later prompt repeats it)")
    return None


def _value_text(field: Any) -> str:
    import msgspec

    extra = {k: getattr(field, k) for k in ("examples", "default") if getattr(field, k, None)}
    text: str = field.description
    return text + (msgspec.json.encode(extra, enc_hook=repr).decode() if extra else "")


def shape_problems(task: Any) -> list[str]:
    """Every way ``task`` (a ``SubTask``) breaks the shape rules (see the module docstring)."""
    problem = name_problem(task.name, "a sub-task")
    if problem is not None:
        return [problem]  # the name is quoted in every other sentence
    out: list[str] = [p for p in (text_problem(task.description, f"the description of sub-task {task.name!r}"),
                                  text_problem(task.reason, f"the reason of sub-task {task.name!r}")) if p]
    for key in ("inputs", "outputs"):
        fields = getattr(task, key)
        if len(fields) > MAX_VALUES:
            out.append(f"sub-task {task.name!r} has {len(fields):,} {key}, more than {MAX_VALUES} values; "
                       "split it into several sub-tasks")
    if out:
        return out
    stack = [(f, 1) for f in [*task.inputs, *task.outputs]]
    count = 0
    while stack:
        field, depth = stack.pop()
        count += 1
        problem = name_problem(field.name, f"a value of sub-task {task.name!r}") or \
            text_problem(_value_text(field), f"the description and examples of value {field.name!r} of sub-task "
                         f"{task.name!r}")
        if problem is not None:
            return [problem]
        if depth > MAX_VALUE_DEPTH or count > MAX_FIELDS:
            return [f"the values of sub-task {task.name!r} nest more than {MAX_VALUE_DEPTH} levels or hold more than "
                    f"{MAX_FIELDS} fields; keep values flat (a text, a number, a list of texts)"]
        stack += [(f, depth + 1) for f in field.fields]
        if field.items is not None:
            stack.append((field.items, depth + 1))
    return out
