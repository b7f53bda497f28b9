"""The same tool with a wrong attribute of its deps: ``mypy --strict`` must reject it."""

from dataclasses import dataclass

from zagent import RunContext


@dataclass
class MyDeps:
    db: str


def find_user(user_id: str, ctx: RunContext[MyDeps]) -> str:
    """Find a user's name by id."""
    return ctx.deps.database + user_id
