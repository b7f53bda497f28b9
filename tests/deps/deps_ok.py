"""A typed tool reading its app's dependencies (checked with ``mypy --strict`` by test_deps_mypy.py)."""

from dataclasses import dataclass

from zagent import RunContext


@dataclass
class Database:
    rows: dict[str, str]

    def lookup(self, key: str) -> str:
        return self.rows.get(key, "unknown")


@dataclass
class MyDeps:
    db: Database


def find_user(user_id: str, ctx: RunContext[MyDeps]) -> str:
    """Find a user's name by id."""
    name: str = ctx.deps.db.lookup(user_id)
    return name
